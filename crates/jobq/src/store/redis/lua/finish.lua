-- KEYS: the queue's prefix. ARGV: now, count, then per outcome: id, attempt, worker, kind, value, error
-- entry, progress JSON ('' to leave it as it is).
-- kind: S succeeded (value: result JSON or ''), R retry (value: run_at key, or 'key;expiry' for a retry with its own expiry), D dead, X discarded, C cancelled (a job stopped at a newer job's request),
-- W waiting, Z snooze (value: run_at key; the attempt is given back and `sn` counted up). Returns per outcome 1 when applied, 0 when its lease no longer held.
-- A job that ends (succeeded, dead, discarded, cancelled) releases the jobs that wait for it, in this script
-- (`release_all`, once for the batch's ends, so that a job after many of them is resolved once): so
-- the end and its dependents' resolution are one step, and an outcome sent twice, whose second is not
-- applied, resolves nothing twice.
local Q, now, n = KEYS[1], ARGV[1], tonumber(ARGV[2])
local status_of_kind = { S = 'succeeded', D = 'dead', X = 'discarded', C = 'cancelled' }
local run = Q .. 'run'
local out = {}
local stopped, done, ended = {}, {}, {}
local i = 3
for _ = 1, n do
  local id, a, w, kind, value, err, pg =
    ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6]
  i = i + 7
  local k = jkey(Q, id)
  local h = redis.call('HMGET', k, 's', 'a', 'w', 'pr', 'u', 'sl', 'dn', 'd1')
  if h[1] == 'running' and h[2] == a and h[3] == w then
    batch_add(stopped, run, id)
    free_slots(Q, id, a, h[6])
    if err ~= '' then
      push_error(k, err)
    end
    if pg ~= '' then
      redis.call('HSET', k, 'pg', pg)
    end
    if kind == 'R' then
      -- '<run key>' or '<run key>;<expiry>': a retry with an expiry of its own (expires_per_attempt).
      local r, xa = string.match(value, '^([^;]*);?(%d*)$')
      redis.call('HSET', k, 's', 'pending', 'r', r, 'w', '')
      if xa ~= '' then
        redis.call('HSET', k, 'xa', xa)
        index_expiry(Q, id, xa)
      end
      index_pending(Q, id, h[4], r)
    elseif kind == 'Z' then
      redis.call('HSET', k, 's', 'pending', 'r', value, 'w', '', 'a', tonumber(a) - 1)
      redis.call('HINCRBY', k, 'sn', 1)
      index_pending(Q, id, h[4], value)
    elseif kind == 'W' then
      redis.call('HSET', k, 's', 'waiting', 'f', now, 'w', '')
      redis.call('ZADD', Q .. 'wait', now, id)
    else
      local s = status_of_kind[kind]
      if value ~= '' then
        redis.call('HSET', k, 's', s, 'f', now, 'w', '', 'res', value)
      else
        redis.call('HSET', k, 's', s, 'f', now, 'w', '')
      end
      batch_add(done, Q .. 'done:' .. s, now, id)
      free_unique(Q, h[5], id)
      if h[7] then
        ended[#ended + 1] = { Q, id, s, h[8] }
      end
    end
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
release_all(ended, now)
release_slots()
batch_flush(stopped, 'ZREM')
batch_flush(done, 'ZADD')
return out
