-- Shared by every script (prepended to each, after a `#!lua` line). Every key of a queue starts with
-- the queue's prefix, `<prefix>{<queue>}:`, which a script gets in KEYS: the `{<queue>}` hash tag puts
-- them all in one hash slot, so on Redis Cluster a script runs on the one node that owns its queue.
-- (The shebang makes a cluster refuse a script that strays into another slot.) Batches name their
-- jobs by id and the script builds the keys, all inside the declared queue's slot.
local ERROR_CAP = 25
-- A job's max attempts when its hash has none: `job::DEFAULT_MAX_ATTEMPTS` (a unit test checks).
local DEFAULT_MAX_ATTEMPTS = '5'

local function jkey(Q, id)
  return Q .. 'job:' .. id
end

-- The queue a prefix `<prefix>{<queue>}:` names (queue names hold no braces). A job's hash does not
-- hold its queue: scripts that return jobs add it.
local function queue_of(Q)
  return string.match(Q, '{([^{}]*)}:$')
end

-- A job for a reply: `q`, its queue, `id`, its id, then its hash's fields as HGETALL gives them, all
-- joined by byte 0xFF, which no value holds (jobq writes only UTF-8, where that byte never occurs).
-- One string per job costs jobq far less to read than an array of twenty, and joining it in C costs
-- Redis less than replying with the array.
local function packed(fields, q, id)
  if #fields == 0 then
    return 'q\255' .. q .. '\255id\255' .. id
  end
  return 'q\255' .. q .. '\255id\255' .. id .. '\255' .. table.concat(fields, '\255')
end

-- The order of (number, id) pairs, by number then id: claim order, and replay's oldest death first.
local function by_score_then_id(a, b)
  if a[1] ~= b[1] then
    return a[1] < b[1]
  end
  return a[2] < b[2]
end

-- A pending job sits in the lex-ordered set of its priority, as "<run_at key>:<id>".
local function pend_key(Q, pr)
  return Q .. 'pend:' .. pr
end

-- Every job of a queue, newest first: `{q}:made`, scored by created_at, so that same-time jobs sort by
-- id as list order wants (`list.lua`). Written where a job is created and removed where it is deleted.
local function made_key(Q)
  return Q .. 'made'
end

-- A job's priority is absent from its hash when it is 0.
local function index_pending(Q, id, pr, r)
  pr = pr or '0'
  redis.call('ZADD', pend_key(Q, pr), '0', r .. ':' .. id)
  redis.call('ZADD', Q .. 'prios', pr, pr)
end

-- Blocked jobs, waiting for their dependencies to end (see `release_dependents`), by creation time.
local function blocked_key(Q)
  return Q .. 'blocked'
end

-- Takes a job out of the index of its status (blocked, pending, running, waiting or one of the
-- terminal ones).
local function unindex(Q, id, s, pr, r)
  if s == 'pending' then
    redis.call('ZREM', pend_key(Q, pr or '0'), r .. ':' .. id)
  elseif s == 'blocked' then
    redis.call('ZREM', blocked_key(Q), id)
  elseif s == 'running' then
    redis.call('ZREM', Q .. 'run', id)
  elseif s == 'waiting' then
    redis.call('ZREM', Q .. 'wait', id)
  else
    redis.call('ZREM', Q .. 'done:' .. s, id)
  end
end

-- A job that stops being live gives up its unique key.
local function free_unique(Q, u, id)
  if u and redis.call('HGET', Q .. 'uniq', u) == id then
    redis.call('HDEL', Q .. 'uniq', u)
  end
end

-- Appends one pre-encoded error entry to the job's history, keeping the newest ERROR_CAP.
local function push_error(k, entry)
  local e = redis.call('HGET', k, 'e')
  if not e then
    redis.call('HSET', k, 'e', '[' .. entry .. ']', 'ec', 1)
    return
  end
  local n = tonumber(redis.call('HGET', k, 'ec') or '0') + 1
  if n <= ERROR_CAP then
    redis.call('HSET', k, 'e', string.sub(e, 1, -2) .. ',' .. entry .. ']', 'ec', n)
  else
    local list = cjson.decode(e)
    table.insert(list, cjson.decode(entry))
    while #list > ERROR_CAP do
      table.remove(list, 1)
    end
    redis.call('HSET', k, 'e', cjson.encode(list), 'ec', #list)
  end
end

local function error_entry(attempt, at, text)
  return '{"attempt":' .. attempt .. ',"at":' .. at .. ',"error":' .. cjson.encode(text) .. '}'
end

-- Tells idle workers that the queue may have work: its wake-up stream, capped at a hundred or two
-- entries. The cap is approximate (`~`): Redis then drops whole nodes of the stream now and then
-- instead of one entry on every add, 1.2 µs an XADD against 6.2 (redis-benchmark), a fifth of a
-- one-job enqueue's time on the server. Readers only ever ask for entries newer than the last seen.
local function wake(Q)
  redis.call('XADD', Q .. 'wake', 'MAXLEN', '~', '64', '*', 'w', '1')
end

-- Reads `n` arguments from position `i` on; returns them and the next position.
local function take(i, n)
  local out = {}
  for j = 0, n - 1 do
    out[#out + 1] = ARGV[i + j]
  end
  return out, i + n
end

local function set_of(list)
  local s = {}
  for _, v in ipairs(list) do
    s[v] = true
  end
  return s
end

-- A job hash's status; a job enqueued and never touched since has none, and is pending.
local function status_of(s)
  return s or 'pending'
end

-- Gathers the arguments of one command per key, sent at the end of a script in a few large calls
-- instead of one call per job: `batch_add(b, key, score, member)` then `batch_flush(b, 'ZADD')`
-- (`member` alone for ZREM). Only for writes that nothing later in the same script reads back.
local function batch_add(b, key, first, second)
  local args = b[key]
  if not args then
    args = {}
    b[key] = args
  end
  args[#args + 1] = first
  if second ~= nil then
    args[#args + 1] = second
  end
end

local function batch_flush(b, command)
  for key, args in pairs(b) do
    for n = 1, #args, 1000 do
      redis.call(command, key, unpack(args, n, math.min(n + 999, #args)))
    end
  end
end

local slot_lists = {}

-- A lease's `sl` (not empty) as a list, decoded once per call for each value, and whether it names
-- counters ('#' first) rather than the earlier version's sets.
local function decode_slot_list(sl)
  local counters = string.byte(sl, 1) == 35
  local list = slot_lists[sl]
  if not list then
    list = cjson.decode(counters and string.sub(sl, 2) or sl)
    slot_lists[sl] = list
  end
  return list, counters
end

-- A limited job leaves its slots when its lease ends: `sl`, written by `claim_limited.lua`, names the
-- slot counters its lease counted in: '#' and the JSON list of the counters' hash (`flow:used` under
-- its flow prefix) and fields. The counts are gathered per call (the jobs of a call mostly share one
-- list, decoded once) and written by `release_slots`, one HINCRBY per counter. A lease taken by a
-- version that kept a set per slot has a plain JSON list of those sets instead, and leaves them as
-- it did, a member "<queue prefix>\n<id>\n<attempt>" each. (A count left behind by a path that does
-- not call this is mended when `claim_limited.lua` next recounts the running jobs.)
local freed_counts, freed_members = {}, {}
local function free_slots(Q, id, attempt, sl)
  if not sl or sl == '' then
    return
  end
  local list, counters = decode_slot_list(sl)
  if counters then
    local fields = freed_counts[list[1]]
    if not fields then
      fields = {}
      freed_counts[list[1]] = fields
    end
    for i = 2, #list do
      fields[list[i]] = (fields[list[i]] or 0) + 1
    end
  else
    local member = Q .. '\n' .. id .. '\n' .. attempt
    for _, key in ipairs(list) do
      batch_add(freed_members, key, member)
    end
  end
end

-- Writes what `free_slots` gathered since the last call. A counter at zero stays until the next
-- recount (a partition's lane empties and fills again all the time, and a field less and more again
-- would cost a command each way); one below zero (given back twice, which no path does) leaves.
local function release_slots()
  for key, fields in pairs(freed_counts) do
    for field, n in pairs(fields) do
      if redis.call('HINCRBY', key, field, -n) < 0 then
        redis.call('HDEL', key, field)
      end
    end
  end
  batch_flush(freed_members, 'SREM')
  freed_counts, freed_members = {}, {}
end

-- How long a cluster's enqueues trust the marker that says the queue is registered. Cleanup deletes
-- the marker when it takes an emptied queue out of the registry, so the expiry only mends a
-- registration that failed after its script ran (the connection dropped between the two calls).
local LISTED_MS = 60000

-- Puts the queue in the registry (KEYS[2] of the scripts that create jobs, on a single server), in
-- the same script as its jobs (one round trip per enqueue). On a
-- cluster the registry is a key of another slot, which a script may not touch: the script keeps a
-- marker in the queue's own slot instead and answers 1 when it was missing, and only then does the
-- caller add the queue with a command of its own, after this script (see `forget_queue` for why after).
local function register_queue(Q, registry)
  if registry then
    redis.call('SADD', registry, queue_of(Q))
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
local function hset_args(t, m, pr, ma, to, u, xa)
  local a = { '', 't', t, 'p', '', 'r', '', 'c', '' }
  local function opt(field, value, default)
    if value and value ~= default then
      a[#a + 1] = field
      a[#a + 1] = value
    end
  end
  opt('pr', pr, '0')
  opt('ma', ma, DEFAULT_MAX_ATTEMPTS)
  opt('m', m, '')
  opt('to', to, '')
  opt('u', u, '')
  opt('xa', xa, '')
  return a
end

-- Puts a new job with an expiry (`xa`, not '') into its queue's index of expiries (`expiry`, scored
-- by it), which the sweep (`expire.lua`) reads. A claim takes out the job it leases
-- (`expired_at_claim`); a job cancelled or deleted stays until its expiry comes, and the sweep then
-- drops it.
local function index_expiry(Q, id, xa)
  if xa and xa ~= '' then
    redis.call('ZADD', Q .. 'expiry', xa, id)
  end
end

-- A job's status ('pending' when its hash holds none), or false when there is no such job.
local function job_status(Q, id)
  local k = jkey(Q, id)
  local s = redis.call('HGET', k, 's')
  if s then
    return s
  end
  if redis.call('EXISTS', k) == 1 then
    return 'pending'
  end
  return false
end

-- Dependencies (see `job/dependency.rs` and `Store::enqueue`). A job enqueued after others waits
-- `blocked` (in `blocked_key`), with one edge per dependency, written on both sides while it is open:
-- the dependent's `after:<id>` hash maps each dependency's id to '<state> <rule> <queue>' (state
-- open, met or broken; rule success, finish or failure) and its hash's `ao` counts the open edges;
-- the dependency's `dependents:<id>` hash maps '<queue>\n<id>' of each dependent whose edge is open
-- to the rule, and its hash's `dn` counts them, so that a script that ends a job learns whether any
-- job waits for it from the HMGET it makes anyway. When one job waits for it, its hash also names that
-- job's member in `d1` (see `count_dependent`), so that its end, in a flow of thousands of children
-- each awaited by one parent, reads no `dependents:` hash. Every edge is resolved once: the
-- dependency's `dn` (and `d1`) is deleted when it ends, and the dependent's edge leaves the state
-- open once. Both hashes stay as long as their job does (`jobq show` lists both sides), and a job
-- with dependencies holds `af` for good (its envelope carries how they ended).
local ENDED = { succeeded = true, dead = true, cancelled = true, discarded = true, expired = true }

local function after_key(Q, id)
  return Q .. 'after:' .. id
end

local function dependents_key(Q, id)
  return Q .. 'dependents:' .. id
end

-- Counts in job key `k`'s `dn` one more job whose edge to it is open, `member` of its `dependents:`
-- hash, which the caller has written there. `d1` names the member while it is the only one counted:
-- set when `dn` becomes 1, deleted when it becomes 2 and when `dn` goes (see `uncount_dependent`,
-- `settle`), so that a hash holding `d1` holds `dn` 1 and no other member of its `dependents:` hash
-- has an open edge.
local function count_dependent(k, member)
  local n = redis.call('HINCRBY', k, 'dn', 1)
  if n == 1 then
    redis.call('HSET', k, 'd1', member)
  elseif n == 2 then
    redis.call('HDEL', k, 'd1')
  end
end

-- Counts in job key `k`'s `dn` one job fewer whose edge to it is open (see `count_dependent`).
local function uncount_dependent(k)
  if redis.call('HINCRBY', k, 'dn', -1) <= 0 then
    redis.call('HDEL', k, 'dn', 'd1')
  end
end

-- The prefix of queue `q` under the same key prefix as `Q`. On a cluster an edge between two slots is
-- marked (see `remote_queue`) and never followed by a script, so a script never leaves its slot
-- there; on a single server the ends of an edge may be of any queues. Remembered for the script's
-- run: a flow's insert and a parent's edges ask it once per edge, of a queue or two.
local siblings = {}
local function sibling(Q, q)
  local of_Q = siblings[Q]
  if not of_Q then
    of_Q = {}
    siblings[Q] = of_Q
  end
  local prefix = of_Q[q]
  if not prefix then
    prefix = string.sub(Q, 1, -(#queue_of(Q) + 4)) .. '{' .. q .. '}:'
    of_Q[q] = prefix
  end
  return prefix
end

-- On a Redis Cluster, an edge between queues of two hash slots is marked by a `~` before the other
-- end's queue (queue names hold none): `open success ~A` in the dependent's `after:` hash, `~B\n<id>`
-- in the dependency's `dependents:` hash. No script reaches across such an edge: the end of its
-- dependency goes into an outbox in the dependency's slot, `{A}:outbox:B`, one entry
-- `<dependent>\n<dependency>\n<status>\n<time>` per edge, which workers of the dependent's queue
-- apply (`outbox_apply.lua`, `redis/outbox.rs`). Returns the other queue of a marked edge, else nil.
local function remote_queue(q)
  if string.byte(q, 1) == 126 then
    return string.sub(q, 2)
  end
  return nil
end

-- Whether a dependency that ended in `status` lets a job that waits for it by `rule` run (as
-- `DependOn::met_by`).
local function met_by(rule, status)
  if rule == 'success' then
    return status == 'succeeded'
  elseif rule == 'failure' then
    return status == 'dead' or status == 'discarded'
  end
  return true
end

-- Why a blocked job can never run: `job::NO_DEPENDENCY_MET_ERROR` for one that waits for any of its
-- dependencies, `job::broken_dependency_error` for one that waits for all.
local NO_DEPENDENCY_MET = 'no dependency ended the way this job waits for, and it runs only at the first that does'

local function broken_dependency(dep, status, rule)
  return 'dependency ' .. dep .. ' ended ' .. status .. ', and this job runs only on its ' .. rule
end

-- Takes blocked job `id` of `Q` (its hash's 's', 'pr', 'r', 'u', 'a', 'dn', 'aj', 'd1' in `h`) out
-- of waiting: cancelled at `now` with the error `text` (and into `ended` if jobs wait for it, so that
-- they are resolved in turn), or, without a text, pending, its queue into `woken`.
local function unblock(Q, id, h, text, now, ended, woken)
  local k = jkey(Q, id)
  redis.call('ZREM', blocked_key(Q), id)
  if text then
    redis.call('HSET', k, 's', 'cancelled', 'f', now)
    push_error(k, error_entry(h[5] or '0', now, text))
    redis.call('ZADD', Q .. 'done:cancelled', now, id)
    free_unique(Q, h[4], id)
    if h[6] then
      ended[#ended + 1] = { Q, id, 'cancelled', h[8] }
    end
  else
    redis.call('HSET', k, 's', 'pending')
    index_pending(Q, id, h[2], h[3])
    woken[Q] = true
  end
end

-- Resolves the open edges from job `id` of `Q` to dependencies that ended, `edges` ({ dependency,
-- status it ended in }, in the order they ended): each met or broken by its rule, all in one write
-- of its `after:` hash and one of its count of open edges (a job after ten thousand others, whose ends
-- come a batch at a time, is read and written once per batch, not once per end). A blocked job
-- becomes pending when no edge is left open and none broke (its queue goes into `woken`), or is
-- cancelled at `now` when one broke (with the error of `job::broken_dependency_error`, naming the
-- first that broke), and then, if jobs wait for it, goes into `ended` so that its own dependents are
-- resolved in turn. A job that waits for any of its dependencies (`aj`, `Join::Any`) becomes
-- pending when one is met, and is cancelled (`job::NO_DEPENDENCY_MET_ERROR`) when no edge is left
-- open and none was met. A job that is not blocked any more has its edges marked, no more. An edge
-- that is not open (or a dependent that is gone) is left as it is, and a dependency named twice
-- counts once.
local function resolve_edges(Q, id, edges, now, ended, woken)
  local ak = after_key(Q, id)
  local names, seen = {}, {}
  for _, e in ipairs(edges) do
    if not seen[e[1]] then
      seen[e[1]] = true
      names[#names + 1] = e
    end
  end
  local marks, resolved, met_one, first_broken = { ak }, 0, false, nil
  -- In calls of up to 500 fields (Lua's `unpack` has a bound).
  for from = 1, #names, 500 do
    local chunk, fields = {}, {}
    for i = from, math.min(from + 499, #names) do
      chunk[#chunk + 1] = names[i]
      fields[#fields + 1] = names[i][1]
    end
    local current = redis.call('HMGET', ak, unpack(fields))
    for i, e in ipairs(chunk) do
      local state, rule, rest
      if current[i] then
        state, rule, rest = string.match(current[i], '^(%S+) (%S+) (.*)$')
      end
      if state == 'open' then
        local met = met_by(rule, e[2])
        marks[#marks + 1] = e[1]
        marks[#marks + 1] = (met and 'met ' or 'broken ') .. rule .. ' ' .. rest
        if #marks > 1000 then
          redis.call('HSET', unpack(marks))
          marks = { ak }
        end
        resolved = resolved + 1
        if met then
          met_one = true
        elseif not first_broken then
          first_broken = { e[1], e[2], rule }
        end
      end
    end
  end
  if resolved == 0 then
    return
  end
  if #marks > 1 then
    redis.call('HSET', unpack(marks))
  end
  local k = jkey(Q, id)
  local open = redis.call('HINCRBY', k, 'ao', -resolved)
  if open <= 0 then
    redis.call('HDEL', k, 'ao')
  end
  local h = redis.call('HMGET', k, 's', 'pr', 'r', 'u', 'a', 'dn', 'aj', 'd1')
  if h[1] ~= 'blocked' then
    return
  end
  local any = h[7] == '1'
  local text
  if any then
    if not met_one then
      if open > 0 then
        return
      end
      text = NO_DEPENDENCY_MET
    end
  elseif first_broken then
    text = broken_dependency(first_broken[1], first_broken[2], first_broken[3])
  elseif open > 0 then
    return
  end
  unblock(Q, id, h, text, now, ended, woken)
end

-- Resolves the open edge from job `id` of `Q` to its dependency `dep`, which ended in `status` (see
-- `resolve_edges`).
local function resolve_edge(Q, id, dep, status, now, ended, woken)
  resolve_edges(Q, id, { { dep, status } }, now, ended, woken)
end

-- Resolves the open edges of the jobs that wait for each job of `ended` ({ queue prefix, id, status
-- it ended in, its `d1` if its hash held one, true if the job was deleted }), and of those it cancels
-- in turn (appended to `ended` as they are): a cascade in rounds rather than by recursion, so that a
-- long chain cannot exhaust Lua's stack. Each round gathers the ends by the job that waits for them,
-- so that a job waiting for many of one round's jobs is resolved once (`resolve_edges`). A job's `d1`
-- stands for its `dependents:` hash, which is then not read. Each job's side of its edges is deleted
-- once resolved. The queues where jobs became pending go into `woken`, for the caller to wake once
-- each. The `dependents:` hash of a job that is still there stays (what `edges` reads), and goes
-- with a job that was deleted. An edge to another slot of a cluster goes to the outbox (see
-- `remote_queue`).
local function settle(ended, now, woken)
  local n = 1
  while ended[n] do
    local last = #ended
    local waiting_for, order = {}, {}
    for e = n, last do
      local Q, id, status, only, deleted = ended[e][1], ended[e][2], ended[e][3], ended[e][4], ended[e][5]
      local dk = dependents_key(Q, id)
      local waiting = only and { only } or redis.call('HKEYS', dk)
      for _, member in ipairs(waiting) do
        local q, dependent = string.match(member, '^([^\n]*)\n(.*)$')
        local far = remote_queue(q)
        if far then
          redis.call('RPUSH', Q .. 'outbox:' .. far, dependent .. '\n' .. id .. '\n' .. status .. '\n' .. now)
        else
          local DQ = sibling(Q, q)
          local key = jkey(DQ, dependent)
          local group = waiting_for[key]
          if not group then
            group = { DQ, dependent, {} }
            waiting_for[key] = group
            order[#order + 1] = group
          end
          group[3][#group[3] + 1] = { id, status }
        end
      end
      if deleted then
        redis.call('DEL', dk)
      else
        redis.call('HDEL', jkey(Q, id), 'dn', 'd1')
      end
    end
    n = last + 1
    for _, group in ipairs(order) do
      resolve_edges(group[1], group[2], group[3], now, ended, woken)
    end
  end
end

-- The release of the dependents of jobs that have ended, in the script that ends them: `ended` holds
-- { queue prefix, id, terminal status, its `d1`, deleted } per job (see `settle`), each a job whose
-- hash holds (or held, before the script deleted it) `dn` (a job that no one waits for then costs
-- one field of a read the script makes anyway). A script that ends several jobs may gather them and
-- release them all at the end, as the SQL stores release a statement's jobs after it: then a job it
-- ends itself is not first ended by a cascade from another. The queues in `woken` (if given: where
-- the script made jobs pending itself) are woken with the rest.
local function release_all(ended, now, woken)
  woken = woken or {}
  settle(ended, now, woken)
  for WQ in pairs(woken) do
    wake(WQ)
  end
end

-- The server's clock in milliseconds: expiry is judged by it, whatever the clocks of the workers.
local function server_millis()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Ends job `id` of Q, which has not started and is out of its status index already, `expired` at
-- `now`. `u`, `dn` and `d1` are its hash's fields of those names; the jobs that wait for it go into
-- `ended`, for the caller's `release_all`.
local function end_expired(Q, id, u, dn, d1, now, ended)
  redis.call('HSET', jkey(Q, id), 's', 'expired', 'f', now)
  redis.call('ZADD', Q .. 'done:expired', now, id)
  redis.call('ZREM', Q .. 'expiry', id)
  free_unique(Q, u, id)
  if dn then
    ended[#ended + 1] = { Q, id, 'expired', d1 }
  end
end

-- Whether a claim must refuse job `id` of Q, out of its pending set already, whose expiry is `xa`
-- (false for none): then it ends `expired` at the server's time, which `clock.now` keeps for the
-- rest of the script (read once, and only when a job has an expiry). A job the claim leases leaves
-- the index of expiries: it started in time, and the sweep has nothing to do for it (a retry that
-- comes due after its expiry is ended by the claim that meets it).
local function expired_at_claim(Q, id, xa, clock, ended)
  if not xa then
    return false
  end
  clock.now = clock.now or server_millis()
  if tonumber(xa) > clock.now then
    redis.call('ZREM', Q .. 'expiry', id)
    return false
  end
  local h = redis.call('HMGET', jkey(Q, id), 'u', 'dn', 'd1')
  end_expired(Q, id, h[1], h[2], h[3], clock.now, ended)
  return true
end

-- The release of one job's dependents when it has ended in `status` at `now` (see `release_all`).
local function release_dependents(Q, id, status, now)
  release_all({ { Q, id, status } }, now)
end

-- Whether the last error of a job names `dep` as the dependency that cancelled it (the text of
-- `job::broken_dependency_error`), in the job's history `errors` (JSON).
local function cancelled_by(errors, dep)
  if not errors then
    return false
  end
  local history = cjson.decode(errors)
  local last = history[#history]
  return last ~= nil and type(last.error) == 'string'
    and string.find(last.error, 'dependency ' .. dep .. ' ended ', 1, true) == 1
end

-- Brings back the cancelled job `id` of `XQ`, whose edge to `dep` broke, when its last error names
-- `dep`, each of its dependencies is live or ended the way its rule asks, and its unique key is
-- free: its edges open again to the live ones (their `dn` counts it) and met to the others, and it is
-- blocked. An edge to another slot of a cluster cannot be read from here: the one to `dep` (brought
-- back itself, so live) opens again, its side kept by the `dependents:` hash of `dep` (whose `dn` the
-- caller's slot counted); another stays as it stands (an open one is still linked there), unless it
-- broke. Returns whether it came back.
local function reopen(XQ, id, dep)
  local k = jkey(XQ, id)
  local h = redis.call('HMGET', k, 't', 's', 'u', 'e', 'c')
  if not h[1] or h[2] ~= 'cancelled' or not cancelled_by(h[4], dep) then
    return false
  end
  local ak = after_key(XQ, id)
  local edges = redis.call('HGETALL', ak)
  local open, met, kept = {}, {}, 0
  for f = 1, #edges, 2 do
    local state, rule, q = string.match(edges[f + 1], '^(%S+) (%S+) (.*)$')
    if remote_queue(q) then
      if edges[f] == dep then
        open[#open + 1] = { edges[f], rule, q, true }
      elseif state == 'broken' then
        return false
      elseif state == 'open' then
        kept = kept + 1
      end
    else
      local status = job_status(sibling(XQ, q), edges[f])
      if status and not ENDED[status] then
        open[#open + 1] = { edges[f], rule, q }
      elseif status and met_by(rule, status) then
        met[#met + 1] = { edges[f], rule, q }
      else
        return false
      end
    end
  end
  if #open + kept == 0 then
    return false
  end
  if h[3] and redis.call('HSETNX', XQ .. 'uniq', h[3], id) == 0 then
    return false
  end
  local member = queue_of(XQ) .. '\n' .. id
  for _, e in ipairs(open) do
    redis.call('HSET', ak, e[1], 'open ' .. e[2] .. ' ' .. e[3])
    if not e[4] then
      local DQ = sibling(XQ, e[3])
      redis.call('HSET', dependents_key(DQ, e[1]), member, e[2])
      count_dependent(jkey(DQ, e[1]), member)
    end
  end
  for _, e in ipairs(met) do
    redis.call('HSET', ak, e[1], 'met ' .. e[2] .. ' ' .. e[3])
  end
  redis.call('HSET', k, 's', 'blocked', 'ao', #open + kept)
  redis.call('HDEL', k, 'f')
  redis.call('ZREM', XQ .. 'done:cancelled', id)
  redis.call('ZADD', blocked_key(XQ), h[5] or 0, id)
  return true
end

-- The cascade of a replay (see `replay.lua`): from each job of `level` ({ queue prefix, id }, jobs
-- just brought back), the jobs its failure cancelled come back (`reopen`), and theirs in turn, each
-- appended to `out` packed. A dependent in another slot of a cluster cannot be reached: the job it
-- waits for counts it in `dn` at once (it may come back, and an extra count only costs its end a
-- read), and { dependency, its queue, the dependent's queue, the dependent } goes into `far`.
local function reopen_cascade(level, out, far)
  local n, seen = 1, {}
  while level[n] do
    local DQ, dep = level[n][1], level[n][2]
    n = n + 1
    local waiting = redis.call('HKEYS', dependents_key(DQ, dep))
    for _, m in ipairs(waiting) do
      local q, x = string.match(m, '^([^\n]*)\n(.*)$')
      local there = remote_queue(q)
      if there then
        count_dependent(jkey(DQ, dep), m)
        far[#far + 1] = dep
        far[#far + 1] = queue_of(DQ)
        far[#far + 1] = there
        far[#far + 1] = x
      else
        local XQ = sibling(DQ, q)
        local key = XQ .. x
        if not seen[key] then
          seen[key] = true
          if reopen(XQ, x, dep) then
            level[#level + 1] = { XQ, x }
            out[#out + 1] = packed(redis.call('HGETALL', jkey(XQ, x)), q, x)
          end
        end
      end
    end
  end
end

-- For a job that leaves the store while it may still wait (deleted, or replaced by an import): takes
-- its edges out of its dependencies' `dependents:` hashes (the open ones out of their counts too),
-- and deletes its `after:` hash. Call it only for a job whose hash holds `ao`. (A dependency that
-- ends later would find the edge gone from the dependent's side and leave it, but until then its
-- `dn` would count a job that no longer waits, and its end would read a member for nothing.)
local function unlink_dependent(Q, id)
  local ak = after_key(Q, id)
  local edges = redis.call('HGETALL', ak)
  local member = queue_of(Q) .. '\n' .. id
  for f = 1, #edges, 2 do
    local state, q = string.match(edges[f + 1], '^(%S+) %S+ (.*)$')
    -- (A dependency in another slot keeps its side: its end posts an entry the outbox's reader
    -- drops, see `outbox_apply.lua`.)
    local DQ = not remote_queue(q) and sibling(Q, q)
    if DQ and redis.call('HDEL', dependents_key(DQ, edges[f]), member) == 1 and state == 'open' then
      -- (On a dependency deleted in the same script, this makes and empties a hash, which Redis
      -- then removes.)
      uncount_dependent(jkey(DQ, edges[f]))
    end
  end
  redis.call('DEL', ak)
end
