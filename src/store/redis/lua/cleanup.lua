-- ARGV: prefix, finished before ('' for any time), limit, dry run (0/1), queue count, queues…, status
-- count, statuses…
-- Deletes (or counts) up to `limit` terminal jobs matching. Returns how many.
local before, limit, dry = ARGV[2], tonumber(ARGV[3]), ARGV[4] == '1'
local queues, i = take(6, tonumber(ARGV[5]))
local statuses = take(i + 1, tonumber(ARGV[i]))
if #statuses == 0 then
  statuses = { 'succeeded', 'dead', 'cancelled', 'discarded' }
end
local upper = '+inf'
if before ~= '' then
  upper = '(' .. before
end
local count = 0
for _, q in ipairs(queues_or_all(queues)) do
  for _, s in ipairs(statuses) do
    if count >= limit then
      return count
    end
    local dk = qkey(q, 'done:' .. s)
    local ids = redis.call('ZRANGEBYSCORE', dk, '-inf', upper, 'LIMIT', 0, limit - count)
    count = count + #ids
    if not dry then
      for _, id in ipairs(ids) do
        redis.call('DEL', jkey(id))
        redis.call('ZREM', dk, id)
      end
    end
  end
  -- A queue left without jobs is forgotten (the next enqueue brings it back).
  if not dry then
    local prios = qkey(q, 'prios')
    for _, pr in ipairs(redis.call('ZRANGE', prios, 0, -1)) do
      if redis.call('EXISTS', pend_key(q, pr)) == 0 then
        redis.call('ZREM', prios, pr)
      end
    end
    local left = redis.call('EXISTS', prios, qkey(q, 'run'), qkey(q, 'wait'), qkey(q, 'done:succeeded'),
      qkey(q, 'done:dead'), qkey(q, 'done:cancelled'), qkey(q, 'done:discarded'))
    if left == 0 then
      redis.call('SREM', P .. 'queues', q)
    end
  end
end
return count
