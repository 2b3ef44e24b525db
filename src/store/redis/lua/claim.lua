-- ARGV: prefix, now key, now, worker, limit, queue count, queues…, excluded type count, types…, inbox
-- count, inbox keys…
-- Leases up to `limit` due jobs, smallest (priority, run_at, id) first across the queues. Returns the
-- waiting inbox items' count, then per job its id and its hash as field/value pairs.
local nowkey, now, worker, limit = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local queues, i = take(7, tonumber(ARGV[6]))
local excluded, j = take(i + 1, tonumber(ARGV[i]))
local inboxes = take(j + 1, tonumber(ARGV[j]))
local skip = set_of(excluded)
local filtering = #excluded > 0
local upper = '(' .. nowkey .. ';'
-- Jobs of excluded types looked at per priority before giving up on it for this call.
local SCAN_CAP = 1000

local cands = {}
for _, q in ipairs(queues) do
  local prios_key = qkey(q, 'prios')
  local found = 0
  for _, pr in ipairs(redis.call('ZRANGE', prios_key, 0, -1)) do
    if found >= limit then
      break
    end
    local pk = pend_key(q, pr)
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
        if not filtering or not skip[redis.call('HGET', jkey(id), 't')] then
          cands[#cands + 1] = { tonumber(pr), m, id, q, pk }
          found = found + 1
          if found >= limit then
            break
          end
        end
      end
      offset = offset + #ms
      scanned = scanned + #ms
    end
    if redis.call('ZCARD', pk) == 0 then
      redis.call('ZREM', prios_key, pr)
    end
  end
end
if #queues > 1 then
  table.sort(cands, function(a, b)
    if a[1] ~= b[1] then
      return a[1] < b[1]
    end
    return a[2] < b[2]
  end)
end

local waiting = 0
for _, key in ipairs(inboxes) do
  waiting = waiting + redis.call('LLEN', key)
end
local out = { waiting }
local taken, running = {}, {}
for n = 1, math.min(limit, #cands) do
  local c = cands[n]
  local id, q = c[3], c[4]
  local k = jkey(id)
  batch_add(taken, c[5], c[2])
  batch_add(running, qkey(q, 'run'), now, id)
  redis.call('HINCRBY', k, 'a', 1)
  redis.call('HSET', k, 's', 'running', 'w', worker, 'st', now, 'hb', now)
  redis.call('HDEL', k, 'pg')
  local job = redis.call('HGETALL', k)
  table.insert(job, 1, id)
  out[#out + 1] = job
end
batch_flush(taken, 'ZREM')
batch_flush(running, 'ZADD')
return out
