-- KEYS: the queue's prefix, then on a single server the queue registry (`<prefix>queues`). ARGV:
-- shape, count, then
--   shape 'E' (each job its own fields): per job id, type, payload, meta, priority, max_attempts, run_at
--     key, unique key, timeout, created_at ('' for absent optional fields);
--   shape 'S' (fields shared by the whole batch, which has no unique keys and no id twice): type, meta,
--     priority, max_attempts, timeout, then per job id, payload, run_at key, created_at. A bulk enqueue
--     is usually this, and sends and reads under half the arguments.
-- Returns { register, outcomes }: outcomes per job, 'C' created, 'D' duplicate, or 'K' and the id of
-- the live job it coalesced into (shape 'S': one string of letters, 'C' or 'D'); register is 1 when
-- the caller must add the queue to the registry itself (on a cluster only, see `register`), else 0.
-- A new job is written without its queue (the key names it), status and attempt (absent means
-- pending and 0), and without priority and max attempts at their defaults: every field a hash holds
-- costs Redis time on the bulk path.
local Q, shape, n = KEYS[1], ARGV[1], tonumber(ARGV[2])
local jp = Q .. 'job:'

-- How long a cluster's enqueues trust the marker that says the queue is registered. Cleanup deletes
-- the marker when it takes an emptied queue out of the registry, so the expiry only mends a
-- registration that failed after its script ran (the connection dropped between the two calls).
local LISTED_MS = 60000

-- Puts the queue in the registry, in the same script as its jobs (one round trip per enqueue). On a
-- cluster the registry is a key of another slot, which a script may not touch: the script keeps a
-- marker in the queue's own slot instead and answers 1 when it was missing, and only then does the
-- caller add the queue with a command of its own, after this script (see `forget_queue` for why after).
local function register()
  if KEYS[2] then
    redis.call('SADD', KEYS[2], queue_of(Q))
    return 0
  end
  if redis.call('SET', Q .. 'listed', '1', 'NX', 'PX', LISTED_MS) then
    return 1
  end
  return 0
end

-- The arguments of HSET for a new job: its key, then field/value pairs. Those every job has come
-- first, at fixed places (key 1, payload 5, run_at 7, created_at 9); the optional ones follow, only
-- when set and not at their default.
local function hset_args(t, m, pr, ma, to, u)
  local a = { '', 't', t, 'p', '', 'r', '', 'c', '' }
  local function opt(field, value, default)
    if value ~= default then
      a[#a + 1] = field
      a[#a + 1] = value
    end
  end
  opt('pr', pr, '0')
  opt('ma', ma, DEFAULT_MAX_ATTEMPTS)
  opt('m', m, '')
  opt('to', to, '')
  opt('u', u, '')
  return a
end

if shape == 'S' then
  local t, m, pr, ma, to = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
  local job = hset_args(t, m, pr, ma, to, '')
  local keys = {}
  local i = 8
  for j = 1, n do
    keys[j] = jp .. ARGV[i]
    i = i + 4
  end
  -- One EXISTS over the whole batch: usually none of its ids is taken, and then no job needs its own.
  local taken = false
  for s = 1, n, 1000 do
    taken = taken or redis.call('EXISTS', unpack(keys, s, math.min(s + 999, n))) > 0
  end
  local out, members = {}, {}
  i = 8
  for j = 1, n do
    local k, r = keys[j], ARGV[i + 2]
    if taken and redis.call('EXISTS', k) == 1 then
      out[j] = 'D'
    else
      if #job == 9 then
        -- No optional field: a direct call, cheaper than unpacking a table for each job.
        redis.call('HSET', k, 't', t, 'p', ARGV[i + 1], 'r', r, 'c', ARGV[i + 3])
      else
        job[1], job[5], job[7], job[9] = k, ARGV[i + 1], r, ARGV[i + 3]
        redis.call('HSET', unpack(job))
      end
      members[#members + 1] = '0'
      members[#members + 1] = r .. ':' .. ARGV[i]
      out[j] = 'C'
    end
    i = i + 4
  end
  if #members > 0 then
    batch_flush({ [pend_key(Q, pr)] = members }, 'ZADD')
    redis.call('ZADD', Q .. 'prios', pr, pr)
    wake(Q)
  end
  return { register(), table.concat(out) }
end

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
  local k = jp .. id
  local holder = false
  if u ~= '' then
    holder = redis.call('HGET', uniq, u)
  end
  if redis.call('EXISTS', k) == 1 then
    out[#out + 1] = 'D'
  elseif holder then
    out[#out + 1] = 'K' .. holder
  else
    local job = hset_args(t, m, pr, ma, to, u)
    job[1], job[5], job[7], job[9] = k, p, r, c
    redis.call('HSET', unpack(job))
    if u ~= '' then
      redis.call('HSET', uniq, u, id)
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
return { register(), out }
