-- ARGV: prefix, stale_before, now key, now, limit.
-- Takes back running jobs whose heartbeat is older than stale_before: to pending at now, or to dead
-- when the lost attempt was the last. Returns per job: id, type, attempt, new status.
local stale, nowkey, now, limit = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local out = {}
local taken = 0
for _, q in ipairs(redis.call('SMEMBERS', P .. 'queues')) do
  if taken >= limit then
    break
  end
  local ids = redis.call('ZRANGEBYSCORE', qkey(q, 'run'), '-inf', '(' .. stale, 'LIMIT', 0, limit - taken)
  for _, id in ipairs(ids) do
    local k = jkey(id)
    local h = redis.call('HMGET', k, 'a', 'ma', 'pr', 't', 'u')
    redis.call('ZREM', qkey(q, 'run'), id)
    redis.call('HSET', k, 'w', '')
    push_error(k, error_entry(h[1], now, 'worker lost'))
    local status
    if tonumber(h[1]) >= tonumber(h[2]) then
      status = 'dead'
      redis.call('HSET', k, 's', status, 'f', now)
      redis.call('ZADD', qkey(q, 'done:dead'), now, id)
      free_unique(q, h[5], id)
    else
      status = 'pending'
      redis.call('HSET', k, 's', status, 'r', nowkey)
      index_pending(id, q, h[3], nowkey)
      wake(q)
    end
    taken = taken + 1
    out[#out + 1] = { id, h[4], h[1], status }
  end
end
return out
