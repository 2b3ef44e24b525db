-- ARGV: prefix, now key, queue count, queues…
-- Per queue with jobs: name, ready, scheduled, running, waiting, succeeded, dead, cancelled, discarded,
-- run_at key of the oldest ready job ('' when none).
local nowkey = ARGV[2]
local queues = take(4, tonumber(ARGV[3]))
local upper = '(' .. nowkey .. ';'
local out = {}
for _, q in ipairs(queues_or_all(queues)) do
  do
    local ready, pending, oldest = 0, 0, ''
    for _, pr in ipairs(redis.call('ZRANGE', qkey(q, 'prios'), 0, -1)) do
      local pk = pend_key(q, pr)
      pending = pending + redis.call('ZCARD', pk)
      ready = ready + redis.call('ZLEXCOUNT', pk, '-', upper)
      local first = redis.call('ZRANGEBYLEX', pk, '-', upper, 'LIMIT', 0, 1)[1]
      if first then
        local r = string.sub(first, 1, 16)
        if oldest == '' or r < oldest then
          oldest = r
        end
      end
    end
    local row = {
      q, ready, pending - ready,
      redis.call('ZCARD', qkey(q, 'run')),
      redis.call('ZCARD', qkey(q, 'wait')),
      redis.call('ZCARD', qkey(q, 'done:succeeded')),
      redis.call('ZCARD', qkey(q, 'done:dead')),
      redis.call('ZCARD', qkey(q, 'done:cancelled')),
      redis.call('ZCARD', qkey(q, 'done:discarded')),
      oldest,
    }
    local total = 0
    for n = 2, 9 do
      total = total + row[n]
    end
    -- Only queues that have jobs.
    if total > 0 then
      out[#out + 1] = row
    end
  end
end
return out
