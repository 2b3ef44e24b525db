-- KEYS: the queue's prefix. ARGV: now, count, then per beat: id, attempt, worker, progress JSON ('' for
-- none). Returns per beat: 0 held, 1 cancelled, 2 lost, 3 held but asked to stop (a newer job of its
-- unique key, `cancel-running`, set `cr` and still waits for it: `dn` counts it).
local Q, now, n = KEYS[1], ARGV[1], tonumber(ARGV[2])
local out = {}
local i = 3
for _ = 1, n do
  local id, a, w, pg = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  i = i + 4
  local k = jkey(Q, id)
  local h = redis.call('HMGET', k, 's', 'a', 'w', 'cr', 'dn')
  if h[1] == 'running' and h[2] == a and h[3] == w then
    redis.call('HSET', k, 'hb', now)
    if pg ~= '' then
      redis.call('HSET', k, 'pg', pg)
    end
    redis.call('ZADD', Q .. 'run', 'XX', now, id)
    if h[4] and h[5] then
      out[#out + 1] = 3
    else
      out[#out + 1] = 0
    end
  elseif h[1] == 'cancelled' and h[2] == a and h[3] == w then
    out[#out + 1] = 1
  else
    out[#out + 1] = 2
  end
end
return out
