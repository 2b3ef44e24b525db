-- ARGV: prefix, limit, offset, created since ('' for any), created until ('' for any), queue count,
-- queues…, type count, types…, status count, statuses…
-- Jobs matching, newest first (created_at, then id, descending). Returns per job its id and its hash as
-- field/value pairs, `id` last. Reads the status indexes of the queues named (all), so its cost grows with the
-- jobs it looks at: an operator's call, not a worker's.
local limit, offset = tonumber(ARGV[2]), tonumber(ARGV[3])
local since, until_ = tonumber(ARGV[4]), tonumber(ARGV[5])
local queues, i = take(7, tonumber(ARGV[6]))
local types, j = take(i + 1, tonumber(ARGV[i]))
local statuses = take(j + 1, tonumber(ARGV[j]))
local type_ok = set_of(types)
if #statuses == 0 then
  statuses = { 'pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded' }
end

local cands = {}
local function consider(id)
  local h = redis.call('HMGET', jkey(id), 'c', 't')
  local c = tonumber(h[1])
  if c and (#types == 0 or type_ok[h[2]]) and (not since or c >= since) and (not until_ or c < until_) then
    cands[#cands + 1] = { c, id }
  end
end
for _, q in ipairs(queues_or_all(queues)) do
  for _, s in ipairs(statuses) do
    if s == 'pending' then
      for _, pr in ipairs(redis.call('ZRANGE', qkey(q, 'prios'), 0, -1)) do
        for _, m in ipairs(redis.call('ZRANGE', pend_key(q, pr), 0, -1)) do
          consider(string.sub(m, 18))
        end
      end
    else
      local index = 'done:' .. s
      if s == 'running' then
        index = 'run'
      elseif s == 'waiting' then
        index = 'wait'
      end
      for _, id in ipairs(redis.call('ZRANGE', qkey(q, index), 0, -1)) do
        consider(id)
      end
    end
  end
end
table.sort(cands, function(a, b)
  if a[1] ~= b[1] then
    return a[1] > b[1]
  end
  return a[2] > b[2]
end)

local out = {}
for n = offset + 1, math.min(offset + limit, #cands) do
  local id = cands[n][2]
  local job = redis.call('HGETALL', jkey(id))
  job[#job + 1] = 'id'
  job[#job + 1] = id
  out[#out + 1] = job
end
return out
