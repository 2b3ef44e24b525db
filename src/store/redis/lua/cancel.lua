-- ARGV: prefix, now, mode, …
--   mode 'I': id count, ids…
--   mode 'F': queue count, queues…, type count, types…, status count, statuses…, created since ('' for
--             any), created until ('' for any)
-- Cancels the live jobs targeted. Returns per job cancelled: id, previous status.
local now, mode = ARGV[2], ARGV[3]
local LIVE = { pending = true, running = true, waiting = true }
local out = {}

local function cancel(id, k, h)
  local s, q = h[1], h[2]
  unindex(id, q, s, h[3], h[4])
  redis.call('HSET', k, 's', 'cancelled', 'f', now)
  redis.call('ZADD', qkey(q, 'done:cancelled'), now, id)
  free_unique(q, h[5], id)
  out[#out + 1] = id
  out[#out + 1] = s
end

local FIELDS = { 's', 'q', 'pr', 'r', 'u', 't', 'c' }

if mode == 'I' then
  local ids = take(5, tonumber(ARGV[4]))
  for _, id in ipairs(ids) do
    local k = jkey(id)
    local h = redis.call('HMGET', k, unpack(FIELDS))
    if h[1] and LIVE[h[1]] then
      cancel(id, k, h)
    end
  end
  return out
end

local queues, i = take(5, tonumber(ARGV[4]))
local types, j = take(i + 1, tonumber(ARGV[i]))
local statuses, l = take(j + 1, tonumber(ARGV[j]))
local since, until_ = tonumber(ARGV[l]), tonumber(ARGV[l + 1])
local type_ok = set_of(types)
if #statuses == 0 then
  statuses = { 'pending', 'running', 'waiting' }
end

for _, q in ipairs(queues_or_all(queues)) do
  local ids = {}
  for _, s in ipairs(statuses) do
    if s == 'pending' then
      for _, pr in ipairs(redis.call('ZRANGE', qkey(q, 'prios'), 0, -1)) do
        for _, m in ipairs(redis.call('ZRANGE', pend_key(q, pr), 0, -1)) do
          ids[#ids + 1] = string.sub(m, 18)
        end
      end
    elseif s == 'running' then
      for _, id in ipairs(redis.call('ZRANGE', qkey(q, 'run'), 0, -1)) do
        ids[#ids + 1] = id
      end
    elseif s == 'waiting' then
      for _, id in ipairs(redis.call('ZRANGE', qkey(q, 'wait'), 0, -1)) do
        ids[#ids + 1] = id
      end
    end
  end
  for _, id in ipairs(ids) do
    local k = jkey(id)
    local h = redis.call('HMGET', k, unpack(FIELDS))
    local c = tonumber(h[7])
    if h[1] and LIVE[h[1]]
      and (#types == 0 or type_ok[h[6]])
      and (not since or c >= since)
      and (not until_ or c < until_) then
      cancel(id, k, h)
    end
  end
end
return out
