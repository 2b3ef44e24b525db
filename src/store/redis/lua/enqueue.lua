-- ARGV: prefix, count, then per job: id, queue, type, payload, meta, priority, max_attempts, run_at key,
-- unique key, timeout, created_at ('' for absent optional fields).
-- Returns per job its outcome: 'C' created, 'D' duplicate, or 'K' and the id of the live job it
-- coalesced into.
local n = tonumber(ARGV[2])
local out = {}
local woken = {}
local pending, pend_keys = {}, {}
local i = 3
for _ = 1, n do
  local id, q, t, p, m, pr, ma, r, u, to, c =
    ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7],
    ARGV[i + 8], ARGV[i + 9], ARGV[i + 10]
  i = i + 11
  local k = jkey(id)
  local holder = false
  if u ~= '' then
    holder = redis.call('HGET', qkey(q, 'uniq'), u)
  end
  if redis.call('EXISTS', k) == 1 then
    out[#out + 1] = 'D'
  elseif holder then
    out[#out + 1] = 'K' .. holder
  else
    redis.call('HSET', k, 'q', q, 't', t, 'p', p, 'pr', pr, 's', 'pending', 'a', '0', 'ma', ma, 'r', r, 'c', c)
    if m ~= '' then
      redis.call('HSET', k, 'm', m)
    end
    if u ~= '' then
      redis.call('HSET', k, 'u', u)
      redis.call('HSET', qkey(q, 'uniq'), u, id)
    end
    if to ~= '' then
      redis.call('HSET', k, 'to', to)
    end
    -- The pending set of each (queue, priority) is named once per batch.
    local of_queue = pend_keys[q]
    if not of_queue then
      of_queue = {}
      pend_keys[q] = of_queue
    end
    local pk = of_queue[pr]
    if not pk then
      pk = pend_key(q, pr)
      of_queue[pr] = pk
      redis.call('ZADD', qkey(q, 'prios'), pr, pr)
    end
    batch_add(pending, pk, '0', r .. ':' .. id)
    if not woken[q] then
      woken[q] = true
      redis.call('SADD', P .. 'queues', q)
      wake(q)
    end
    out[#out + 1] = 'C'
  end
end
batch_flush(pending, 'ZADD')
return out
