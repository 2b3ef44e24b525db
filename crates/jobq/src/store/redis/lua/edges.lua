-- KEYS: the job's queue prefix. ARGV: id, dependents ('1': read them too), results ('1': read each
-- dependency's result).
-- A job's edges (see `Store::edges`), in one call however many it has: { shape, dependencies,
-- dependents, join }. A job with up to `INLINE` dependencies has them read here, in the one round
-- trip (shape 'rows'): rows `id, state, rule, queue, type, status, result` joined by byte 0xFF as
-- `packed` joins a job's fields, with '' for a field that is not there (the type and status of a
-- job that is gone, a result not asked for or never written). A job with more (a flow's parent after
-- ten thousand children, read before it runs) has its `after:` hash returned as it stands (shape
-- 'after': dependency id, '<state> <rule> <queue>', …), and the caller reads the jobs at their
-- ends pipelined per queue: half the server's time of reading them here, and no other client waits
-- behind one long script. The dependents, when asked, are rows as above (the result never read);
-- then how the job's edges combine ('any' for `aj`, else ''). A dependent that is gone is left out.
-- An edge to another slot of a cluster (its queue `~<queue>`, see `remote_queue`) is not followed:
-- its row holds what this slot knows, '' for the rest (a dependent's state too), which the caller
-- reads from the other slot. Only reads.
local INLINE = 64
local Q, id, with_dependents, with_results = KEYS[1], ARGV[1], ARGV[2] == '1', ARGV[3] == '1'
local fields = { 't', 's' }
if with_results then
  fields[3] = 'res'
end

local edges = redis.call('HGETALL', after_key(Q, id))
local shape, dependencies = 'after', edges
if #edges <= 2 * INLINE then
  shape, dependencies = 'rows', {}
  for f = 1, #edges, 2 do
    local state, rule, q = string.match(edges[f + 1], '^(%S+) (%S+) (.*)$')
    local h = {}
    if not remote_queue(q) then
      h = redis.call('HMGET', jkey(sibling(Q, q), edges[f]), unpack(fields))
    end
    -- (A job enqueued and not touched since has no status field: it is pending.)
    local status = h[1] and (h[2] or 'pending') or ''
    dependencies[#dependencies + 1] = edges[f] .. '\255' .. state .. '\255' .. rule .. '\255' .. q .. '\255'
      .. (h[1] or '') .. '\255' .. status .. '\255' .. (h[3] or '')
  end
end

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
return { shape, dependencies, dependents, join }
