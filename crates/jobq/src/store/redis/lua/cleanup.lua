-- KEYS: the queue's prefix. ARGV: finished before ('' for any time), limit, dry run (0/1), status
-- count, statuses…
-- Deletes (or counts) up to `limit` terminal jobs matching, with their dependency edges (`after:<id>`,
-- `dependents:<id>`). Returns how many, and 1 when the queue is left without any job (its last keys,
-- the wake-up stream and a cluster's registration marker among them, are then deleted too, and the
-- caller takes it out of the queue registry), else 0.
local Q, before, limit, dry = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1'
local statuses = take(5, tonumber(ARGV[4]))
if #statuses == 0 then
  statuses = { 'succeeded', 'dead', 'cancelled', 'discarded' }
end
local upper = '+inf'
if before ~= '' then
  upper = '(' .. before
end
local count = 0
for _, s in ipairs(statuses) do
  if count >= limit then
    break
  end
  local dk = Q .. 'done:' .. s
  local ids = redis.call('ZRANGEBYSCORE', dk, '-inf', upper, 'LIMIT', 0, limit - count)
  count = count + #ids
  if not dry then
    for _, id in ipairs(ids) do
      redis.call('DEL', jkey(Q, id), after_key(Q, id), dependents_key(Q, id))
    end
    for n = 1, #ids, 1000 do
      local some = { unpack(ids, n, math.min(n + 999, #ids)) }
      redis.call('ZREM', dk, unpack(some))
      redis.call('ZREM', made_key(Q), unpack(some))
    end
  end
end
if dry then
  return { count, 0 }
end
local prios = Q .. 'prios'
for _, pr in ipairs(redis.call('ZRANGE', prios, 0, -1)) do
  if redis.call('EXISTS', pend_key(Q, pr)) == 0 then
    redis.call('ZREM', prios, pr)
  end
end
local left = redis.call('EXISTS', prios, blocked_key(Q), Q .. 'run', Q .. 'wait', Q .. 'done:succeeded',
  Q .. 'done:dead', Q .. 'done:cancelled', Q .. 'done:discarded')
if left > 0 then
  return { count, 0 }
end
redis.call('DEL', Q .. 'wake', Q .. 'uniq', Q .. 'listed', made_key(Q))
return { count, 1 }
