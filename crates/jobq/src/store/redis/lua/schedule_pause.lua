-- KEYS: the queue's prefix. ARGV: schedule name, '1' to pause or '0' to resume, now (Unix ms), '1' to
-- skip the ticks missed while paused.
-- Records the schedule first if it has no record (not before now), then sets its paused flag;
-- resuming with skip moves `not before` to now (never backwards). See `schedules.lua` for the record.
local sk = KEYS[1] .. 'sched:' .. ARGV[1]
local now = tonumber(ARGV[3])
redis.call('HSETNX', sk, 'nb', now)
redis.call('HSET', sk, 'p', ARGV[2])
if ARGV[2] == '0' and ARGV[4] == '1' and tonumber(redis.call('HGET', sk, 'nb')) < now then
  redis.call('HSET', sk, 'nb', now)
end
return 1
