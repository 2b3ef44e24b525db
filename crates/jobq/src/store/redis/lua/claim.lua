-- KEYS: the prefixes of the queues to claim from (all in one hash slot on a cluster). ARGV: now key,
-- now, worker, limit, peek (1 to only look), excluded type count, types…
-- Leases up to `limit` due jobs, smallest (priority, run_at, id) first across the queues; a job whose
-- expiry the server's clock has passed is ended `expired` instead (so a claim may return fewer jobs
-- than were ready). Returns per
-- job one string: its hash's fields, then `q` and `id` (see `packed`). A peek changes nothing and
-- returns per candidate its priority and "<run key>:<id>" instead, best first: what a claim would
-- take.
local nowkey, now, worker, limit, peek = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5] == '1'
local excluded = take(7, tonumber(ARGV[6]))
local skip = set_of(excluded)
local filtering = #excluded > 0
local upper = '(' .. nowkey .. ';'
-- Jobs of excluded types looked at per priority before giving up on it for this call.
local SCAN_CAP = 1000

local cands = {}
for _, Q in ipairs(KEYS) do
  local prios_key = Q .. 'prios'
  local found = 0
  for _, pr in ipairs(redis.call('ZRANGE', prios_key, 0, -1)) do
    if found >= limit then
      break
    end
    local pk = pend_key(Q, pr)
    local offset, scanned = 0, 0
    while found < limit and scanned <= SCAN_CAP do
      local want = limit - found
      if filtering then
        want = want + 16
      end
      local ms = redis.call('ZRANGEBYLEX', pk, '-', upper, 'LIMIT', offset, want)
      if #ms == 0 then
        break
      end
      for _, m in ipairs(ms) do
        local id = string.sub(m, 18)
        if not filtering or not skip[redis.call('HGET', jkey(Q, id), 't')] then
          cands[#cands + 1] = { tonumber(pr), m, id, Q, pk }
          found = found + 1
          if found >= limit then
            break
          end
        end
      end
      offset = offset + #ms
      scanned = scanned + #ms
    end
    if not peek and redis.call('ZCARD', pk) == 0 then
      redis.call('ZREM', prios_key, pr)
    end
  end
end
if #KEYS > 1 then
  table.sort(cands, by_score_then_id)
end

local out = {}
if peek then
  for n = 1, math.min(limit, #cands) do
    out[#out + 1] = { cands[n][1], cands[n][2] }
  end
  return out
end

-- Each job is read as it was, then leased: the caller applies the same changes to what it got back
-- (status, worker, attempt + 1, start and heartbeat times, no progress).
local taken, prefix, running = {}, {}, {}
-- Jobs found expired instead of leased, and the server's clock once read (`expired_at_claim`).
local expired, clock = {}, {}
local names = {}
for _, Q in ipairs(KEYS) do
  names[Q] = queue_of(Q)
end
for n = 1, math.min(limit, #cands) do
  local c = cands[n]
  local id, Q, pk = c[3], c[4], c[5]
  local k = jkey(Q, id)
  if filtering then
    batch_add(taken, pk, c[2])
  else
    -- Without skipped types, the jobs taken from a set are its first ones.
    prefix[pk] = (prefix[pk] or 0) + 1
  end
  local job = redis.call('HGETALL', k)
  local attempt, beat, progress, slots, xa = 0, false, false, false, false
  for f = 1, #job, 2 do
    local name = job[f]
    if name == 'a' then
      attempt = tonumber(job[f + 1])
    elseif name == 'hb' then
      beat = true
    elseif name == 'pg' then
      progress = true
    elseif name == 'sl' then
      slots = true
    elseif name == 'xa' then
      xa = job[f + 1]
    end
  end
  -- A job past its expiry by the server's clock is never leased: it ends here instead.
  if not expired_at_claim(Q, id, xa, clock, expired) then
    batch_add(running, Q .. 'run', now, id)
    -- The slots an earlier lease took under a limit (claim_limited.lua) are not this lease's: left in
    -- `sl`, its end would give them back a second time.
    if slots then
      redis.call('HDEL', k, 'sl')
    end
    -- A first attempt has no heartbeat or progress to reset: its start time stands for its first
    -- heartbeat, and two fields fewer is less work on the drain path.
    if beat or progress then
      redis.call('HSET', k, 's', 'running', 'a', attempt + 1, 'w', worker, 'st', now, 'hb', now, 'pg', '')
    else
      redis.call('HSET', k, 's', 'running', 'a', attempt + 1, 'w', worker, 'st', now)
    end
    out[#out + 1] = packed(job, names[Q], id)
  end
end
batch_flush(taken, 'ZREM')
for pk, count in pairs(prefix) do
  redis.call('ZREMRANGEBYRANK', pk, 0, count - 1)
end
batch_flush(running, 'ZADD')
if #expired > 0 then
  release_all(expired, clock.now)
end
return out
