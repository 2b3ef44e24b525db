-- KEYS: the queue's prefix. ARGV: count, then per schedule: name, not before, last tick ('' for none),
-- '1' when paused else '0', last job ('' for none).
-- Writes each schedule's record as given, replacing what the queue holds for it (see `schedules.lua`
-- for the record), as `jobq copy` brings a store's schedules along with its jobs.
local Q, n = KEYS[1], tonumber(ARGV[1])
local i = 2
for _ = 1, n do
  local sk = Q .. 'sched:' .. ARGV[i]
  redis.call('DEL', sk)
  redis.call('HSET', sk, 'nb', ARGV[i + 1], 'p', ARGV[i + 3])
  if ARGV[i + 2] ~= '' then
    redis.call('HSET', sk, 'lt', ARGV[i + 2])
  end
  if ARGV[i + 4] ~= '' then
    redis.call('HSET', sk, 'lj', ARGV[i + 4])
  end
  i = i + 5
end
return n
