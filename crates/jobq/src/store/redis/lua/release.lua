-- KEYS: the queue's prefix. ARGV: count, then per lease: id, attempt, worker. Puts held jobs back to
-- pending without using up an attempt. Returns per lease 1 when applied, 0 when stale.
local Q, n = KEYS[1], tonumber(ARGV[1])
local out = {}
local woken = false
local i = 2
for _ = 1, n do
  local id, a, w = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  i = i + 3
  local k = jkey(Q, id)
  local h = redis.call('HMGET', k, 's', 'a', 'w', 'pr', 'r', 'sl')
  if h[1] == 'running' and h[2] == a and h[3] == w then
    redis.call('ZREM', Q .. 'run', id)
    free_slots(Q, id, a, h[6])
    redis.call('HSET', k, 's', 'pending', 'a', tonumber(h[2]) - 1, 'w', '', 'pg', '')
    index_pending(Q, id, h[4], h[5])
    woken = true
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
release_slots()
if woken then
  wake(Q)
end
return out
