-- KEYS: the queue's prefix. ARGV: none.
-- Layout 2 → 3: puts every job of the queue into its created-order index (`made`, see `made_key`),
-- reading the jobs from their status indexes (every job is in exactly one). Idempotent (ZADD of the
-- same score and member), so migrations that race each do it whole, in one script per queue.
-- Returns how many jobs the queue has.
local Q = KEYS[1]
local made = made_key(Q)
local b = {}
local count = 0
local function add(id)
  local c = redis.call('HGET', jkey(Q, id), 'c')
  if c then
    batch_add(b, made, c, id)
    count = count + 1
  end
end
for _, pr in ipairs(redis.call('ZRANGE', Q .. 'prios', 0, -1)) do
  for _, m in ipairs(redis.call('ZRANGE', pend_key(Q, pr), 0, -1)) do
    add(string.sub(m, 18))
  end
end
for _, index in ipairs({ 'run', 'wait', 'done:succeeded', 'done:dead', 'done:cancelled', 'done:discarded', 'done:expired' }) do
  for _, id in ipairs(redis.call('ZRANGE', Q .. index, 0, -1)) do
    add(id)
  end
end
batch_flush(b, 'ZADD')
return count
