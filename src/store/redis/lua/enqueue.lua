-- KEYS: the queue's prefix. ARGV: queue, count, then per job: id, type, payload, meta, priority,
-- max_attempts, run_at key, unique key, timeout, created_at ('' for absent optional fields).
-- Returns per job its outcome: 'C' created, 'D' duplicate, or 'K' and the id of the live job it
-- coalesced into. A new job is written without status and attempt: pending and 0 until it is claimed.
local Q, q, n = KEYS[1], ARGV[1], tonumber(ARGV[2])
local uniq = Q .. 'uniq'
local out = {}
local pending, pend_keys = {}, {}
local created = false
local i = 3
for _ = 1, n do
  local id, t, p, m, pr, ma, r, u, to, c =
    ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7],
    ARGV[i + 8], ARGV[i + 9]
  i = i + 10
  local k = Q .. 'job:' .. id
  local holder = false
  if u ~= '' then
    holder = redis.call('HGET', uniq, u)
  end
  if redis.call('EXISTS', k) == 1 then
    out[#out + 1] = 'D'
  elseif holder then
    out[#out + 1] = 'K' .. holder
  else
    redis.call('HSET', k, 'q', q, 't', t, 'p', p, 'pr', pr, 'ma', ma, 'r', r, 'c', c)
    if m ~= '' then
      redis.call('HSET', k, 'm', m)
    end
    if u ~= '' then
      redis.call('HSET', k, 'u', u)
      redis.call('HSET', uniq, u, id)
    end
    if to ~= '' then
      redis.call('HSET', k, 'to', to)
    end
    -- The pending set of each priority is named once per batch.
    local pk = pend_keys[pr]
    if not pk then
      pk = pend_key(Q, pr)
      pend_keys[pr] = pk
      redis.call('ZADD', Q .. 'prios', pr, pr)
    end
    batch_add(pending, pk, '0', r .. ':' .. id)
    created = true
    out[#out + 1] = 'C'
  end
end
batch_flush(pending, 'ZADD')
if created then
  wake(Q)
end
return out
