-- KEYS: the prefix of the first job's queue, then on a single server the queue registry
-- (`<prefix>queues`). ARGV: count, then per job: queue, id, type, payload, meta, priority,
-- max_attempts, run_at key, unique key, timeout, created_at, expiry (the fields of shape 'E' of
-- `enqueue.lua`, '' for absent optional ones), the number of its dependencies, how they combine
-- ('all', or 'any': the job runs at the first met, see `resolve_edge`), and per dependency: id, queue
-- ('' when no queue holds it; on a cluster `~<queue>` for one in another slot, see `remote_queue`),
-- rule (success, finish or failure), and for one in another slot the status it has ended in, or ''
-- while it is live (the caller has then written the dependency's side of the edge, `link.lua`).
-- A batch in which jobs wait for others (see `Store::enqueue`); batches without dependencies go to
-- `enqueue.lua`, whose paths this leaves as they are. Returns { register, outcomes } as shape 'E' of
-- `enqueue.lua` does, or { 'U', ids } when a job it would create names a dependency that is no job of
-- the store nor of the batch (each id once, in the batch's order): then it has written nothing.
-- Three passes: the outcome of every job, decided as `enqueue.lua` decides them one after another
-- (reads only); the dependencies of the jobs to create, checked (reads only); then the writes: each
-- created job, `blocked` with its edges when it has dependencies (see `release_dependents`), then
-- the edges to dependencies that had already ended, resolved at once at the dependent's created_at,
-- cascading as the end of a job does. One script, so the batch is applied whole or not at all, and
-- a job may name one that comes after it in the batch. On a single server the jobs and their
-- dependencies may be of several queues, whose keys it builds beside KEYS[1] (see `sibling`); on a
-- cluster the caller sends one queue's jobs, and a dependency in another slot is taken as the caller
-- found it: only this side of its edge is written here (and its queue into `{q}:sources`, the queues
-- whose outboxes the queue's workers read), resolved at once when it had ended.
local Q1, n = KEYS[1], tonumber(ARGV[1])

-- Pass 1: each job's outcome. Jobs are told apart by their key (queue and id); `created` holds those
-- the batch creates, `coalesced` the holder each coalesced one stands for, `held` the unique keys the
-- batch's created jobs take.
local jobs = {}
local created, coalesced, held = {}, {}, {}
local i = 2
for j = 1, n do
  local job = {
    q = ARGV[i], id = ARGV[i + 1], t = ARGV[i + 2], p = ARGV[i + 3], m = ARGV[i + 4], pr = ARGV[i + 5],
    ma = ARGV[i + 6], r = ARGV[i + 7], u = ARGV[i + 8], to = ARGV[i + 9], c = ARGV[i + 10],
    xa = ARGV[i + 11], deps = {}, any = ARGV[i + 13] == 'any',
  }
  local nd = tonumber(ARGV[i + 12])
  i = i + 14
  for d = 1, nd do
    job.deps[d] = { id = ARGV[i], q = ARGV[i + 1], rule = ARGV[i + 2], far = remote_queue(ARGV[i + 1]) }
    if job.deps[d].far and ARGV[i + 3] ~= '' then
      job.deps[d].ended = ARGV[i + 3]
    end
    i = i + 4
  end
  job.Q = sibling(Q1, job.q)
  job.k = jkey(job.Q, job.id)
  local holder = false
  if job.u ~= '' then
    holder = held[job.Q .. '\n' .. job.u] or redis.call('HGET', job.Q .. 'uniq', job.u)
  end
  if created[job.k] or redis.call('EXISTS', job.k) == 1 then
    job.out = 'D'
  elseif holder then
    job.out = 'K' .. holder
    coalesced[job.k] = holder
  else
    job.out = 'C'
    created[job.k] = true
    if job.u ~= '' then
      held[job.Q .. '\n' .. job.u] = job.id
    end
  end
  jobs[j] = job
end

-- Pass 2: every dependency of a job to create is a job: of the batch (one that coalesced stands for
-- its holder) or of the store.
local missing, named = {}, {}
for _, job in ipairs(jobs) do
  if job.out == 'C' then
    for _, dep in ipairs(job.deps) do
      if dep.far then
        dep.target = dep.id
      elseif dep.q ~= '' then
        dep.Q = sibling(Q1, dep.q)
        local dk = jkey(dep.Q, dep.id)
        if created[dk] then
          dep.target = dep.id
        elseif coalesced[dk] then
          dep.target = coalesced[dk]
        elseif redis.call('EXISTS', dk) == 1 then
          dep.target = dep.id
        end
      end
      if not dep.target and not named[dep.id] then
        named[dep.id] = true
        missing[#missing + 1] = dep.id
      end
    end
  end
end
if #missing > 0 then
  return { 'U', missing }
end

-- Each created job's edges, each dependency once (two names may stand for one job through one that
-- coalesced), and how many of them wait for each job the batch creates: that count (`dn`), and the
-- member of the one that waits when it is one (`d1`, see `count_dependent`), are written with the
-- job, not edge by edge (a job after ten thousand of the batch's makes ten thousand calls fewer).
local waited, first_waiting = {}, {}
for _, job in ipairs(jobs) do
  if job.out == 'C' then
    local edges, seen = {}, {}
    -- (Its member in its dependencies' `dependents:` hashes; a flow's children, which wait for
    -- nothing, need none.)
    if #job.deps > 0 then
      job.member = job.q .. '\n' .. job.id
    end
    for _, dep in ipairs(job.deps) do
      local dk = dep.far and dep.q .. '\n' .. dep.target or jkey(dep.Q, dep.target)
      if not seen[dk] then
        seen[dk] = true
        edges[#edges + 1] = dep
        if created[dk] then
          waited[dk] = (waited[dk] or 0) + 1
          first_waiting[dk] = first_waiting[dk] or job.member
        end
      end
    end
    job.distinct = edges
  end
end

-- Pass 3: the writes. A dependency the store holds that has ended is not written on its side: its
-- edge is resolved below, at once.
local woken = {}
for _, job in ipairs(jobs) do
  if job.out == 'C' then
    local Q, id = job.Q, job.id
    local fields = hset_args(job.t, job.m, job.pr, job.ma, job.to, job.u, job.xa)
    fields[1], fields[5], fields[7], fields[9] = job.k, job.p, job.r, job.c
    index_expiry(Q, id, job.xa)
    if waited[job.k] then
      fields[#fields + 1] = 'dn'
      fields[#fields + 1] = waited[job.k]
      if waited[job.k] == 1 then
        fields[#fields + 1] = 'd1'
        fields[#fields + 1] = first_waiting[job.k]
      end
    end
    local edges = job.distinct
    if #edges == 0 then
      redis.call('HSET', unpack(fields))
      index_pending(Q, id, job.pr, job.r)
      woken[Q] = true
    else
      fields[#fields + 1] = 's'
      fields[#fields + 1] = 'blocked'
      fields[#fields + 1] = 'ao'
      fields[#fields + 1] = #edges
      -- For good: a job that waited gets its dependencies' ends in its envelope.
      fields[#fields + 1] = 'af'
      fields[#fields + 1] = '1'
      if job.any then
        fields[#fields + 1] = 'aj'
        fields[#fields + 1] = '1'
      end
      redis.call('HSET', unpack(fields))
      redis.call('ZADD', blocked_key(Q), job.c, id)
      -- The job's side in calls of up to 500 fields (Lua's `unpack` has a bound).
      local ak, side = after_key(Q, id), { after_key(Q, id) }
      for _, dep in ipairs(edges) do
        side[#side + 1] = dep.target
        side[#side + 1] = 'open ' .. dep.rule .. ' ' .. dep.q
        if #side > 1000 then
          redis.call('HSET', unpack(side))
          side = { ak }
        end
        local dk = not dep.far and jkey(dep.Q, dep.target)
        local status = dk and not created[dk] and job_status(dep.Q, dep.target)
        if dep.far then
          if redis.call('SADD', Q .. 'sources', dep.far) == 1 then
            -- Told to the queue's workers, who read their sources afresh (`subscribe.rs`).
            redis.call('XADD', Q .. 'wake', 'MAXLEN', '~', '64', '*', 's', dep.far)
          end
        elseif status and ENDED[status] then
          dep.ended = status
        else
          redis.call('HSET', dependents_key(dep.Q, dep.target), job.member, dep.rule)
          if not created[dk] then
            count_dependent(dk, job.member)
          end
        end
      end
      if #side > 1 then
        redis.call('HSET', unpack(side))
      end
      job.edges = edges
    end
    if job.u ~= '' then
      redis.call('HSET', Q .. 'uniq', job.u, id)
    end
    redis.call('ZADD', made_key(Q), job.c, id)
  end
end
for _, job in ipairs(jobs) do
  if job.edges then
    local ended = {}
    for _, dep in ipairs(job.edges) do
      if dep.ended then
        resolve_edge(job.Q, job.id, dep.target, dep.ended, job.c, ended, woken)
      end
    end
    settle(ended, job.c, woken)
  end
end
for WQ in pairs(woken) do
  wake(WQ)
end

local out, register, listed = {}, 0, {}
for j, job in ipairs(jobs) do
  out[j] = job.out
  if not listed[job.Q] then
    listed[job.Q] = true
    register = math.max(register, register_queue(job.Q, KEYS[2]))
  end
end
return { register, out }
