-- KEYS: the prefixes of the queues to claim from (all in one hash slot on a cluster). ARGV: now key,
-- now (ms), worker, limit, flow prefix, rules (JSON).
-- A limited claim (see `store/flow.rs`): leases up to `limit` due jobs in claim order, passing over
-- the jobs that a pause, a block or a limit holds back, and records the slots and rate starts the
-- leased jobs take. Atomic like every script, so two workers never both take a limit's last slot.
--
-- The limits' state lives under the flow prefix: on a single server one prefix for the whole store
-- (limits hold across every queue); on a cluster the flow prefix is '' and each queue keeps its own
-- under `<queue prefix>flow:` (a type's limits are then counted per queue):
--   `used`: hash of "<scope>\n<partition>" → how many running jobs hold one of its slots. A lease
--     counts itself in and names the counters in its job's `sl`; the scripts that end a lease take
--     it off (`free_slots`), and the counts are recounted from the running jobs now and then
--     (`recount`);
--   `counted`: "<time>:<jobs read>" of the last recount, kept for RECOUNT_MS;
--   `rate:<scope>\n<partition>`: the rate bucket's theoretical arrival time in microseconds, which
--     expires once it has passed (an expired bucket is full, the same as a time in the past).
--   `depth`: how many jobs the last claim under a partitioned limit leased (expires after 5 s),
--     which bounds how many candidates the next one reads (see below).
--   `held:<pending set>`: a run of held-back jobs at the front of a pending set, remembered for a
--     second (see `held_run_end`).
-- Rules: ex (types excluded), pq ({queue: [types paused in it]}, "" = the whole queue), bt (blocked
-- types), bp ({type: [blocked partitions]}), lim ([{s: scope key, t: type or nil, q: queue or nil,
-- gc, rc, rp (rate count and window in ms), pf ('meta'/'payload' or nil), pk (keys)}]).
-- Returns per leased job one string, as claim.lua does, each as it was before the lease.
local nowkey, now, worker, limit, F = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]
-- Now as the caller spelled it, for the fields and scores written (a number would be formatted anew
-- each time).
local now_text = ARGV[2]
local rules = cjson.decode(ARGV[6])
local now_us = now * 1000
local upper = '(' .. nowkey .. ';'
local excluded = set_of(rules.ex or {})
for _, t in ipairs(rules.bt or {}) do
  excluded[t] = true
end
local limits = rules.lim or {}
-- Candidates read per queue. A partition holds back jobs only once they are read, so with one there
-- are twice as many as wanted, to pass over the jobs held back without reading a whole backlog.
-- Without one, the jobs of full limits are passed over unread, and a limit that fills within this
-- claim only shortens it.
local WANT = limit + 16
local partitioned_limits = false
-- The hash fields that partitions are read from ('m' for meta, 'p' for payload): a list, and a set.
local lane_fields, is_lane_field = {}, {}
for _, lim in ipairs(limits) do
  if lim.pf then
    WANT = math.min(limit * 2 + 16, 2000)
    partitioned_limits = true
    local f = lim.pf == 'meta' and 'm' or 'p'
    if not is_lane_field[f] then
      is_lane_field[f] = true
      lane_fields[#lane_fields + 1] = f
    end
  end
end

local function flow_prefix(Q)
  if F ~= '' then
    return F
  end
  return Q .. 'flow:'
end

-- How deep a claim under a partitioned limit reads. Only the store knows which lanes are free, and
-- each candidate costs a read and a decode of its meta or payload to learn its lane, so reading twice
-- what a prefetching claim asks for (up to 2,000) to admit the hundred jobs whose lanes are free would
-- make every such claim cost milliseconds. The last such claim leaves how many it admitted (`depth`,
-- for a few seconds); the next reads at most twice that and 64 more, which doubles while claims keep
-- admitting what they read.
local depth_key = nil
if partitioned_limits then
  depth_key = flow_prefix(KEYS[1]) .. 'depth'
  local last = tonumber(redis.call('GET', depth_key) or '')
  if last then
    WANT = math.min(WANT, 2 * last + 64)
  end
end

-- A job's field as text, the way jobq's Rust side reads it (`FieldPath::value_of`): a string as it
-- is, an integer without a fraction, anything else as JSON, missing or null as ''.
local function as_text(v)
  if v == nil or v == cjson.null then
    return ''
  end
  local kind = type(v)
  if kind == 'string' then
    return v
  elseif kind == 'number' then
    if v == math.floor(v) and math.abs(v) < 9007199254740992 then
      return string.format('%d', v)
    end
    return cjson.encode(v)
  elseif kind == 'boolean' then
    return tostring(v)
  end
  return cjson.encode(v)
end

local function field_of(job, lim)
  if not lim.pf then
    return ''
  end
  local raw = job[lim.pf == 'meta' and 'm' or 'p']
  if not raw then
    return ''
  end
  local ok, v = pcall(cjson.decode, raw)
  if not ok then
    return ''
  end
  for _, key in ipairs(lim.pk) do
    if type(v) ~= 'table' then
      return ''
    end
    v = v[key]
  end
  return as_text(v)
end

-- A slot count can drift only by a path that takes a running job away without ending its lease
-- (its hash deleted by hand), so the counts are trusted, and recounted from the running jobs
-- themselves (each one's `sl`) at most every RECOUNT_MS, and every RECOUNT_AT_LIMIT_MS while one is
-- at its limit, where a count too high would hold jobs back. A recount reads every running job
-- under its flow prefix, of whatever type, so at the limit it waits longer when the last one read
-- many (RECOUNT_MS_PER_JOB each: a tenth of a second for a thousand), which keeps it to a few
-- hundredths of the server's time however many jobs run.
local RECOUNT_MS, RECOUNT_AT_LIMIT_MS, RECOUNT_MS_PER_JOB = 60000, 1000, 0.1

-- A slot counter: field f of hash `used` under flow prefix P.
local function slot_of(P, f)
  return { P = P, f = f }
end

-- The counts as read this call, per flow prefix (`base`), the slots this claim's leases take, counted
-- in at its end (`joined`), and each flow prefix's last recount: when, and how many running jobs it
-- read (false: none recorded).
local base, joined, recounted = {}, {}, {}

-- The `sl` of a lease that holds `slots` (all under one flow prefix): '#' and the JSON list of the
-- counters' hash and fields (see `free_slots`), encoded once per claim.
local slot_lists_made = {}
local function slot_list(slots)
  if #slots == 0 then
    return ''
  end
  local P, fields = slots[1].P, {}
  for i, slot in ipairs(slots) do
    fields[i] = slot.f
  end
  local key = P .. '\0' .. table.concat(fields, '\0')
  local sl = slot_lists_made[key]
  if not sl then
    sl = '#' .. cjson.encode({ P .. 'used', unpack(fields) })
    slot_lists_made[key] = sl
  end
  return sl
end

-- The queue prefixes whose running jobs hold slots under flow prefix P: on a single server every
-- queue in the registry (limits hold across queues), on a cluster the queue P belongs to.
local function queues_under(P)
  if F == '' then
    return { string.sub(P, 1, #P - #'flow:') }
  end
  local store_prefix = string.sub(F, 1, #F - #'flow:')
  local out = {}
  for _, q in ipairs(redis.call('SMEMBERS', store_prefix .. 'queues')) do
    out[#out + 1] = store_prefix .. '{' .. q .. '}:'
  end
  return out
end

-- The value of field '' of each `used` hash, which no counter's name can be. Redis keeps a hash of
-- up to 512 short fields as one list, searched from the start at every HGET and HINCRBY: with a
-- counter per partition that is a scan of hundreds of fields per job. A value longer than 64 bytes
-- makes Redis keep the hash as a hash table, where a field is found at once, for good.
local ENCODING_KEEPER = 'jobq slot counts: this value is longer than a listpack hash may hold'

-- Counts again the slots under flow prefix P from the running jobs' `sl`. A lease taken by a version
-- that kept a set of members per slot (`slots:<scope>\n<partition>`) is counted too, and its `sl`
-- rewritten, so that its end takes it off the counts; those sets are deleted.
local function recount(P)
  local used_key, old_prefix = P .. 'used', P .. 'slots:'
  local used, old_sets, read = {}, {}, 0
  for _, RQ in ipairs(queues_under(P)) do
    for _, id in ipairs(redis.call('ZRANGE', RQ .. 'run', 0, -1)) do
      read = read + 1
      local k = jkey(RQ, id)
      local h = redis.call('HMGET', k, 's', 'sl')
      local sl = h[2]
      if h[1] == 'running' and sl and sl ~= '' then
        local list, counters = decode_slot_list(sl)
        if counters then
          if list[1] == used_key then
            for i = 2, #list do
              used[list[i]] = (used[list[i]] or 0) + 1
            end
          end
        else
          local slots = {}
          for _, set in ipairs(list) do
            if string.sub(set, 1, #old_prefix) == old_prefix then
              local f = string.sub(set, #old_prefix + 1)
              used[f] = (used[f] or 0) + 1
              slots[#slots + 1] = slot_of(P, f)
              old_sets[set] = true
            end
          end
          redis.call('HSET', k, 'sl', slot_list(slots))
        end
      end
    end
  end
  redis.call('DEL', used_key)
  local args = { '', ENCODING_KEEPER }
  for f, n in pairs(used) do
    args[#args + 1] = f
    args[#args + 1] = n
  end
  for i = 1, #args, 1000 do
    redis.call('HSET', used_key, unpack(args, i, math.min(i + 999, #args)))
  end
  for set in pairs(old_sets) do
    redis.call('DEL', set, set .. ':swept', set .. ':checked')
  end
  redis.call('SET', P .. 'counted', now_text .. ':' .. read, 'PX', RECOUNT_MS)
  recounted[P] = { at = now, read = read }
  base[P] = {}
end

-- How many slots of `slot` are in use, this claim's leases included. The first read under a flow
-- prefix recounts when the last recount is RECOUNT_MS old (by the claim's clock, or gone).
local function live(slot, gc)
  local P, f = slot.P, slot.f
  local taken = joined[P] and joined[P][f] or 0
  local of_P = base[P]
  local n = of_P and of_P[f]
  if n then
    return n + taken
  end
  if recounted[P] == nil then
    local at, read = string.match(redis.call('GET', P .. 'counted') or '', '^(%d+):(%d+)$')
    recounted[P] = at and { at = tonumber(at), read = tonumber(read) } or false
    if not recounted[P] or now - recounted[P].at >= RECOUNT_MS then
      recount(P)
    end
  end
  n = tonumber(redis.call('HGET', P .. 'used', f) or '0')
  local last = recounted[P]
  local wait = math.max(RECOUNT_AT_LIMIT_MS, last.read * RECOUNT_MS_PER_JOB)
  if n + taken >= gc and now - last.at >= wait then
    recount(P)
    n = tonumber(redis.call('HGET', P .. 'used', f) or '0')
  end
  base[P] = base[P] or {}
  base[P][f] = n
  return n + taken
end

local tats = {}
local function tat_of(key)
  local t = tats[key]
  if t == nil then
    t = tonumber(redis.call('GET', key) or '0') or 0
    tats[key] = t
  end
  return t
end

-- A rate limit's spacing between starts and its window, in microseconds.
local function rate_of(lim)
  return math.max(1, math.floor(lim.rp * 1000 / lim.rc)), lim.rp * 1000
end

-- The time of rate bucket `key` after one more start, or nil when the bucket has no start left.
local function next_start(key, interval, window)
  local t = math.max(tat_of(key), now_us) + interval
  if t - now_us > window then
    return nil
  end
  return t
end

-- Whether a limit without a partition has room for n more jobs in queue prefix Q: as many free
-- slots, and as many starts left in its rate bucket.
local function room_for(Q, lim, n)
  local suffix = lim.s .. '\n'
  local P = flow_prefix(Q)
  if lim.gc and live(slot_of(P, suffix), lim.gc) + n > lim.gc then
    return false
  end
  if lim.rc then
    local interval, window = rate_of(lim)
    return math.max(tat_of(P .. 'rate:' .. suffix), now_us) + n * interval - now_us <= window
  end
  return true
end

-- Whether a limit without a partition has no room left in queue prefix Q. Such a limit holds back
-- every job it covers, so the scan below passes over them without reading them (a full limit would
-- otherwise cost a read of every candidate).
local function full(Q, lim)
  return not room_for(Q, lim, 1)
end

-- What holds back jobs of queue prefix Q (queue q) by type: `held` (types excluded, paused in it, or
-- under a full limit without a partition), and whether the whole queue is (paused, or its own limit
-- full).
local function held_back(Q, q)
  local paused = set_of((rules.pq or {})[q] or {})
  local held = {}
  for t in pairs(excluded) do
    held[t] = true
  end
  for t in pairs(paused) do
    held[t] = true
  end
  for _, lim in ipairs(limits) do
    if not lim.pf and ((lim.q and lim.q == q) or lim.t) and full(Q, lim) then
      if lim.q then
        paused[''] = true
      else
        held[lim.t] = true
      end
    end
  end
  return held, paused[''] == true
end

-- The candidates of queue prefix Q in claim order, appended to `cands`. Jobs of types held back are
-- looked at, not taken, and at most SCAN_CAP of them per priority, as in claim.lua: a long run of
-- held-back jobs ends the scan of that priority for this call.
local SCAN_CAP = 1000
local cands = {}
-- The jobs leased, as returned.
local out, running, removed, moved = {}, {}, {}, {}

-- A scan that finds only held-back jobs in a pending set (a full limit over a backlog of its jobs)
-- costs a read per job, up to SCAN_CAP, and every idle worker would pay it again at each wake-up. So
-- such a scan remembers for HELD_RUN_MS the types it held back and the last job it read, with that
-- job's rank. The jobs before it are all of those types, and a job keeps its type, so while the same
-- types are held back and the job's rank has not grown (only jobs ahead of it left; one put in ahead
-- of it raises the rank) the next scan starts after it. A job put back ahead of the run just as
-- another left it may wait that long.
local HELD_RUN_MS = 1000

-- The held-back types as one string, the same for the same set.
local function held_signature(held)
  local types = {}
  for t in pairs(held) do
    types[#types + 1] = t
  end
  table.sort(types)
  return table.concat(types, '\n')
end

-- How many jobs at the front of pending set pk are a remembered run of jobs held back by `sig` (0
-- when none is remembered, or it no longer holds).
local function held_run_end(key, pk, sig)
  local run = redis.call('GET', key)
  if not run then
    return 0
  end
  local run_sig, rank, member = string.match(run, '^(.-)%z(%d+)%z(.*)$')
  if run_sig ~= sig then
    return 0
  end
  local now_rank = redis.call('ZRANK', pk, member)
  if not now_rank or now_rank > tonumber(rank) then
    return 0
  end
  return now_rank + 1
end

-- `take`, when given, decides each candidate as soon as it is read (one queue's jobs are read in claim
-- order already), and the scan stops once the claim is full: nothing is read past the jobs it takes.
local function scan(Q, q, held, take)
  local found = 0
  local function more()
    return found < WANT and #out < limit
  end
  -- When nothing is held back by type, most candidates read are taken (a partition's lane turns away
  -- only what its lane has no room for, and the depth above bounds how many are read): each is read
  -- whole at once rather than its type first, then its lane, then the rest. Otherwise a candidate's
  -- type is read with the fields its lane is read from, and the rest only once it is admitted.
  local whole = next(held) == nil
  local sig = next(held) ~= nil and held_signature(held) or nil
  for _, pr in ipairs(redis.call('ZRANGE', Q .. 'prios', 0, -1)) do
    if not more() then
      break
    end
    local pk = pend_key(Q, pr)
    local offset, skipped = 0, 0
    local run_key = nil
    if sig then
      run_key = flow_prefix(Q) .. 'held:' .. pk
      offset = held_run_end(run_key, pk, sig)
      skipped = offset
    end
    local found_before, last = found, nil
    while more() and skipped <= SCAN_CAP do
      local ms = redis.call('ZRANGEBYLEX', pk, '-', upper, 'LIMIT', offset, WANT - found + 16)
      if #ms == 0 then
        break
      end
      for _, m in ipairs(ms) do
        local id = string.sub(m, 18)
        -- `lanes`: the fields its lanes are read from, by name.
        local t, fields, lanes = nil, nil, partitioned_limits and {} or nil
        if whole then
          fields = redis.call('HGETALL', jkey(Q, id))
          for f = 1, #fields, 2 do
            local name = fields[f]
            if name == 't' then
              t = fields[f + 1]
            elseif lanes and is_lane_field[name] then
              lanes[name] = fields[f + 1]
            end
          end
        elseif lanes then
          local got = redis.call('HMGET', jkey(Q, id), 't', unpack(lane_fields))
          t = got[1]
          for i, f in ipairs(lane_fields) do
            lanes[f] = got[i + 1]
          end
        else
          t = redis.call('HGET', jkey(Q, id), 't')
        end
        if t and not held[t] then
          local c = { tonumber(pr), m, id, Q, pk, t, q, fields, lanes }
          if take then
            take(c)
          else
            cands[#cands + 1] = c
          end
          found = found + 1
          if not more() then
            break
          end
        else
          skipped = skipped + 1
        end
      end
      offset = offset + #ms
      last = ms[#ms]
    end
    -- Every job read here was held back: remember the run (`last` is at rank offset - 1).
    if run_key and last and found == found_before then
      redis.call('SET', run_key, sig .. '\0' .. (offset - 1) .. '\0' .. last, 'PX', HELD_RUN_MS)
    end
  end
end

-- How the jobs of type t in queue q (prefix Q) are admitted, worked out once per claim: the limits
-- that apply, and, when none of them has a partition, what is the same for every such job: each
-- limit's slot counter or rate bucket, and the lease's `sl`.
local plans = {}
local function plan_of(Q, q, t)
  local of_queue = plans[Q]
  if not of_queue then
    of_queue = {}
    plans[Q] = of_queue
  end
  local plan = of_queue[t]
  if plan then
    return plan
  end
  plan = { lims = {}, partitioned = false }
  for _, lim in ipairs(limits) do
    if (lim.t and lim.t == t) or (lim.q and lim.q == q) then
      plan.lims[#plan.lims + 1] = lim
      plan.partitioned = plan.partitioned or lim.pf ~= nil
    end
  end
  if not plan.partitioned then
    local P = flow_prefix(Q)
    local checks, slots = {}, {}
    for _, lim in ipairs(plan.lims) do
      local suffix = lim.s .. '\n'
      if lim.gc then
        local slot = slot_of(P, suffix)
        checks[#checks + 1] = { gc = lim.gc, slot = slot }
        slots[#slots + 1] = slot
      end
      if lim.rc then
        local interval, window = rate_of(lim)
        checks[#checks + 1] = { key = P .. 'rate:' .. suffix, interval = interval, window = window }
      end
    end
    plan.checks = checks
    plan.slots = slots
    plan.sl = slot_list(slots)
  end
  of_queue[t] = plan
  return plan
end

-- Whether every limit of a plan without partitions has room for one more job.
local function has_room(plan)
  for _, ch in ipairs(plan.checks) do
    if ch.gc then
      if live(ch.slot, ch.gc) >= ch.gc then
        return false
      end
    elseif not next_start(ch.key, ch.interval, ch.window) then
      return false
    end
  end
  return true
end

-- What a lease needs of a job's hash as HGETALL gives it, in one pass: its type, attempt, whether it
-- is on its first attempt (no heartbeat or progress to reset), whether it ever held a slot, and its
-- expiry (false for none).
local function read_job(fields)
  local t, attempt, fresh, had_slots, xa = nil, 0, true, false, false
  for f = 1, #fields, 2 do
    local name = fields[f]
    if name == 't' then
      t = fields[f + 1]
    elseif name == 'a' then
      attempt = tonumber(fields[f + 1])
    elseif name == 'hb' or name == 'pg' then
      fresh = false
    elseif name == 'sl' then
      had_slots = true
    elseif name == 'xa' then
      xa = fields[f + 1]
    end
  end
  return t, attempt, fresh, had_slots, xa
end

-- Jobs found expired instead of leased, and the server's clock once read (`expired_at_claim`). A job
-- found expired once admitted has moved its rate buckets by one start: a limit is never exceeded
-- for it, only left unused until the bucket refills.
local expired, clock = {}, {}

-- Leases job `id` of queue q (prefix Q), its hash `k` read as `fields` (with `read_job`'s attempt,
-- fresh and had_slots): it takes a slot of each of `slots`, named in its `sl` as `sl`. (Its caller
-- moves its rate buckets and takes it out of its pending set.)
local function lease(Q, q, id, k, fields, attempt, fresh, had_slots, slots, sl)
  local next_attempt = tostring(attempt + 1)
  for _, slot in ipairs(slots) do
    local of_P = joined[slot.P]
    if not of_P then
      of_P = {}
      joined[slot.P] = of_P
    end
    of_P[slot.f] = (of_P[slot.f] or 0) + 1
  end
  batch_add(running, Q .. 'run', now_text, id)
  -- A first attempt has no heartbeat or progress to reset (as in claim.lua), and a job that never
  -- held a slot no `sl`.
  if fresh and sl == '' and not had_slots then
    redis.call('HSET', k, 's', 'running', 'a', next_attempt, 'w', worker, 'st', now_text)
  elseif fresh then
    redis.call('HSET', k, 's', 'running', 'a', next_attempt, 'w', worker, 'st', now_text, 'sl', sl)
  else
    redis.call('HSET', k, 's', 'running', 'a', next_attempt, 'w', worker, 'st', now_text, 'hb', now_text, 'pg', '', 'sl', sl)
  end
  out[#out + 1] = packed(fields, q, id)
end

-- Leases candidate c (see `lease`), taking it out of its pending set; one past its expiry ends
-- `expired` instead.
local function lease_candidate(c, fields, slots, sl)
  batch_add(removed, c[5], c[2])
  local _, attempt, fresh, had_slots, xa = read_job(fields)
  if not expired_at_claim(c[4], c[3], xa, clock, expired) then
    lease(c[4], c[7], c[3], jkey(c[4], c[3]), fields, attempt, fresh, had_slots, slots, sl)
  end
end

-- A candidate under limits without partitions: its limits' keys are known, so it is read only once
-- admitted (or was read whole by the scan).
local function admit_unpartitioned(c, plan)
  if not has_room(plan) then
    return
  end
  for _, ch in ipairs(plan.checks) do
    if not ch.gc then
      tats[ch.key] = next_start(ch.key, ch.interval, ch.window)
      moved[ch.key] = true
    end
  end
  lease_candidate(c, c[8] or redis.call('HGETALL', jkey(c[4], c[3])), plan.slots, plan.sl)
end

-- A candidate under a limit with a partition: its slot counters and buckets depend on its meta or
-- payload, read first, by the scan (the rest of it only once admitted, unless the scan read it
-- whole).
local function admit_partitioned(c, plan)
  local t, Q = c[6], c[4]
  -- A limit without a partition that filled up within this claim holds back the rest of its jobs
  -- unread.
  for _, lim in ipairs(plan.lims) do
    if not lim.pf and full(Q, lim) then
      return
    end
  end
  local k = jkey(Q, c[3])
  -- The fields its lanes are read from, as the scan read them.
  local job = c[9]
  local slots, starts = {}, {}
  local type_partition = nil
  local P = flow_prefix(Q)
  for _, lim in ipairs(plan.lims) do
    local part = field_of(job, lim)
    if lim.t and lim.pf then
      type_partition = part
    end
    local suffix = lim.s .. '\n' .. part
    if lim.gc then
      local slot = slot_of(P, suffix)
      if live(slot, lim.gc) >= lim.gc then
        return
      end
      slots[#slots + 1] = slot
    end
    if lim.rc then
      local key = P .. 'rate:' .. suffix
      local next_tat = next_start(key, rate_of(lim))
      if not next_tat then
        return
      end
      starts[#starts + 1] = { key, next_tat }
    end
  end
  if type_partition and rules.bp and rules.bp[t] then
    for _, p in ipairs(rules.bp[t]) do
      if p == type_partition then
        return
      end
    end
  end
  for _, s in ipairs(starts) do
    tats[s[1]] = s[2]
    moved[s[1]] = true
  end
  lease_candidate(c, c[8] or redis.call('HGETALL', k), slots, slot_list(slots))
end

-- Whether every limit that may apply to queue q's jobs has room for the whole claim (none of them
-- with a partition): then no job it would read can be turned away.
local function has_room_for_all(Q, q)
  if partitioned_limits then
    return false
  end
  for _, lim in ipairs(limits) do
    if (lim.t or lim.q == q) and not room_for(Q, lim, limit) then
      return false
    end
  end
  return true
end

-- A claim of one queue that its limits have room for (most claims under a limit that does not bind)
-- takes the queue's first ready jobs as claim.lua does, without deciding each, and counts them
-- against the limits afterwards: its rate buckets move by one start per job. The jobs it takes are
-- the first of each pending set, removed by rank.
local function take_first_ready(Q, q)
  -- Jobs taken per plan, for its rate buckets.
  local taken_by_plan = {}
  for _, pr in ipairs(redis.call('ZRANGE', Q .. 'prios', 0, -1)) do
    if #out >= limit then
      break
    end
    local pk = pend_key(Q, pr)
    local ms = redis.call('ZRANGEBYLEX', pk, '-', upper, 'LIMIT', 0, limit - #out)
    local taken = {}
    for _, m in ipairs(ms) do
      local id = string.sub(m, 18)
      local k = jkey(Q, id)
      local fields = redis.call('HGETALL', k)
      local t, attempt, fresh, had_slots, xa = read_job(fields)
      if t and expired_at_claim(Q, id, xa, clock, expired) then
        taken[#taken + 1] = m
      elseif t then
        local plan = plan_of(Q, q, t)
        taken_by_plan[plan] = (taken_by_plan[plan] or 0) + 1
        lease(Q, q, id, k, fields, attempt, fresh, had_slots, plan.slots, plan.sl)
        taken[#taken + 1] = m
      end
    end
    -- A job without a type (never written by jobq) stays where it is.
    if #taken == #ms then
      if #ms > 0 then
        redis.call('ZREMRANGEBYRANK', pk, 0, #ms - 1)
      end
    else
      for _, m in ipairs(taken) do
        batch_add(removed, pk, m)
      end
    end
  end
  local starts = {}
  for plan, n in pairs(taken_by_plan) do
    for _, ch in ipairs(plan.checks) do
      if not ch.gc then
        starts[ch.key] = starts[ch.key] or { n = 0, interval = ch.interval }
        starts[ch.key].n = starts[ch.key].n + n
      end
    end
  end
  for key, st in pairs(starts) do
    tats[key] = math.max(tat_of(key), now_us) + st.n * st.interval
    moved[key] = true
  end
end

-- Decides candidate c: leases it when its limits have room.
local function admit(c)
  local plan = plan_of(c[4], c[7], c[6])
  if plan.partitioned then
    admit_partitioned(c, plan)
  else
    admit_unpartitioned(c, plan)
  end
end

if #KEYS == 1 then
  local q = queue_of(KEYS[1])
  local held, whole_queue = held_back(KEYS[1], q)
  if not whole_queue and next(held) == nil and has_room_for_all(KEYS[1], q) then
    take_first_ready(KEYS[1], q)
  elseif not whole_queue then
    scan(KEYS[1], q, held, admit)
  end
else
  for _, Q in ipairs(KEYS) do
    local q = queue_of(Q)
    local held, whole_queue = held_back(Q, q)
    if not whole_queue then
      scan(Q, q, held)
    end
  end
  -- Each queue's candidates were read in claim order; merged, they are sorted once.
  table.sort(cands, by_score_then_id)
end

for _, c in ipairs(cands) do
  if #out >= limit then
    break
  end
  admit(c)
end
-- Each bucket a claim moved is written once, at its last time, relative to the claim's own present
-- (the store keeps no clock of its own).
for key in pairs(moved) do
  redis.call('SET', key, string.format('%d', tats[key]), 'PX', math.floor((tats[key] - now_us) / 1000) + 1)
end
if depth_key then
  redis.call('SET', depth_key, #out, 'PX', 5000)
end
for P, of_P in pairs(joined) do
  for f, n in pairs(of_P) do
    redis.call('HINCRBY', P .. 'used', f, n)
  end
end
batch_flush(removed, 'ZREM')
batch_flush(running, 'ZADD')
if #expired > 0 then
  release_all(expired, clock.now)
end
return out
