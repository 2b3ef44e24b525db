-- KEYS: the queue's prefix, then on a single server the queue registry (`<prefix>queues`). ARGV: mode
-- ('S' skip or 'R' replace a job whose id the queue holds), dry ('1': decide, write nothing), count,
-- then per job: id, status, priority ('' for 0), run_at key, live unique key ('' for none), index
-- score (heartbeat of a running job, finish time of a waiting or finished one, creation time of a
-- blocked one, whose edges `import_edges.lua` writes once every job of the import is in),
-- created_at, the number of hash fields, then the fields and values of its hash as
-- `codec::job_fields` spells them.
-- Returns { register, answers }: per job 'I' imported, 'S' skipped, 'R' replaced, or 'K' and the id of
-- the live job holding its unique key; register as in `enqueue.lua`. One script per queue, so an import
-- is atomic per queue, and the jobs of one call are decided one after another.
-- A job replaced keeps the jobs that wait for it when it arrives live (its `dn` carried over), and
-- releases them when it arrives ended, at its finish time (`release_dependents`): either way they
-- are not left waiting for an end that no script would see. Its own open edges go with it
-- (`unlink_dependent`), unless it arrives blocked, which it then keeps waiting on (an imported job
-- brings no edges here: they come after, by `import_edges.lua`, which leaves a job that has edges).
local Q, mode, dry, n = KEYS[1], ARGV[1], ARGV[2] == '1', tonumber(ARGV[3])
local uniq = Q .. 'uniq'
local out = {}
local pending, made = false, {}
local i = 4
for j = 1, n do
  local id, s, pr, r, u, score, c, nf =
    ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], tonumber(ARGV[i + 7])
  local first = i + 8
  i = first + 2 * nf
  local k = jkey(Q, id)
  local exists = redis.call('EXISTS', k) == 1
  local holder = u ~= '' and redis.call('HGET', uniq, u)
  if exists and mode == 'S' then
    out[j] = 'S'
  elseif holder and holder ~= id then
    out[j] = 'K' .. holder
  else
    out[j] = exists and 'R' or 'I'
    if not dry then
      local kept_edges, waited_for = false, false
      if exists then
        -- The job it replaces leaves its index, its key and its slots.
        local h = redis.call('HMGET', k, 's', 'pr', 'r', 'u', 'a', 'sl', 'dn', 'ao', 'd1')
        if h[1] == 'running' then
          free_slots(Q, id, h[5], h[6])
        end
        release_slots()
        unindex(Q, id, h[1] or 'pending', h[2], h[3])
        free_unique(Q, h[4], id)
        redis.call('DEL', k)
        if s == 'blocked' and h[8] then
          kept_edges = h[8]
        elseif h[8] then
          unlink_dependent(Q, id)
        else
          redis.call('DEL', after_key(Q, id))
        end
        -- (Its count of the jobs that wait for it, and its `d1`, go to the job that replaces it.)
        waited_for = h[7] and { 'dn', h[7] }
        if waited_for and h[9] then
          waited_for[3], waited_for[4] = 'd1', h[9]
        end
      end
      redis.call('HSET', k, unpack(ARGV, first, i - 1))
      if kept_edges then
        redis.call('HSET', k, 'ao', kept_edges)
      end
      if s == 'pending' or s == 'blocked' then
        index_expiry(Q, id, redis.call('HGET', k, 'xa'))
      end
      if s == 'pending' then
        index_pending(Q, id, pr ~= '' and pr or nil, r)
        pending = true
      elseif s == 'blocked' then
        redis.call('ZADD', blocked_key(Q), score, id)
      elseif s == 'running' then
        redis.call('ZADD', Q .. 'run', score, id)
      elseif s == 'waiting' then
        redis.call('ZADD', Q .. 'wait', score, id)
      else
        redis.call('ZADD', Q .. 'done:' .. s, score, id)
      end
      if u ~= '' then
        redis.call('HSET', uniq, u, id)
      end
      batch_add(made, made_key(Q), c, id)
      if waited_for and not ENDED[s] then
        redis.call('HSET', k, unpack(waited_for))
      elseif waited_for then
        release_dependents(Q, id, s, score)
      end
    end
  end
end
batch_flush(made, 'ZADD')
if pending then
  wake(Q)
end
local register = 0
if not dry then
  register = register_queue(Q, KEYS[2])
end
return { register, out }
