-- KEYS: the prefix of the dependents' queue. ARGV: the dependency's id (a job of another slot of a
-- cluster that a replay brought back, or that its cascade did), then ids of jobs of this queue that
-- wait for it.
-- The part of a replay's cascade in another slot (see `replay.lua`): each of those jobs that the
-- dependency's failure cancelled comes back blocked (`reopen`), and the jobs theirs cancelled in
-- turn (`reopen_cascade`). Returns { jobs, far } as `replay.lua` does.
local Q, dep = KEYS[1], ARGV[1]
local out, far, level = {}, {}, {}
for i = 2, #ARGV do
  if reopen(Q, ARGV[i], dep) then
    level[#level + 1] = { Q, ARGV[i] }
    out[#out + 1] = packed(redis.call('HGETALL', jkey(Q, ARGV[i])), queue_of(Q), ARGV[i])
  end
end
reopen_cascade(level, out, far)
return { out, far }
