-- KEYS: the queue's prefix. ARGV: now key, dry ('1' for a dry run), limit ('' for none), type count,
-- types…, id count, ids…, cascade ('1' to bring back what the replayed jobs' failure cancelled)
-- Moves dead jobs back to pending at now, oldest death first, one live job per unique key: the ids
-- given (the caller found them in this queue), or else every dead job of the queue. Returns the jobs
-- replayed, one packed string each (see `packed`), as they are after the replay. A dry run picks the
-- same jobs by the same rules, changes nothing, and returns them as they are.
-- With cascade (see `Store::replay_dead`), the jobs that a replayed job's failure cancelled come back
-- blocked, and theirs in turn, each returned after the replayed ones (`reopen_cascade`). Those jobs
-- are found through the `dependents:` hashes, which outlive the end of their job; on a single server
-- they may be in any queue. On a cluster those of another slot are returned as `far` ({ dependency,
-- its queue, the dependent's queue, the dependent } each), for the caller to bring back there
-- (`reopen_far.lua`). Returns { jobs, far }.
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
      redis.call('HDEL', k, 'f', 'res', 'sn', 'xa')
      index_pending(Q, id, h[3], nowkey)
    end
    out[#out + 1] = packed(redis.call('HGETALL', k), queue, id)
    replayed[#replayed + 1] = id
  end
end
local far = {}
if cascade and not dry then
  local level = {}
  for _, id in ipairs(replayed) do
    level[#level + 1] = { Q, id }
  end
  reopen_cascade(level, out, far)
end

if #out > 0 and not dry then
  wake(Q)
end
return { out, far }
