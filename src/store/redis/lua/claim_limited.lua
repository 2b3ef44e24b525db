-- KEYS: the prefixes of the queues to claim from (all in one hash slot on a cluster). ARGV: now key,
-- now (ms), worker, limit, flow prefix, rules (JSON).
-- A limited claim (see `store/flow.rs`): leases up to `limit` due jobs in claim order, passing over
-- the jobs that a pause, a block or a limit holds back, and records the slots and rate starts the
-- leased jobs take. Atomic like every script, so two workers never both take a limit's last slot.
--
-- The limits' state lives under the flow prefix: on a single server one prefix for the whole store
-- (limits hold across every queue); on a cluster the flow prefix is '' and each queue keeps its own
-- under `<queue prefix>flow:` (a type's limits are then counted per queue). Per (scope, partition):
--   `slots:<scope>\n<partition>`: set of "<queue prefix>\n<id>\n<attempt>", the running jobs that
--     hold a slot; a member whose job no longer runs at that attempt is dropped when counted;
--   `rate:<scope>\n<partition>`: the rate bucket's theoretical arrival time in microseconds, which
--     expires once it has passed (an expired bucket is full, the same as a time in the past).
-- Rules: ex (types excluded), pq ({queue: [types paused in it]}, "" = the whole queue), bt (blocked
-- types), bp ({type: [blocked partitions]}), lim ([{s: scope key, t: type or nil, q: queue or nil,
-- gc, rc, rp (rate count and window in ms), pf ('meta'/'payload' or nil), pk (keys)}]).
-- Returns per leased job one string, as claim.lua does, each as it was before the lease.
local nowkey, now, worker, limit, F = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]
local rules = cjson.decode(ARGV[6])
local now_us = now * 1000
local upper = '(' .. nowkey .. ';'
local excluded = set_of(rules.ex or {})
for _, t in ipairs(rules.bt or {}) do
  excluded[t] = true
end
local limits = rules.lim or {}
-- Candidates read per queue: enough to pass over the jobs held back without reading a whole backlog.
local WANT = math.min(limit * 2 + 16, 2000)

local function flow_prefix(Q)
  if F ~= '' then
    return F
  end
  return Q .. 'flow:'
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

-- Slots per key, counted once per call. The set's size is an upper bound of the live slots (a member
-- whose job has left that attempt is dropped only when counted), which is enough while it stays below
-- the limit; members are checked one by one only when the bound reaches the limit, or the set has
-- grown past twice what the last check left (so stale members never pile up).
local counts = {}
local function live(key, limit_of_key)
  local n = counts[key]
  if n then
    return n
  end
  n = redis.call('SCARD', key)
  local checked = tonumber(redis.call('GET', key .. ':checked') or '0')
  if n < limit_of_key and n < 2 * checked + 256 then
    counts[key] = n
    return n
  end
  n = 0
  for _, m in ipairs(redis.call('SMEMBERS', key)) do
    local q, id, att = string.match(m, '^(.-)\n(.-)\n(%d+)$')
    local h = q and redis.call('HMGET', jkey(q, id), 's', 'a') or {}
    if h[1] == 'running' and h[2] == att then
      n = n + 1
    else
      redis.call('SREM', key, m)
    end
  end
  redis.call('SET', key .. ':checked', n)
  counts[key] = n
  return n
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

-- Whether a limit without a partition has no room left in queue prefix Q: no free slot, or a rate
-- bucket without a start left. Such a limit holds back every job it covers, so the scan below passes
-- over them without reading them (a full limit would otherwise cost a read of every candidate).
local function full(Q, lim)
  local suffix = lim.s .. '\n'
  local P = flow_prefix(Q)
  if lim.gc and live(P .. 'slots:' .. suffix, lim.gc) >= lim.gc then
    return true
  end
  if lim.rc then
    local interval = math.max(1, math.floor(lim.rp * 1000 / lim.rc))
    if math.max(tat_of(P .. 'rate:' .. suffix), now_us) + interval - now_us > lim.rp * 1000 then
      return true
    end
  end
  return false
end

-- The candidates, per queue in claim order, merged. Jobs of types held back (excluded, paused, or
-- under a full limit) are looked at, not taken, and at most SCAN_CAP of them per priority, as in
-- claim.lua: a long run of held-back jobs ends the scan of that priority for this call.
local SCAN_CAP = 1000
local cands = {}
for _, Q in ipairs(KEYS) do
  local q = queue_of(Q)
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
  if not paused[''] then
    local found = 0
    for _, pr in ipairs(redis.call('ZRANGE', Q .. 'prios', 0, -1)) do
      if found >= WANT then
        break
      end
      local pk = pend_key(Q, pr)
      local offset, skipped = 0, 0
      while found < WANT and skipped <= SCAN_CAP do
        local ms = redis.call('ZRANGEBYLEX', pk, '-', upper, 'LIMIT', offset, WANT - found + 16)
        if #ms == 0 then
          break
        end
        for _, m in ipairs(ms) do
          local id = string.sub(m, 18)
          local t = redis.call('HGET', jkey(Q, id), 't')
          if t and not held[t] then
            cands[#cands + 1] = { tonumber(pr), m, id, Q, pk, t, q }
            found = found + 1
            if found >= WANT then
              break
            end
          else
            skipped = skipped + 1
          end
        end
        offset = offset + #ms
      end
    end
  end
end
table.sort(cands, by_score_then_id)

local out, running, removed, moved = {}, {}, {}, {}
for _, c in ipairs(cands) do
  if #out >= limit then
    break
  end
  local id, Q, pk, t, q = c[3], c[4], c[5], c[6], c[7]
  -- A limit without a partition that filled up within this claim holds back the rest of its jobs
  -- unread.
  local open = true
  for _, lim in ipairs(limits) do
    if open and not lim.pf and ((lim.t and lim.t == t) or (lim.q and lim.q == q)) and full(Q, lim) then
      open = false
    end
  end
  if open then
    local k = jkey(Q, id)
    -- A job a partition may hold back is read whole only once admitted: first its meta and payload.
    local partitioned = false
    for _, lim in ipairs(limits) do
      if lim.pf and ((lim.t and lim.t == t) or (lim.q and lim.q == q)) then
        partitioned = true
      end
    end
    local job, fields = {}, nil
    if partitioned then
      local mp = redis.call('HMGET', k, 'm', 'p')
      job.m, job.p = mp[1], mp[2]
    else
      fields = redis.call('HGETALL', k)
      for f = 1, #fields, 2 do
        job[fields[f]] = fields[f + 1]
      end
    end
    local ok = true
    local slots, starts = {}, {}
    local type_partition = nil
    for _, lim in ipairs(limits) do
      if ok and ((lim.t and lim.t == t) or (lim.q and lim.q == q)) then
        local part = field_of(job, lim)
        if lim.t and lim.pf then
          type_partition = part
        end
        local P = flow_prefix(Q)
        local suffix = lim.s .. '\n' .. part
        if lim.gc then
          local key = P .. 'slots:' .. suffix
          if live(key, lim.gc) >= lim.gc then
            ok = false
          else
            slots[#slots + 1] = key
          end
        end
        if ok and lim.rc then
          local key = P .. 'rate:' .. suffix
          local interval = math.max(1, math.floor(lim.rp * 1000 / lim.rc))
          local next_tat = math.max(tat_of(key), now_us) + interval
          if next_tat - now_us > lim.rp * 1000 then
            ok = false
          else
            starts[#starts + 1] = { key, next_tat }
          end
        end
      end
    end
    if ok and type_partition and rules.bp and rules.bp[t] then
      for _, p in ipairs(rules.bp[t]) do
        if p == type_partition then
          ok = false
        end
      end
    end
    if ok then
      if not fields then
        fields = redis.call('HGETALL', k)
        for f = 1, #fields, 2 do
          job[fields[f]] = fields[f + 1]
        end
      end
      local attempt = tonumber(job.a or '0')
      local member = Q .. '\n' .. id .. '\n' .. (attempt + 1)
      for _, key in ipairs(slots) do
        redis.call('SADD', key, member)
        counts[key] = counts[key] + 1
      end
      for _, s in ipairs(starts) do
        tats[s[1]] = s[2]
        moved[s[1]] = true
      end
      batch_add(removed, pk, c[2])
      batch_add(running, Q .. 'run', now, id)
      if job.hb or job.pg then
        redis.call('HSET', k, 's', 'running', 'a', attempt + 1, 'w', worker, 'st', now, 'hb', now, 'pg', '')
      else
        redis.call('HSET', k, 's', 'running', 'a', attempt + 1, 'w', worker, 'st', now)
      end
      out[#out + 1] = packed(fields, q, id)
    end
  end
end
-- Each bucket a claim moved is written once, at its last time, relative to the claim's own present
-- (the store keeps no clock of its own).
for key in pairs(moved) do
  redis.call('SET', key, string.format('%d', tats[key]), 'PX', math.floor((tats[key] - now_us) / 1000) + 1)
end
batch_flush(removed, 'ZREM')
batch_flush(running, 'ZADD')
return out
