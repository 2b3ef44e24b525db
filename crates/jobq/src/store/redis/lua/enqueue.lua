-- KEYS: the queue's prefix, then on a single server the queue registry (`<prefix>queues`). ARGV:
-- shape, count, then
--   shape 'E' (each job its own fields): per job id, type, payload, meta, priority, max_attempts, run_at
--     key, unique key, timeout, created_at, expiry, unique mode ('' for absent optional fields; the
--     mode as `UniqueMode::stored` writes it, '' for coalesce);
--   shape 'S' (fields shared by the whole batch, which has no unique keys, no expiries and no id
--     twice): type, meta,
--     priority, max_attempts, timeout, then per job id, payload, run_at key, created_at. A bulk enqueue
--     is usually this, and sends and reads under half the arguments.
-- Returns { register, outcomes }: outcomes per job, 'C' created, 'D' duplicate, or a letter and the
-- id of the key's holder: 'K' coalesced into it, 'R' replaced it, 'B' debounced it, 'T' throttled by
-- it; or 'Q', created behind it (`keep-last`, or a running rule `queue-behind`, while the holder has
-- started: the new job, `blocked` with an edge `finish` to the holder, takes the key and starts once
-- the holder has ended), or 'P' when it also asked the holder to stop (`cancel-running`) (shape 'S':
-- one string of letters, 'C' or 'D'); register is 1 when
-- the caller must add the queue to the registry itself (on a cluster only, see `register_queue`), else 0.
-- A new job is written without its queue (the key names it), status and attempt (absent means
-- pending and 0), and without priority and max attempts at their defaults: every field a hash holds
-- costs Redis time on the bulk path.
local Q, shape, n = KEYS[1], ARGV[1], tonumber(ARGV[2])
local jp = Q .. 'job:'

if shape == 'S' and n == 1 then
  -- One job, what a web request or a script enqueues: the writes of the batch below, made directly.
  -- The batch's tables (its keys, outcomes, members, and the table of hash fields) cost more Lua
  -- time than the commands themselves do at this size.
  local t, m, pr, ma, to = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
  local id, p, r, c = ARGV[8], ARGV[9], ARGV[10], ARGV[11]
  local k = jp .. id
  if redis.call('EXISTS', k) == 1 then
    return { register_queue(Q, KEYS[2]), 'D' }
  end
  if m == '' and pr == '0' and ma == DEFAULT_MAX_ATTEMPTS and to == '' then
    redis.call('HSET', k, 't', t, 'p', p, 'r', r, 'c', c)
  else
    local job = hset_args(t, m, pr, ma, to, '')
    job[1], job[5], job[7], job[9] = k, p, r, c
    redis.call('HSET', unpack(job))
  end
  redis.call('ZADD', pend_key(Q, pr), '0', r .. ':' .. id)
  redis.call('ZADD', made_key(Q), c, id)
  redis.call('ZADD', Q .. 'prios', pr, pr)
  wake(Q)
  return { register_queue(Q, KEYS[2]), 'C' }
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
  local out, members, made = {}, {}, {}
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
      made[#made + 1] = ARGV[i + 3]
      made[#made + 1] = ARGV[i]
      out[j] = 'C'
    end
    i = i + 4
  end
  if #members > 0 then
    batch_flush({ [pend_key(Q, pr)] = members, [made_key(Q)] = made }, 'ZADD')
    redis.call('ZADD', Q .. 'prios', pr, pr)
    wake(Q)
  end
  return { register_queue(Q, KEYS[2]), table.concat(out) }
end

local uniq = Q .. 'uniq'
local out = {}
local pending, pend_keys = {}, {}
local mk = made_key(Q)
local created = false

-- The run key of an instant in milliseconds (`codec::run_key` for instants after 1970).
local function run_key_of(ms)
  return string.format('8%015x', ms)
end

-- Mode `replace`, `keep-last` or `debounce` (`um`) against holder `h`: a holder that has not started
-- takes the new job's fields (a debounce's run key capped at the holder's creation plus its longest
-- wait; run keys of one width sort as their instants do); one that has started is left alone.
-- Returns the answer, or false when the new job is to queue behind the holder, which has started.
local function replace_holder(h, p, m, pr, r, to, xa, um)
  local hk = jp .. h
  local old = redis.call('HMGET', hk, 's', 'pr', 'r', 'c', 'xa')
  local s = old[1] or 'pending'
  if s ~= 'pending' and s ~= 'blocked' then
    if um == 'keep-last' or um == 'cancel-running' or string.match(um, ' queue%-behind$') then
      return false
    end
    return 'K' .. h
  end
  local letter = 'R'
  local window, max_wait = string.match(um, '^debounce (%d+) ?(%d*)')
  if window then
    letter = 'B'
    if max_wait ~= '' then
      local latest = run_key_of(tonumber(old[4]) + tonumber(max_wait))
      if latest < r then
        r = latest
      end
    end
  end
  redis.call('HSET', hk, 'p', p, 'r', r, 'um', um)
  local function set(field, value, default)
    if value == default then
      redis.call('HDEL', hk, field)
    else
      redis.call('HSET', hk, field, value)
    end
  end
  set('m', m, '')
  set('pr', pr, '0')
  set('to', to, '')
  set('xa', xa, '')
  if old[5] then
    redis.call('ZREM', Q .. 'expiry', h)
  end
  index_expiry(Q, h, xa)
  if s == 'pending' then
    redis.call('ZREM', pend_key(Q, old[2] or '0'), old[3] .. ':' .. h)
    index_pending(Q, h, pr, r)
    wake(Q)
  end
  return letter .. h
end

-- Job `id` created `blocked` behind `holder`, which has started: an edge `finish` to it, written on
-- both sides (see `release_dependents`), and the key, taken from it (it keeps its own `u`, which
-- `free_unique` then leaves alone); the holder's end, however it ends, releases the job.
local function queue_behind(id, holder, fields, c, cancels)
  local q = queue_of(Q)
  local member = q .. '\n' .. id
  fields[#fields + 1] = 's'
  fields[#fields + 1] = 'blocked'
  fields[#fields + 1] = 'ao'
  fields[#fields + 1] = '1'
  fields[#fields + 1] = 'af'
  fields[#fields + 1] = '1'
  redis.call('HSET', unpack(fields))
  redis.call('ZADD', blocked_key(Q), c, id)
  redis.call('HSET', after_key(Q, id), holder, 'open finish ' .. q)
  redis.call('HSET', dependents_key(Q, holder), member, 'finish')
  count_dependent(jp .. holder, member)
  if cancels then
    -- Asked to stop: its heartbeat tells its worker while this job waits for it (`heartbeat.lua`).
    redis.call('HSET', jp .. holder, 'cr', '1')
  end
end

local i = 3
for _ = 1, n do
  local id, t, p, m, pr, ma, r, u, to, c, xa, um =
    ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7],
    ARGV[i + 8], ARGV[i + 9], ARGV[i + 10], ARGV[i + 11]
  i = i + 12
  local k = jp .. id
  local holder = false
  if u ~= '' then
    holder = redis.call('HGET', uniq, u)
  end
  -- A throttled key names the job that took its window in `{q}:held:<key>`, which expires with the
  -- window (Redis's clock): finished or not, that job holds the key until then.
  local held_key = false
  if string.sub(um, 1, 9) == 'throttle ' then
    held_key = Q .. 'held:' .. u
  end
  local taker = held_key and redis.call('GET', held_key)
  -- The answer, or false while the job is to be created (behind `behind` when that is set).
  local answer, behind = false, false
  if redis.call('EXISTS', k) == 1 then
    answer = 'D'
  elseif taker then
    answer = 'T' .. taker
  elseif holder and um ~= '' and not held_key then
    answer = replace_holder(holder, p, m, pr, r, to, xa, um)
    behind = not answer and holder
  elseif holder then
    if held_key then
      redis.call('SET', held_key, holder, 'PX', string.match(um, '(%d+)$'))
    end
    answer = 'K' .. holder
  end
  if not answer then
    local job = hset_args(t, m, pr, ma, to, u, xa)
    job[1], job[5], job[7], job[9] = k, p, r, c
    if um ~= '' then
      job[#job + 1] = 'um'
      job[#job + 1] = um
    end
    index_expiry(Q, id, xa)
    if u ~= '' then
      redis.call('HSET', uniq, u, id)
    end
    if behind then
      local cancels = um == 'cancel-running'
      queue_behind(id, behind, job, c, cancels)
      redis.call('ZADD', mk, c, id)
      answer = cancels and 'P' or 'Q'
    else
      redis.call('HSET', unpack(job))
      if held_key then
        redis.call('SET', held_key, id, 'PX', string.match(um, '(%d+)$'))
      end
      -- The pending set of each priority is named once per batch.
      local pk = pend_keys[pr]
      if not pk then
        pk = pend_key(Q, pr)
        pend_keys[pr] = pk
        redis.call('ZADD', Q .. 'prios', pr, pr)
      end
      batch_add(pending, pk, '0', r .. ':' .. id)
      batch_add(pending, mk, c, id)
      created = true
      answer = 'C'
    end
  end
  out[#out + 1] = answer
end
batch_flush(pending, 'ZADD')
if created then
  wake(Q)
end
return { register_queue(Q, KEYS[2]), out }
