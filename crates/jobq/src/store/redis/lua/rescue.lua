-- KEYS: the queue's prefix. ARGV: stale_before, now key, now, limit.
-- Takes back running jobs whose heartbeat is older than stale_before: to pending at now, or to dead
-- when the lost attempt was the last. Returns per job: id, type, attempt, new status.
-- A job rescued dead has ended: the jobs that wait for it are resolved in this script
-- (`release_all`); one rescued back to pending keeps them waiting.
local Q, stale, nowkey, now, limit = KEYS[1], ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local out = {}
local ended = {}
local woken = false
local ids = redis.call('ZRANGEBYSCORE', Q .. 'run', '-inf', '(' .. stale, 'LIMIT', 0, limit)
for _, id in ipairs(ids) do
  local k = jkey(Q, id)
  local h = redis.call('HMGET', k, 'a', 'ma', 'pr', 't', 'u', 'sl', 'dn')
  redis.call('ZREM', Q .. 'run', id)
  free_slots(Q, id, h[1], h[6])
  redis.call('HSET', k, 'w', '')
  push_error(k, error_entry(h[1], now, 'worker lost'))
  local status
  if tonumber(h[1]) >= tonumber(h[2] or DEFAULT_MAX_ATTEMPTS) then
    status = 'dead'
    redis.call('HSET', k, 's', status, 'f', now)
    redis.call('ZADD', Q .. 'done:dead', now, id)
    free_unique(Q, h[5], id)
    if h[7] then
      ended[#ended + 1] = { Q, id, status }
    end
  else
    status = 'pending'
    redis.call('HSET', k, 's', status, 'r', nowkey)
    index_pending(Q, id, h[3], nowkey)
    woken = true
  end
  out[#out + 1] = { id, h[4], h[1], status }
end
release_slots()
if woken then
  wake(Q)
end
release_all(ended, now)
return out
