-- KEYS: the queue's prefix. ARGV: finished before ('' for any time), limit, dry run (0/1), keep last
-- ('' for none), status count, statuses…, type count, types…, excluded type count, excluded types…,
-- then edges to another slot found free (`<id>\n~<queue>\n<dependent>`, each a dependent the caller
-- found ended or gone)…
-- Deletes (or counts) up to `limit` terminal jobs matching, with their dependency edges (`after:<id>`,
-- `dependents:<id>`), but for a job that a job which has not ended waits or waited for, and, with
-- keep last, the newest that many of each status among the jobs of the types asked for (an index
-- `done:<status>` is in finish-time order, so those are its last ranks). Returns how
-- many, 1 when the queue is left without any job (its last keys, the wake-up stream and a cluster's
-- registration marker among them, are then deleted too, and the caller takes it out of the queue
-- registry), else 0, and the edges to dependents in another slot of a cluster (see `remote_queue`)
-- for which it kept a job, as `<id>\n~<queue>\n<dependent>`: the caller reads those dependents and
-- calls again with the ones it found ended or gone.
local Q, before, limit, dry, keep = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', tonumber(ARGV[4])
local statuses, i = take(6, tonumber(ARGV[5]))
local types, j = take(i + 1, tonumber(ARGV[i]))
local excluded, k = take(j + 1, tonumber(ARGV[j]))
local free = set_of((take(k, #ARGV - k + 1)))
local wanted, unwanted = set_of(types), set_of(excluded)
local by_type = #types > 0 or #excluded > 0
-- Whether job `id` is of a type the call asks for (always, when it names none).
local function of_type(id)
  if not by_type then
    return true
  end
  local t = redis.call('HGET', jkey(Q, id), 't')
  return (#types == 0 or wanted[t]) and not unwanted[t]
end
if #statuses == 0 then
  statuses = { 'succeeded', 'dead', 'cancelled', 'discarded', 'expired' }
end
local upper = '+inf'
if before ~= '' then
  upper = '(' .. before
end
local holds = {}
-- Whether a job that has not ended waits or waited for `id` (its `dependents:` hash names it): its
-- result is still to be handed over, so cleanup keeps it.
local function awaited(id)
  local waits = false
  for _, member in ipairs(redis.call('HKEYS', dependents_key(Q, id))) do
    local q, dependent = string.match(member, '^([^\n]*)\n(.*)$')
    if remote_queue(q) then
      local hold = id .. '\n' .. member
      if not free[hold] then
        holds[#holds + 1] = hold
        waits = true
      end
    else
      local status = job_status(sibling(Q, q), dependent)
      if status and not ENDED[status] then
        return true
      end
    end
  end
  return waits
end

-- The last rank of `dk` (oldest first) that keep last lets go: the one below the `keep`th newest
-- job of the types asked for; -1 when there are no more than `keep` such jobs; the last rank of all
-- without keep last.
local function last_rank(dk)
  local card = redis.call('ZCARD', dk)
  if not keep then
    return card - 1
  end
  if not by_type then
    return card - keep - 1
  end
  local matched, from = 0, 0
  while from < card do
    local page = redis.call('ZREVRANGE', dk, from, from + 999)
    for n, id in ipairs(page) do
      if of_type(id) then
        matched = matched + 1
        if matched == keep then
          return card - (from + n) - 1
        end
      end
    end
    from = from + #page
  end
  return -1
end

local count = 0
for _, s in ipairs(statuses) do
  local dk = Q .. 'done:' .. s
  local last = last_rank(dk)
  -- Past the jobs kept (and, on a dry run, those counted), page by page, oldest first, up to the
  -- last rank keep last lets go (deletions move the ranks down: `last` moves with them).
  local skip = 0
  while count < limit and skip <= last do
    local want = math.min(limit - count, last - skip + 1)
    local ids = redis.call('ZRANGEBYSCORE', dk, '-inf', upper, 'LIMIT', skip, want)
    local gone = {}
    for _, id in ipairs(ids) do
      if awaited(id) or not of_type(id) then
        skip = skip + 1
      else
        gone[#gone + 1] = id
      end
    end
    count = count + #gone
    if dry then
      skip = skip + #gone
    else
      last = last - #gone
      for _, id in ipairs(gone) do
        redis.call('DEL', jkey(Q, id), after_key(Q, id), dependents_key(Q, id))
      end
      for n = 1, #gone, 1000 do
        local some = { unpack(gone, n, math.min(n + 999, #gone)) }
        redis.call('ZREM', dk, unpack(some))
        redis.call('ZREM', made_key(Q), unpack(some))
      end
    end
    if #ids < want then
      break
    end
  end
end
if dry then
  return { count, 0, holds }
end
local prios = Q .. 'prios'
for _, pr in ipairs(redis.call('ZRANGE', prios, 0, -1)) do
  if redis.call('EXISTS', pend_key(Q, pr)) == 0 then
    redis.call('ZREM', prios, pr)
  end
end
local left = redis.call('EXISTS', prios, blocked_key(Q), Q .. 'run', Q .. 'wait', Q .. 'done:succeeded',
  Q .. 'done:dead', Q .. 'done:cancelled', Q .. 'done:discarded', Q .. 'done:expired')
if left > 0 then
  return { count, 0, holds }
end
-- (What is left of the index of expiries names jobs that are gone.)
redis.call('DEL', Q .. 'wake', Q .. 'uniq', Q .. 'listed', made_key(Q), Q .. 'expiry')
return { count, 1, holds }
