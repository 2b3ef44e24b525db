-- KEYS: the `blocks` hash. ARGV: field (`<type>\n*` or `<type>\n=<partition>`), until (ms), now (ms).
-- Records a block of back-pressure, keeping a later one already there, and forgets the blocks that
-- ran out before now: one step, so two workers reporting at once keep the later of their two.
local key, field, until_ms, now = KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local old = tonumber(redis.call('HGET', key, field) or '0')
if until_ms > old then
  redis.call('HSET', key, field, until_ms)
end
local all = redis.call('HGETALL', key)
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) <= now then
    redis.call('HDEL', key, all[i])
  end
end
return 1
