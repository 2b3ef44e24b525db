-- KEYS: the queue's prefix. ARGV: at most, created since ('' for any), created until ('' for any), the
-- cursor's created_at and id ('' '' for none: only jobs after it in list order), type count, types…,
-- status count, statuses…
-- The newest `at most` jobs of the queue matching (created_at, then id, descending), each as one string
-- (see `packed`); the caller merges queues and pages. Only reads, so atomic as any script is.
--
-- Two ways to the same answer, whichever reads fewer jobs: walk the queue's created-order index
-- (`made`) from the newest (or from the cursor, or from `until`) and keep the jobs that match until
-- there are enough, which costs about `at most` × (jobs in the queue / jobs of the statuses asked
-- for); or read every job of the statuses asked for from their status indexes and sort them, which
-- costs their number. A first page of any listing is the former; the dead letters of a queue with
-- few of them the latter.
local Q, most = KEYS[1], tonumber(ARGV[1])
local since, until_ = tonumber(ARGV[2]), tonumber(ARGV[3])
local after_c, after_id = tonumber(ARGV[4]), ARGV[5]
local types, i = take(7, tonumber(ARGV[6]))
local statuses = take(i + 1, tonumber(ARGV[i]))
local type_ok = set_of(types)
local ALL = { 'blocked', 'pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded', 'expired' }
if #statuses == 0 then
  statuses = ALL
end
local status_ok = set_of(statuses)

local function index_of(s)
  if s == 'blocked' then
    return blocked_key(Q)
  elseif s == 'running' then
    return Q .. 'run'
  elseif s == 'waiting' then
    return Q .. 'wait'
  end
  return Q .. 'done:' .. s
end

-- Whether a job created at `c` with id `id` lies in the time window and after the cursor.
local function in_range(c, id)
  return (not since or c >= since) and (not until_ or c < until_)
    and (not after_c or c < after_c or (c == after_c and id < after_id))
end

local out = {}
local queue = queue_of(Q)
if most <= 0 then
  return out
end

-- How many jobs the statuses asked for hold.
local named = 0
for _, s in ipairs(statuses) do
  if s == 'pending' then
    for _, pr in ipairs(redis.call('ZRANGE', Q .. 'prios', 0, -1)) do
      named = named + redis.call('ZCARD', pend_key(Q, pr))
    end
  else
    named = named + redis.call('ZCARD', index_of(s))
  end
end
if named == 0 then
  return out
end
local made = made_key(Q)
local all = redis.call('ZCARD', made)

local ids = {}
if #statuses == #ALL or named * named > most * all then
  -- Walk `made` newest first, past what the window's end and the cursor leave out.
  local rank = 0
  if until_ then
    rank = redis.call('ZCOUNT', made, ARGV[3], '+inf')
  end
  if after_c then
    rank = math.max(rank, redis.call('ZCOUNT', made, '(' .. ARGV[4], '+inf'))
  end
  local step = math.max(most * 2, 100)
  while #ids < most do
    local page = redis.call('ZREVRANGE', made, rank, rank + step - 1, 'WITHSCORES')
    if #page == 0 then
      break
    end
    rank = rank + #page / 2
    local stop = false
    for n = 1, #page, 2 do
      local id, c = page[n], tonumber(page[n + 1])
      if since and c < since then
        stop = true
        break
      end
      if in_range(c, id) then
        local h = redis.call('HMGET', jkey(Q, id), 's', 't')
        if h[2] and status_ok[status_of(h[1])] and (#types == 0 or type_ok[h[2]]) then
          ids[#ids + 1] = id
          if #ids >= most then
            break
          end
        end
      end
    end
    if stop then
      break
    end
    step = math.min(step * 2, 10000)
  end
else
  -- Every job of the statuses asked for, sorted.
  local cands = {}
  local function consider(id)
    local h = redis.call('HMGET', jkey(Q, id), 'c', 't')
    local c = tonumber(h[1])
    if c and (#types == 0 or type_ok[h[2]]) and in_range(c, id) then
      cands[#cands + 1] = { c, id }
    end
  end
  for _, s in ipairs(statuses) do
    if s == 'pending' then
      for _, pr in ipairs(redis.call('ZRANGE', Q .. 'prios', 0, -1)) do
        for _, m in ipairs(redis.call('ZRANGE', pend_key(Q, pr), 0, -1)) do
          consider(string.sub(m, 18))
        end
      end
    else
      for _, id in ipairs(redis.call('ZRANGE', index_of(s), 0, -1)) do
        consider(id)
      end
    end
  end
  table.sort(cands, function(a, b)
    if a[1] ~= b[1] then
      return a[1] > b[1]
    end
    return a[2] > b[2]
  end)
  for n = 1, math.min(most, #cands) do
    ids[n] = cands[n][2]
  end
end

for _, id in ipairs(ids) do
  out[#out + 1] = packed(redis.call('HGETALL', jkey(Q, id)), queue, id)
end
return out
