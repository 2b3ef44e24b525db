-- ARGV: prefix, count, then per lease: id, attempt, worker. Puts held jobs back to pending without
-- using up an attempt. Returns per lease 1 when applied, 0 when stale.
local n = tonumber(ARGV[2])
local out = {}
local i = 3
for _ = 1, n do
  local id, a, w = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  i = i + 3
  local k = jkey(id)
  local h = redis.call('HMGET', k, 's', 'a', 'w', 'q', 'pr', 'r')
  if h[1] == 'running' and h[2] == a and h[3] == w then
    redis.call('ZREM', qkey(h[4], 'run'), id)
    redis.call('HSET', k, 's', 'pending', 'a', tonumber(h[2]) - 1, 'w', '', 'pg', '')
    index_pending(id, h[4], h[5], h[6])
    wake(h[4])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
