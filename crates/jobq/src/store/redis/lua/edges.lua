-- KEYS: the job's queue prefix. ARGV: id, dependents ('1': read them too).
-- A job's edges (see `Store::edges`), in one call however many it has: { dependencies, dependents,
-- join }. The dependencies are the job's `after:` hash as it stands (dependency id, '<state> <rule>
-- <queue>', …): the caller reads the jobs at their ends, pipelined per queue, which costs the server
-- half what this script's reads of ten thousand of them did (a job after ten thousand others is read
-- this way before it runs, while its queue waits). The dependents, when asked, are rows `id, state,
-- rule, queue, type, status, result` joined by byte 0xFF as `packed` joins a job's fields, with ''
-- for a field that is not there (the result is never read); then how the job's edges combine ('any'
-- for `aj`, else ''). A dependent that is gone is left out. A dependent in another slot of a
-- cluster (its queue `~<queue>`, see `remote_queue`) is not followed: its row holds what this slot
-- knows, '' for the rest (its state too), which the caller reads from the other slot. Only reads.
local Q, id, with_dependents = KEYS[1], ARGV[1], ARGV[2] == '1'
local dependencies = redis.call('HGETALL', after_key(Q, id))

local dependents, join = {}, ''
if with_dependents then
  if redis.call('HGET', jkey(Q, id), 'aj') == '1' then
    join = 'any'
  end
  local members = redis.call('HGETALL', dependents_key(Q, id))
  for f = 1, #members, 2 do
    local q, x = string.match(members[f], '^([^\n]*)\n(.*)$')
    local edge, h = nil, {}
    if remote_queue(q) then
      dependents[#dependents + 1] = x .. '\255\255' .. members[f + 1] .. '\255' .. q .. '\255\255\255'
    else
      local XQ = sibling(Q, q)
      edge = redis.call('HGET', after_key(XQ, x), id)
      h = redis.call('HMGET', jkey(XQ, x), 't', 's')
    end
    if edge and h[1] then
      local state, rule = string.match(edge, '^(%S+) (%S+)')
      dependents[#dependents + 1] = x .. '\255' .. state .. '\255' .. rule .. '\255' .. q .. '\255' .. h[1] .. '\255'
        .. (h[2] or 'pending') .. '\255'
    end
  end
end
return { dependencies, dependents, join }
