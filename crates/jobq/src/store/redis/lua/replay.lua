-- KEYS: the queue's prefix. ARGV: now key, dry ('1' for a dry run), limit ('' for none), type count,
-- types…, id count, ids…, cascade ('1' to bring back what the replayed jobs' failure cancelled)
-- Moves dead jobs back to pending at now, oldest death first, one live job per unique key: the ids
-- given (the caller found them in this queue), or else every dead job of the queue. Returns the jobs
-- replayed, one packed string each (see `packed`), as they are after the replay. A dry run picks the
-- same jobs by the same rules, changes nothing, and returns them as they are.
-- With cascade (see `Store::replay_dead`), the jobs that a replayed job's failure cancelled come back
-- blocked, and theirs in turn, each returned after the replayed ones. Those jobs are found through
-- the `dependents:` hashes, which outlive the end of their job; on a single server they may be in any
-- queue, on a cluster in the replayed job's queue only (the cascade does not cross to another slot).
local Q, nowkey, dry, limit = KEYS[1], ARGV[1], ARGV[2] == '1', tonumber(ARGV[3])
local types, i = take(5, tonumber(ARGV[4]))
local ids, j = take(i + 1, tonumber(ARGV[i]))
local cascade = ARGV[j] == '1'
local type_ok = set_of(types)
local dead_key = Q .. 'done:dead'

local cands = {}
if #ids > 0 then
  for _, id in ipairs(ids) do
    local finished = redis.call('ZSCORE', dead_key, id)
    if finished then
      cands[#cands + 1] = { tonumber(finished), id }
    end
  end
else
  local dead = redis.call('ZRANGE', dead_key, 0, -1, 'WITHSCORES')
  for n = 1, #dead, 2 do
    cands[#cands + 1] = { tonumber(dead[n + 1]), dead[n] }
  end
end
table.sort(cands, by_score_then_id)

local out = {}
-- The ids replayed, in order.
local replayed = {}
-- Unique keys a dry run has given to an earlier candidate: it takes no key, so it remembers them.
local taken = {}
local queue = queue_of(Q)
for _, c in ipairs(cands) do
  if limit and #out >= limit then
    break
  end
  local id = c[2]
  local k = jkey(Q, id)
  local h = redis.call('HMGET', k, 't', 'u', 'pr')
  local eligible = #types == 0 or type_ok[h[1]]
  if eligible and h[2] then
    if dry then
      eligible = not taken[h[2]] and redis.call('HEXISTS', Q .. 'uniq', h[2]) == 0
      taken[h[2]] = true
    else
      eligible = redis.call('HSETNX', Q .. 'uniq', h[2], id) == 1
    end
  end
  if eligible then
    if not dry then
      redis.call('ZREM', dead_key, id)
      redis.call('HSET', k, 's', 'pending', 'a', 0, 'r', nowkey, 'w', '')
      redis.call('HDEL', k, 'f', 'res', 'sn')
      index_pending(Q, id, h[3], nowkey)
    end
    out[#out + 1] = packed(redis.call('HGETALL', k), queue, id)
    replayed[#replayed + 1] = id
  end
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
-- blocked. Returns whether it came back.
local function reopen(XQ, id, dep)
  local k = jkey(XQ, id)
  local h = redis.call('HMGET', k, 't', 's', 'u', 'e', 'c')
  if not h[1] or h[2] ~= 'cancelled' or not cancelled_by(h[4], dep) then
    return false
  end
  local ak = after_key(XQ, id)
  local edges = redis.call('HGETALL', ak)
  local open, met = {}, {}
  for f = 1, #edges, 2 do
    local rule, q = string.match(edges[f + 1], '^%S+ (%S+) (.*)$')
    -- (An edge to another slot of a cluster cannot be opened again from here: such a job stays.)
    if remote_queue(q) then
      return false
    end
    local status = job_status(sibling(XQ, q), edges[f])
    if status and not ENDED[status] then
      open[#open + 1] = { edges[f], rule, q }
    elseif status and met_by(rule, status) then
      met[#met + 1] = { edges[f], rule, q }
    else
      return false
    end
  end
  if #open == 0 then
    return false
  end
  if h[3] and redis.call('HSETNX', XQ .. 'uniq', h[3], id) == 0 then
    return false
  end
  local member = queue_of(XQ) .. '\n' .. id
  for _, e in ipairs(open) do
    local DQ = sibling(XQ, e[3])
    redis.call('HSET', ak, e[1], 'open ' .. e[2] .. ' ' .. e[3])
    redis.call('HSET', dependents_key(DQ, e[1]), member, e[2])
    redis.call('HINCRBY', jkey(DQ, e[1]), 'dn', 1)
  end
  for _, e in ipairs(met) do
    redis.call('HSET', ak, e[1], 'met ' .. e[2] .. ' ' .. e[3])
  end
  redis.call('HSET', k, 's', 'blocked', 'ao', #open)
  redis.call('HDEL', k, 'f')
  redis.call('ZREM', XQ .. 'done:cancelled', id)
  redis.call('ZADD', blocked_key(XQ), h[5] or 0, id)
  return true
end

if cascade and not dry then
  local level, n = {}, 1
  for _, id in ipairs(replayed) do
    level[#level + 1] = { Q, id }
  end
  local seen = {}
  while level[n] do
    local DQ, dep = level[n][1], level[n][2]
    n = n + 1
    local waiting = redis.call('HKEYS', dependents_key(DQ, dep))
    for _, m in ipairs(waiting) do
      local q, x = string.match(m, '^([^\n]*)\n(.*)$')
      local XQ = not remote_queue(q) and sibling(DQ, q)
      local key = XQ and XQ .. x
      if key and not seen[key] then
        seen[key] = true
        if reopen(XQ, x, dep) then
          level[#level + 1] = { XQ, x }
          out[#out + 1] = packed(redis.call('HGETALL', jkey(XQ, x)), q, x)
        end
      end
    end
  end
end

if #out > 0 and not dry then
  wake(Q)
end
return out
