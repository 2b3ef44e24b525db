-- KEYS: the queue's prefix. ARGV: at most, created since ('' for any), created until ('' for any), type
-- count, types…, status count, statuses…
-- The newest `at most` jobs of the queue matching (created_at, then id, descending), each as one string
-- (see `packed`); the caller merges queues and pages. Reads the status indexes, so its cost grows with
-- the jobs it looks at: an operator's call, not a worker's.
local Q, most = KEYS[1], tonumber(ARGV[1])
local since, until_ = tonumber(ARGV[2]), tonumber(ARGV[3])
local types, i = take(5, tonumber(ARGV[4]))
local statuses = take(i + 1, tonumber(ARGV[i]))
local type_ok = set_of(types)
if #statuses == 0 then
  statuses = { 'pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded' }
end

local cands = {}
local function consider(id)
  local h = redis.call('HMGET', jkey(Q, id), 'c', 't')
  local c = tonumber(h[1])
  if c and (#types == 0 or type_ok[h[2]]) and (not since or c >= since) and (not until_ or c < until_) then
    cands[#cands + 1] = { c, id }
  end
end
for _, s in ipairs(statuses) do
  if s == 'pending' then
    for _, pr in ipairs(redis.call('ZRANGE', Q .. 'prios', 0, -1)) do
      for _, m in ipairs(redis.call('ZRANGE', pend_key(Q, pr), 0, -1)) do
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
    for _, id in ipairs(redis.call('ZRANGE', Q .. index, 0, -1)) do
      consider(id)
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
local queue = queue_of(Q)
for n = 1, math.min(most, #cands) do
  local id = cands[n][2]
  local job = redis.call('HGETALL', jkey(Q, id))
  out[#out + 1] = packed(job, queue, id)
end
return out
