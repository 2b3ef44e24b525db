-- KEYS: the queue's prefix. ARGV: now, count, then per job: id, attempt ('' for any), kind, value, error
-- ('' for none). kind: S succeed (value: result JSON or ''), F fail, R retry (value: the run_at key),
-- X discard.
-- Finishes waiting jobs from outside, one after another, each only while it waits (after that attempt,
-- when one is given): one script, so a racing resolve of the same job runs before or after it and
-- finds it waiting or not, never half changed. Returns per job 'r' and the new status (resolved), 'w'
-- and its status (not waiting: nothing changed), or 'n' (no such job).
-- A job that ends (succeeded, dead, discarded) releases the jobs that wait for it in this script
-- (`release_all`, once every job is resolved); one sent back to pending keeps them waiting.
local Q, now, n = KEYS[1], ARGV[1], tonumber(ARGV[2])
local status_of_kind = { S = 'succeeded', F = 'dead', R = 'pending', X = 'discarded' }
local out = {}
local ended = {}
local ready = false
local i = 3
for _ = 1, n do
  local id, a, kind, value, err = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  i = i + 5
  local k = jkey(Q, id)
  local h = redis.call('HMGET', k, 's', 'a', 'pr', 'u', 't', 'dn')
  local attempt = h[2] or '0'
  if not h[5] then
    out[#out + 1] = 'n'
  elseif h[1] ~= 'waiting' or (a ~= '' and attempt ~= a) then
    out[#out + 1] = 'w' .. status_of(h[1])
  else
    local s = status_of_kind[kind]
    redis.call('ZREM', Q .. 'wait', id)
    if err ~= '' then
      push_error(k, error_entry(attempt, now, err))
    end
    if kind == 'R' then
      -- Pending again, its unique key still held; it has not finished.
      redis.call('HSET', k, 's', s, 'r', value)
      redis.call('HDEL', k, 'f')
      index_pending(Q, id, h[3], value)
      ready = true
    else
      if value ~= '' then
        redis.call('HSET', k, 's', s, 'f', now, 'res', value)
      else
        redis.call('HSET', k, 's', s, 'f', now)
      end
      redis.call('ZADD', Q .. 'done:' .. s, now, id)
      free_unique(Q, h[4], id)
      if h[6] then
        ended[#ended + 1] = { Q, id, s }
      end
    end
    out[#out + 1] = 'r' .. s
  end
end
if ready then
  wake(Q)
end
release_all(ended, now)
return out
