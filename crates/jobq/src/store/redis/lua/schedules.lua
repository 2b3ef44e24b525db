-- KEYS: the queue's prefix. ARGV: schedule names whose jobs go to that queue.
-- Returns per name false (no record) or { not_before, last_tick, paused, last_job, last_job_status },
-- '' for what is absent (a last job that is gone has status ''). Reads only.
-- A schedule's record is the hash `<queue prefix>sched:<name>`: nb (not before), lt (last tick
-- handled), p ('1' when paused), lj (the last tick's job), in its queue's slot, so that `tick.lua`
-- changes it and enqueues the job in one script.
local Q = KEYS[1]
local out = {}
for i, name in ipairs(ARGV) do
  local st = redis.call('HMGET', Q .. 'sched:' .. name, 'nb', 'lt', 'p', 'lj')
  if not st[1] then
    out[i] = false
  else
    local status = ''
    if st[4] then
      status = job_status(Q, st[4]) or ''
    end
    out[i] = { st[1], st[2] or '', st[3] or '0', st[4] or '', status }
  end
end
return out
