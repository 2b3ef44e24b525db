-- KEYS: the prefix of the job's queue, then on a single server the queue registry. ARGV: now, the
-- run key of now, then the outcome as `finish.lua` takes one (id, attempt, worker, kind, value, error
-- entry, progress JSON), with kind 'A' for an await of the children; then the children as
-- `enqueue_after.lua` takes its jobs (count, then per child its queue, the fields of shape 'E', and
-- its dependencies: siblings it waits for, written by this script too).
-- One outcome that spawns children or awaits them (see `Store::finish`), joined with
-- `finish.lua` and `enqueue_after.lua` (`finish_script`, `enqueue_after_script`): when the lease
-- holds, the children are written as an enqueue writes them (an id taken is not written again, a
-- held unique key coalesces), then the outcome as `finish.lua` writes it; or, for an await, the job
-- leaves `running` with its attempt given back and waits, `blocked`, on an edge with the rule
-- `finish` to each child it has no edge to yet (one that coalesced stands for its holder), or is
-- `pending` at once when none of them is live. One script: the children and the outcome are written
-- together or not at all. Returns { applied (1 or 0), register } (`register` as `enqueue.lua`'s).
local Q, now, now_key = KEYS[1], ARGV[1], ARGV[2]
local id, a, w, kind, pg = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[9]
local k = jkey(Q, id)
local h = redis.call('HMGET', k, 's', 'a', 'w', 'pr', 'sl', 'c')
if not (h[1] == 'running' and h[2] == a and h[3] == w) then
  return { 0, 0 }
end

local register, outcomes = 0, {}
local n = tonumber(ARGV[10])
if n > 0 then
  local reply = enqueue_after_script(KEYS, (take(10, #ARGV - 9)))
  register, outcomes = reply[1], reply[2]
end

if kind ~= 'A' then
  finish_script({ Q }, { now, 1, id, a, w, kind, ARGV[7], ARGV[8], pg })
  return { 1, register }
end

redis.call('ZREM', Q .. 'run', id)
free_slots(Q, id, a, h[5])
release_slots()
redis.call('HSET', k, 's', 'pending', 'w', '', 'a', tonumber(a) - 1, 'r', now_key, 'af', '1')
if pg ~= '' then
  redis.call('HSET', k, 'pg', pg)
end
local ak = after_key(Q, id)
local member = queue_of(Q) .. '\n' .. id
local open, j = 0, 11
for c = 1, n do
  local cq, cid = ARGV[j], ARGV[j + 1]
  -- The child's queue, its eleven fields of shape 'E', its count of dependencies and their join,
  -- then four arguments per dependency.
  j = j + 14 + 4 * tonumber(ARGV[j + 12])
  local target = cid
  if string.sub(outcomes[c], 1, 1) == 'K' then
    target = string.sub(outcomes[c], 2)
  end
  if target ~= id and redis.call('HEXISTS', ak, target) == 0 then
    local CQ = sibling(Q, cq)
    local status = job_status(CQ, target)
    if status and ENDED[status] then
      redis.call('HSET', ak, target, 'met finish ' .. cq)
    else
      redis.call('HSET', ak, target, 'open finish ' .. cq)
      redis.call('HSET', dependents_key(CQ, target), member, 'finish')
      count_dependent(jkey(CQ, target), member)
      open = open + 1
    end
  end
end
if open > 0 then
  redis.call('HSET', k, 's', 'blocked', 'ao', open)
  redis.call('ZADD', blocked_key(Q), h[6] or now, id)
else
  index_pending(Q, id, h[4], now_key)
  wake(Q)
end
return { 1, register }
