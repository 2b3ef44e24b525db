-- KEYS: the queue's prefix. ARGV: now key.
-- blocked, ready, scheduled, running, waiting, succeeded, dead, cancelled, discarded, expired, and the run_at
-- key of the oldest ready job ('' when none).
local Q, nowkey = KEYS[1], ARGV[1]
local upper = '(' .. nowkey .. ';'
local ready, pending, oldest = 0, 0, ''
for _, pr in ipairs(redis.call('ZRANGE', Q .. 'prios', 0, -1)) do
  local pk = pend_key(Q, pr)
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
return {
  redis.call('ZCARD', blocked_key(Q)),
  ready, pending - ready,
  redis.call('ZCARD', Q .. 'run'),
  redis.call('ZCARD', Q .. 'wait'),
  redis.call('ZCARD', Q .. 'done:succeeded'),
  redis.call('ZCARD', Q .. 'done:dead'),
  redis.call('ZCARD', Q .. 'done:cancelled'),
  redis.call('ZCARD', Q .. 'done:discarded'),
  redis.call('ZCARD', Q .. 'done:expired'),
  oldest,
}
