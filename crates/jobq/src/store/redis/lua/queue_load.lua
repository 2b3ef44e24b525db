-- KEYS: the queue's prefix. ARGV: since (ms), now (ms), since as a run key, now as a run key.
-- The queue's load over [since, now] (see `Store::queue_load`): { arrived, finished, busy ms, ready,
-- running }. Arrived: jobs whose run_at falls in the window, whatever became of them: pending ones
-- are counted from the pending sets' order (run key first) without reading them; a running job is
-- read; a waiting or finished one that came due in the window was parked or finished at or after
-- `since`, so only that end of its index is read. Finished: runs that ended in the window
-- (succeeded, dead or discarded with a start time), whose hashes are read anyway. One script, so
-- the counts are of one moment; it only reads.
local Q = KEYS[1]
local now = tonumber(ARGV[2])
local since, sincekey, nowkey = ARGV[1], ARGV[3], ARGV[4]
local upper = '(' .. nowkey .. ';'
local arrived, finished, busy, ready = 0, 0, 0, 0

local function came_due(r)
  return r and r >= sincekey and r <= nowkey
end

for _, pr in ipairs(redis.call('ZRANGE', Q .. 'prios', 0, -1)) do
  local pk = pend_key(Q, pr)
  ready = ready + redis.call('ZLEXCOUNT', pk, '-', upper)
  arrived = arrived + redis.call('ZLEXCOUNT', pk, '[' .. sincekey, upper)
end

local running = redis.call('ZRANGE', Q .. 'run', 0, -1)
for _, id in ipairs(running) do
  if came_due(redis.call('HGET', jkey(Q, id), 'r')) then
    arrived = arrived + 1
  end
end
for _, id in ipairs(redis.call('ZRANGE', Q .. 'wait', since, '+inf', 'BYSCORE')) do
  if came_due(redis.call('HGET', jkey(Q, id), 'r')) then
    arrived = arrived + 1
  end
end

for _, s in ipairs({ 'succeeded', 'dead', 'discarded', 'cancelled', 'expired' }) do
  for _, id in ipairs(redis.call('ZRANGE', Q .. 'done:' .. s, since, '+inf', 'BYSCORE')) do
    local h = redis.call('HMGET', jkey(Q, id), 'r', 'st', 'f')
    if came_due(h[1]) then
      arrived = arrived + 1
    end
    local st, f = tonumber(h[2]), tonumber(h[3])
    if s ~= 'cancelled' and s ~= 'expired' and st and f and f <= now then
      finished = finished + 1
      busy = busy + (f - st)
    end
  end
end

return { arrived, finished, busy, ready, #running }
