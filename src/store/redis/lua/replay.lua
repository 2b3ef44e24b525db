-- KEYS: the queue's prefix. ARGV: now key, limit ('' for none), type count, types…, id count, ids…
-- Moves dead jobs back to pending at now, oldest death first, one live job per unique key: the ids
-- given (the caller found them in this queue), or else every dead job of the queue. Returns the ids
-- replayed.
local Q, nowkey, limit = KEYS[1], ARGV[1], tonumber(ARGV[2])
local types, i = take(4, tonumber(ARGV[3]))
local ids = take(i + 1, tonumber(ARGV[i]))
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
table.sort(cands, function(a, b)
  if a[1] ~= b[1] then
    return a[1] < b[1]
  end
  return a[2] < b[2]
end)

local out = {}
for _, c in ipairs(cands) do
  if limit and #out >= limit then
    break
  end
  local id = c[2]
  local k = jkey(Q, id)
  local h = redis.call('HMGET', k, 't', 'u', 'pr')
  local eligible = #types == 0 or type_ok[h[1]]
  if eligible and h[2] then
    eligible = redis.call('HSETNX', Q .. 'uniq', h[2], id) == 1
  end
  if eligible then
    redis.call('ZREM', dead_key, id)
    redis.call('HSET', k, 's', 'pending', 'a', 0, 'r', nowkey, 'w', '')
    redis.call('HDEL', k, 'f', 'res')
    index_pending(Q, id, h[3], nowkey)
    out[#out + 1] = id
  end
end
if #out > 0 then
  wake(Q)
end
return out
