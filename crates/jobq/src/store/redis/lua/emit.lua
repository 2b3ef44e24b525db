-- KEYS: the event's record, the prefixes of the queues its jobs go to, then on a single server the
-- queue registry (`<prefix>queues`). ARGV: event id, event name, number of queues, then per job: the
-- place of its queue among the queue prefixes (from 1), id, type, payload, meta, priority,
-- max_attempts, run_at key, created_at ('' for meta at its default).
-- Returns { registers, outcome }: outcome 'E' emitted or 'D' when the record exists (nothing
-- written); registers, per queue in KEYS order, 1 when the caller must add it to the registry itself
-- (on a cluster only, see `register_queue`). A job whose id exists already is left as it is.
-- Atomic: the record and every job in one script. On a single server the record is the event's own
-- key (`<prefix>event:<id>`). On a cluster the store calls this once per hash slot of the event's
-- queues, each with a record in that slot, and records the whole event under `{<prefix>events}`
-- after the last part: each part is written once, and an emit repeated after a broken one completes it.
local nq = tonumber(ARGV[3])
local registry = KEYS[nq + 2]
if not redis.call('SET', KEYS[1], ARGV[2], 'NX') then
  return { {}, 'D' }
end
local touched = {}
local i = 4
while i <= #ARGV do
  local q, id, t, p, m, pr, ma, r, c =
    tonumber(ARGV[i]), ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7],
    ARGV[i + 8]
  i = i + 9
  local Q = KEYS[q + 1]
  local k = jkey(Q, id)
  if redis.call('EXISTS', k) == 0 then
    local job = hset_args(t, m, pr, ma, '', '')
    job[1], job[5], job[7], job[9] = k, p, r, c
    redis.call('HSET', unpack(job))
    index_pending(Q, id, pr, r)
    redis.call('ZADD', made_key(Q), c, id)
    touched[q] = true
  end
end
local registers = {}
for q = 1, nq do
  registers[q] = 0
  if touched[q] then
    wake(KEYS[q + 1])
    registers[q] = register_queue(KEYS[q + 1], registry)
  end
end
return { registers, 'E' }
