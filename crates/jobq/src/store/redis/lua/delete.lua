-- KEYS: the queue's prefix. ARGV: now, force ('1': running and waiting jobs too), mode, …
--   mode 'I': id count, ids…
--   mode 'F': type count, types…, status count, statuses… (none: every status), created since ('' for
--             any), created until ('' for any), at most this many
-- Deletes jobs for good: the hash, its place in its status index, the unique key it holds, its
-- dependency edges (`after:<id>`, `dependents:<id>`) and, when it runs, its slots. A running or
-- waiting job is refused unless forced; a forced one's worker finds its lease gone. A blocked job is
-- deleted as a pending one is.
-- A job deleted before it ended is, to the jobs that wait for it, cancelled at `now`: they are
-- resolved in this script once every job it deletes is gone (`release_all`, which reads and then
-- deletes its `dependents:` hash), as the SQL stores resolve them after the delete. A deleted job
-- that waits itself leaves its dependencies' `dependents:` hashes (`unlink_dependent`).
-- Mode 'I' answers every id, one after another: 'd' and the status it had (deleted), 'r' and its
-- status (refused), or 'n' (no such job). Mode 'F' deletes up to `at most` jobs that match and returns
-- { deleted, refused }, refused counting the running and waiting jobs that match and were left. Without
-- a type or time filter every job read matches, so only as many are read as may be deleted.
local Q, now, force, mode = KEYS[1], ARGV[1], ARGV[2] == '1', ARGV[3]
local FIELDS = { 's', 'pr', 'r', 'u', 't', 'c', 'a', 'sl', 'dn', 'ao' }
local HELD = { running = true, waiting = true }
local ended = {}

local function remove(id, k, h)
  local s = status_of(h[1])
  if s == 'running' then
    free_slots(Q, id, h[7], h[8])
  end
  unindex(Q, id, s, h[2], h[3])
  free_unique(Q, h[4], id)
  redis.call('ZREM', made_key(Q), id)
  if h[10] then
    unlink_dependent(Q, id)
  end
  if h[9] then
    -- Its `dependents:` hash stays until `release_all` has read it.
    ended[#ended + 1] = { Q, id, 'cancelled', nil, true }
    redis.call('DEL', k, after_key(Q, id))
  else
    redis.call('DEL', k, after_key(Q, id), dependents_key(Q, id))
  end
end

if mode == 'I' then
  local out = {}
  for _, id in ipairs(take(5, tonumber(ARGV[4]))) do
    local k = jkey(Q, id)
    local h = redis.call('HMGET', k, unpack(FIELDS))
    local s = status_of(h[1])
    if not h[5] then
      out[#out + 1] = 'n'
    elseif HELD[s] and not force then
      out[#out + 1] = 'r' .. s
    else
      remove(id, k, h)
      out[#out + 1] = 'd' .. s
    end
  end
  release_slots()
  release_all(ended, now)
  return out
end

local types, i = take(5, tonumber(ARGV[4]))
local statuses, j = take(i + 1, tonumber(ARGV[i]))
local since, until_, most = tonumber(ARGV[j]), tonumber(ARGV[j + 1]), tonumber(ARGV[j + 2])
local type_ok = set_of(types)
local every = #types == 0 and not since and not until_
if #statuses == 0 then
  statuses = { 'blocked', 'pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded', 'expired' }
end

local function matches(h)
  local c = tonumber(h[6])
  return h[5] and (#types == 0 or type_ok[h[5]]) and (not since or c >= since) and (not until_ or c < until_)
end

-- The ids of one status's index; with `room`, only that many from its front.
local function members(s, room)
  local ids = {}
  local function read(index, strip)
    local last = -1
    if room then
      if room - #ids <= 0 then
        return
      end
      last = room - #ids - 1
    end
    for _, m in ipairs(redis.call('ZRANGE', index, 0, last)) do
      if strip then
        m = string.sub(m, 18)
      end
      ids[#ids + 1] = m
    end
  end
  if s == 'pending' then
    for _, pr in ipairs(redis.call('ZRANGE', Q .. 'prios', 0, -1)) do
      read(pend_key(Q, pr), true)
    end
  elseif s == 'blocked' then
    read(blocked_key(Q), false)
  elseif s == 'running' then
    read(Q .. 'run', false)
  elseif s == 'waiting' then
    read(Q .. 'wait', false)
  else
    read(Q .. 'done:' .. s, false)
  end
  return ids
end

local deleted, refused = 0, 0
for _, s in ipairs(statuses) do
  if HELD[s] and not force then
    if every then
      local index = Q .. 'wait'
      if s == 'running' then
        index = Q .. 'run'
      end
      refused = refused + redis.call('ZCARD', index)
    else
      for _, id in ipairs(members(s, nil)) do
        if matches(redis.call('HMGET', jkey(Q, id), unpack(FIELDS))) then
          refused = refused + 1
        end
      end
    end
  elseif deleted < most then
    local room = nil
    if every then
      room = most - deleted
    end
    for _, id in ipairs(members(s, room)) do
      if deleted >= most then
        break
      end
      local k = jkey(Q, id)
      local h = redis.call('HMGET', k, unpack(FIELDS))
      if matches(h) then
        remove(id, k, h)
        deleted = deleted + 1
      end
    end
  end
end
release_slots()
release_all(ended, now)
return { deleted, refused }
