-- KEYS: the queue's prefix. ARGV: now key, count, ids…
-- Puts finished jobs (succeeded, dead, cancelled, discarded) back to pending at now, one after another:
-- attempt 0, error history kept, the last run forgotten (result, start, finish, worker, heartbeat,
-- progress). A job whose unique key a live job holds stays as it is. Returns two values per id: 'p' and
-- the job as it is now, packed (see `packed`); 'x' and its status (not finished); 'k' and the id of the
-- live job holding its key; or 'n' and '' (no such job).
local Q, nowkey, n = KEYS[1], ARGV[1], tonumber(ARGV[2])
local TERMINAL = { succeeded = true, dead = true, cancelled = true, discarded = true, expired = true }
local queue = queue_of(Q)
local out = {}
local ready = false
for j = 1, n do
  local id = ARGV[2 + j]
  local k = jkey(Q, id)
  local h = redis.call('HMGET', k, 's', 'pr', 'u', 't')
  local s = status_of(h[1])
  local holder = false
  if h[3] and TERMINAL[s] then
    holder = redis.call('HGET', Q .. 'uniq', h[3])
  end
  if not h[4] then
    out[#out + 1] = 'n'
    out[#out + 1] = ''
  elseif not TERMINAL[s] then
    out[#out + 1] = 'x'
    out[#out + 1] = s
  elseif holder then
    out[#out + 1] = 'k'
    out[#out + 1] = holder
  else
    redis.call('ZREM', Q .. 'done:' .. s, id)
    if h[3] then
      redis.call('HSET', Q .. 'uniq', h[3], id)
    end
    redis.call('HSET', k, 's', 'pending', 'a', 0, 'r', nowkey, 'w', '')
    redis.call('HDEL', k, 'f', 'res', 'st', 'hb', 'pg', 'sn', 'xa')
    index_pending(Q, id, h[2], nowkey)
    ready = true
    out[#out + 1] = 'p'
    out[#out + 1] = packed(redis.call('HGETALL', k), queue, id)
  end
end
if ready then
  wake(Q)
end
return out
