-- KEYS: the prefix of the dependencies' queue. ARGV: the dependents' queue, then per edge: the
-- dependency's id, the dependent's id, the rule.
-- The dependency's side of edges from jobs of another hash slot of a Redis Cluster (see
-- `remote_queue`), written before the dependents themselves (`enqueue_after.lua` in their slot), so
-- that no end of a dependency can come between and be missed. Returns { 'U', ids } when a dependency
-- is no job of the queue (then it has written nothing), else per edge the status its dependency has
-- ended in, or '' for a live one, whose `dependents:` hash now names the dependent as `~<queue>\n<id>`
-- (its end is posted to the outbox of the dependents' queue). A dependent that is then not written (a
-- failed or refused enqueue) leaves an entry its outbox's reader drops. Takes out of the outbox the
-- entries of the edges it links anew (see below).
local Q, far = KEYS[1], ARGV[1]
local missing, named, statuses = {}, {}, {}
for i = 2, #ARGV, 3 do
  local dep = ARGV[i]
  local status = job_status(Q, dep)
  if not status then
    if not named[dep] then
      named[dep] = true
      missing[#missing + 1] = dep
    end
  end
  statuses[#statuses + 1] = status
end
if #missing > 0 then
  return { 'U', missing }
end
local out, linked = {}, {}
for i = 2, #ARGV, 3 do
  local dep, status = ARGV[i], statuses[#out + 1]
  if ENDED[status] then
    out[#out + 1] = status
  else
    out[#out + 1] = ''
    local member = '~' .. far .. '\n' .. ARGV[i + 1]
    if redis.call('HSETNX', dependents_key(Q, dep), member, ARGV[i + 2]) == 1 then
      count_dependent(jkey(Q, dep), member)
      linked[ARGV[i + 1] .. '\n' .. dep .. '\n'] = true
    end
  end
end
-- An entry already in the outbox for an edge linked anew is of an earlier job of the same ids (the
-- dependency deleted, with its `dependents:` hash, then enqueued or imported again): this edge's
-- dependency is live, and its end comes after. Applied, it would resolve the new edge by the old end.
-- (An edge linked before keeps its member, so a producer's retry of the same enqueue takes nothing.)
local outbox = Q .. 'outbox:' .. far
if next(linked) then
  for _, entry in ipairs(redis.call('LRANGE', outbox, 0, -1)) do
    local pair = string.match(entry, '^[^\n]*\n[^\n]*\n')
    if pair and linked[pair] then
      redis.call('LREM', outbox, 0, entry)
    end
  end
end
return { 'L', out }
