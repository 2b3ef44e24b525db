-- ARGV: prefix, now, count, then per beat: id, attempt, worker, progress JSON ('' for none).
-- Returns per beat: 0 held, 1 cancelled, 2 lost.
local now, n = ARGV[2], tonumber(ARGV[3])
local out = {}
local i = 4
for _ = 1, n do
  local id, a, w, pg = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  i = i + 4
  local k = jkey(id)
  local h = redis.call('HMGET', k, 's', 'a', 'w', 'q')
  if h[1] == 'running' and h[2] == a and h[3] == w then
    redis.call('HSET', k, 'hb', now)
    if pg ~= '' then
      redis.call('HSET', k, 'pg', pg)
    end
    redis.call('ZADD', qkey(h[4], 'run'), 'XX', now, id)
    out[#out + 1] = 0
  elseif h[1] == 'cancelled' and h[2] == a and h[3] == w then
    out[#out + 1] = 1
  else
    out[#out + 1] = 2
  end
end
return out
