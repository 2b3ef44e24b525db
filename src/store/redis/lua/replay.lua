-- ARGV: prefix, now key, limit ('' for none), queue count, queues…, type count, types…, id count, ids…
-- Moves dead jobs back to pending at now, oldest death first, one live job per unique key. Returns the
-- ids replayed.
local nowkey, limit = ARGV[2], tonumber(ARGV[3])
local queues, i = take(5, tonumber(ARGV[4]))
local types, j = take(i + 1, tonumber(ARGV[i]))
local ids = take(j + 1, tonumber(ARGV[j]))
local queue_ok, type_ok = set_of(queues), set_of(types)

local cands = {}
local function consider(id, q, finished)
  cands[#cands + 1] = { tonumber(finished), id, q }
end
if #ids > 0 then
  for _, id in ipairs(ids) do
    local h = redis.call('HMGET', jkey(id), 's', 'q', 'f')
    if h[1] == 'dead' and (#queues == 0 or queue_ok[h[2]]) then
      consider(id, h[2], h[3])
    end
  end
else
  for _, q in ipairs(queues_or_all(queues)) do
    local dead = redis.call('ZRANGE', qkey(q, 'done:dead'), 0, -1, 'WITHSCORES')
    for n = 1, #dead, 2 do
      consider(dead[n], q, dead[n + 1])
    end
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
  local id, q = c[2], c[3]
  local k = jkey(id)
  local h = redis.call('HMGET', k, 't', 'u', 'pr')
  local eligible = #types == 0 or type_ok[h[1]]
  if eligible and h[2] then
    eligible = redis.call('HSETNX', qkey(q, 'uniq'), h[2], id) == 1
  end
  if eligible then
    redis.call('ZREM', qkey(q, 'done:dead'), id)
    redis.call('HSET', k, 's', 'pending', 'a', 0, 'r', nowkey, 'w', '')
    redis.call('HDEL', k, 'f', 'res')
    index_pending(id, q, h[3], nowkey)
    wake(q)
    out[#out + 1] = id
  end
end
return out
