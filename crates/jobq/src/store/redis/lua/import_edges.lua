-- KEYS: the prefix of the dependents' queue. ARGV: now, count, then per job: id, join ('all' or
-- 'any'), the number of its edges, and per edge: the dependency's id, its queue ('' when it had been
-- deleted; on a cluster `~<queue>` for one in another slot, see `remote_queue`), rule, state (open,
-- met or broken), and for an edge to another slot how its dependency stood when the caller linked it
-- (`link.lua`: '' live, now linked; the status it had ended in; '-' no such job), else ''.
-- The edges of imported jobs (see `Store::import_edges`), once every job of the import is written. A
-- job of the queue with no `after:` hash yet gets one, written as `enqueue_after.lua` writes it, with
-- each edge's state as given, save that an open edge to a job that has ended is resolved by its end,
-- and one to a job the store does not hold is broken as if it had been cancelled (as a deletion
-- breaks it); an open edge to a live job of this server or slot enters that job's `dependents:` hash
-- and count. A blocked job is then decided on all its edges (see `resolve_edges`), and a cancel
-- cascades. Returns per job '1' when it wrote its edges, '0' when the queue does not hold it or it
-- has edges already.
local Q, now, n = KEYS[1], ARGV[1], tonumber(ARGV[2])
local out, ended, woken = {}, {}, {}
local i = 3
for j = 1, n do
  local id, any, ne = ARGV[i], ARGV[i + 1] == 'any', tonumber(ARGV[i + 2])
  local first = i + 3
  i = first + 5 * ne
  local k, ak = jkey(Q, id), after_key(Q, id)
  if redis.call('EXISTS', k) == 0 or redis.call('EXISTS', ak) == 1 then
    out[j] = '0'
  else
    out[j] = '1'
    local member = queue_of(Q) .. '\n' .. id
    local marks, named = { ak }, {}
    local open, met_one, broken = 0, false, nil
    for e = first, i - 1, 5 do
      local dep, q, rule, state, far_end = ARGV[e], ARGV[e + 1], ARGV[e + 2], ARGV[e + 3], ARGV[e + 4]
      if not named[dep] then
        named[dep] = true
        local far = remote_queue(q)
        -- How the dependency stands: nil while it is live, '' when not known here (a broken edge to
        -- another slot, read as cancelled in the error below).
        local status
        if far then
          status = (far_end == '-' and 'cancelled') or (far_end ~= '' and far_end) or (state ~= 'open' and '') or nil
        elseif q == '' then
          status = 'cancelled'
        elseif state ~= 'met' then
          -- (A met edge needs no read: only an open one is resolved, and a broken one names it.)
          status = job_status(sibling(Q, q), dep) or 'cancelled'
          if not ENDED[status] then
            status = nil
          end
        end
        if state == 'open' then
          if status then
            state = met_by(rule, status) and 'met' or 'broken'
          elseif far then
            if redis.call('SADD', Q .. 'sources', far) == 1 then
              -- Told to the queue's workers, who read their sources afresh (`subscribe.rs`).
              redis.call('XADD', Q .. 'wake', 'MAXLEN', '~', '64', '*', 's', far)
            end
            open = open + 1
          else
            local DQ = sibling(Q, q)
            if redis.call('HSETNX', dependents_key(DQ, dep), member, rule) == 1 then
              count_dependent(jkey(DQ, dep), member)
            end
            open = open + 1
          end
        end
        if state == 'met' then
          met_one = true
        elseif state == 'broken' and (not broken or dep < broken[1]) then
          broken = { dep, (status == nil or status == '') and 'cancelled' or status, rule }
        end
        marks[#marks + 1] = dep
        marks[#marks + 1] = state .. ' ' .. rule .. ' ' .. q
        if #marks > 1000 then
          redis.call('HSET', unpack(marks))
          marks = { ak }
        end
      end
    end
    if #marks > 1 then
      redis.call('HSET', unpack(marks))
    end
    redis.call('HSET', k, 'af', '1')
    if any then
      redis.call('HSET', k, 'aj', '1')
    end
    if open > 0 then
      redis.call('HSET', k, 'ao', open)
    end
    local h = redis.call('HMGET', k, 's', 'pr', 'r', 'u', 'a', 'dn')
    if h[1] == 'blocked' then
      local decided, text = true, nil
      if any then
        if not met_one then
          decided = open == 0
          text = NO_DEPENDENCY_MET
        end
      elseif broken then
        text = broken_dependency(broken[1], broken[2], broken[3])
      else
        decided = open == 0
      end
      if decided then
        unblock(Q, id, h, text, now, ended, woken)
      end
    end
  end
end
release_all(ended, now, woken)
return out
