-- KEYS: the queue's prefix. ARGV: queue, shape, count, then
--   shape 'E' (each job its own fields): per job id, type, payload, meta, priority, max_attempts, run_at
--     key, unique key, timeout, created_at ('' for absent optional fields);
--   shape 'S' (fields shared by the whole batch, which has no unique keys): type, meta, priority,
--     max_attempts, timeout, then per job id, payload, run_at key, created_at. A bulk enqueue is
--     usually this, and sends and reads under half the arguments.
-- Returns per job its outcome: 'C' created, 'D' duplicate, or 'K' and the id of the live job it
-- coalesced into. A new job is written without status and attempt: pending and 0 until it is claimed.
local Q, q, shape, n = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3])
local uniq = Q .. 'uniq'
local out = {}
local pending, pend_keys = {}, {}
local created = false

local function add(id, t, p, m, pr, ma, r, u, to, c)
  local k = Q .. 'job:' .. id
  local holder = false
  if u ~= '' then
    holder = redis.call('HGET', uniq, u)
  end
  if redis.call('EXISTS', k) == 1 then
    out[#out + 1] = 'D'
    return
  end
  if holder then
    out[#out + 1] = 'K' .. holder
    return
  end
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

if shape == 'S' then
  local t, m, pr, ma, to = ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]
  local i = 9
  for _ = 1, n do
    add(ARGV[i], t, ARGV[i + 1], m, pr, ma, ARGV[i + 2], '', to, ARGV[i + 3])
    i = i + 4
  end
else
  local i = 4
  for _ = 1, n do
    add(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7],
      ARGV[i + 8], ARGV[i + 9])
    i = i + 10
  end
end
batch_flush(pending, 'ZADD')
if created then
  wake(Q)
end
return out
