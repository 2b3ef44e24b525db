-- KEYS: the queue's prefix. ARGV: now, mode, …
--   mode 'I': id count, ids…
--   mode 'F': type count, types…, status count, statuses…, created since ('' for any), created until
--             ('' for any), at most ('' for no bound)
-- Cancels the live jobs targeted (blocked, pending, running, waiting). Mode 'I' answers every id: id,
-- status, and 'c' (cancelled from that status), 't' (already terminal in it) or 'n' (no such job).
-- Mode 'F' returns per job cancelled: id, previous status. With `at most` and no type or time filter,
-- every job read matches, so only that many are read (from the front of each status index): the
-- caller calls again until fewer come back, and no call holds Redis for long.
-- A cancelled job has ended: the jobs that wait for it (a blocked one cancelled included) are
-- resolved in this script, after every job it cancels (`release_all`), so that, as in the SQL
-- stores, a job this call cancels is cancelled by it rather than first by a cascade from another.
local Q, now, mode = KEYS[1], ARGV[1], ARGV[2]
local LIVE = { blocked = true, pending = true, running = true, waiting = true }
local FIELDS = { 's', 'pr', 'r', 'u', 't', 'c', 'a', 'sl', 'dn' }
local out = {}
local ended = {}

local function cancel(id, k, h)
  local s = status_of(h[1])
  unindex(Q, id, s, h[2], h[3])
  if s == 'running' then
    free_slots(Q, id, h[7], h[8])
  end
  redis.call('HSET', k, 's', 'cancelled', 'f', now)
  redis.call('ZADD', Q .. 'done:cancelled', now, id)
  free_unique(Q, h[4], id)
  if h[9] then
    ended[#ended + 1] = { Q, id, 'cancelled' }
  end
  out[#out + 1] = id
  out[#out + 1] = s
end

-- A job that exists (it has a type) and is live.
local function live(h)
  return h[5] and LIVE[status_of(h[1])]
end

if mode == 'I' then
  for _, id in ipairs(take(4, tonumber(ARGV[3]))) do
    local k = jkey(Q, id)
    local h = redis.call('HMGET', k, unpack(FIELDS))
    if live(h) then
      cancel(id, k, h)
      out[#out + 1] = 'c'
    elseif h[5] then
      out[#out + 1] = id
      out[#out + 1] = status_of(h[1])
      out[#out + 1] = 't'
    else
      out[#out + 1] = id
      out[#out + 1] = ''
      out[#out + 1] = 'n'
    end
  end
  release_slots()
  release_all(ended, now)
  return out
end

local types, i = take(4, tonumber(ARGV[3]))
local statuses, j = take(i + 1, tonumber(ARGV[i]))
local since, until_, most = tonumber(ARGV[j]), tonumber(ARGV[j + 1]), tonumber(ARGV[j + 2])
local type_ok = set_of(types)
if #types > 0 or since or until_ then
  most = nil
end
if #statuses == 0 then
  statuses = { 'blocked', 'pending', 'running', 'waiting' }
end

local ids = {}
-- The members of an index: all of them, or with `most`, only as many as `ids` still has room for.
local function read(index)
  if not most then
    return redis.call('ZRANGE', index, 0, -1)
  end
  local room = most - #ids
  if room <= 0 then
    return {}
  end
  return redis.call('ZRANGE', index, 0, room - 1)
end
for _, s in ipairs(statuses) do
  if s == 'pending' then
    for _, pr in ipairs(redis.call('ZRANGE', Q .. 'prios', 0, -1)) do
      for _, m in ipairs(read(pend_key(Q, pr))) do
        ids[#ids + 1] = string.sub(m, 18)
      end
    end
  elseif s == 'blocked' or s == 'running' or s == 'waiting' then
    local index = Q .. 'run'
    if s == 'waiting' then
      index = Q .. 'wait'
    elseif s == 'blocked' then
      index = blocked_key(Q)
    end
    for _, id in ipairs(read(index)) do
      ids[#ids + 1] = id
    end
  end
end
for _, id in ipairs(ids) do
  local k = jkey(Q, id)
  local h = redis.call('HMGET', k, unpack(FIELDS))
  local c = tonumber(h[6])
  if live(h)
    and (#types == 0 or type_ok[h[5]])
    and (not since or c >= since)
    and (not until_ or c < until_) then
    cancel(id, k, h)
  end
end
release_slots()
release_all(ended, now)
return out
