-- KEYS: the queue's prefix, then on a single server the queue registry (`<prefix>queues`).
-- ARGV: count, then per tick: schedule name, tick time (Unix ms), overlap ('allow', 'skip' or
-- 'one-pending'), and its job: id, type, payload, meta, priority, max_attempts, run_at key, created_at
-- ('' for meta at its default).
-- Returns { register, outcomes }: one letter per tick, 'E' enqueued, 'A' already handled (or its job's
-- id exists already), 'S' skipped by the overlap rule, 'P' paused, 'U' no record of the schedule;
-- register as in `enqueue.lua`.
-- Atomic: the schedule's record (see `schedules.lua`) and the job change in one script, so racing
-- workers enqueue a tick once, and a tick handled once is never enqueued again. The rules are those of
-- `store::schedules::decide`, which the SQL stores run; the conformance suite holds both to them.
local Q, n = KEYS[1], tonumber(ARGV[1])
local out = {}
local created = false
local i = 2
for _ = 1, n do
  local name, at, overlap = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
  local id, t, p, m, pr, ma, r, c =
    ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7], ARGV[i + 8], ARGV[i + 9], ARGV[i + 10]
  i = i + 11
  local sk = Q .. 'sched:' .. name
  local st = redis.call('HMGET', sk, 'nb', 'lt', 'p', 'lj')
  if not st[1] then
    out[#out + 1] = 'U'
  elseif st[3] == '1' then
    out[#out + 1] = 'P'
  elseif at < tonumber(st[1]) or (st[2] and at <= tonumber(st[2])) then
    out[#out + 1] = 'A'
  else
    redis.call('HSET', sk, 'lt', at)
    local status = st[4] and job_status(Q, st[4])
    local held = false
    if status then
      if overlap == 'skip' then
        held = status == 'pending' or status == 'running' or status == 'waiting'
      elseif overlap == 'one-pending' then
        held = status == 'pending'
      end
    end
    if held then
      out[#out + 1] = 'S'
    else
      local k = jkey(Q, id)
      if redis.call('EXISTS', k) == 1 then
        out[#out + 1] = 'A'
      else
        local job = hset_args(t, m, pr, ma, '', '')
        job[1], job[5], job[7], job[9] = k, p, r, c
        redis.call('HSET', unpack(job))
        index_pending(Q, id, pr, r)
        redis.call('ZADD', made_key(Q), c, id)
        created = true
        out[#out + 1] = 'E'
      end
      redis.call('HSET', sk, 'lj', id)
    end
  end
end
local register = 0
if created then
  wake(Q)
  register = register_queue(Q, KEYS[2])
end
return { register, table.concat(out) }
