-- KEYS: an inbox's processing registry, one processing list, the inbox's rejected list (all in the
-- inbox's slot). ARGV: rejected item records…
-- Ends an ingest whose jobs are enqueued: files the items that were not jobs and forgets the list.
redis.call('DEL', KEYS[2])
redis.call('HDEL', KEYS[1], KEYS[2])
if #ARGV > 0 then
  redis.call('RPUSH', KEYS[3], unpack(ARGV))
end
return 0
