-- KEYS: the prefix of the dependents' queue. ARGV: now, the grace in milliseconds, then entries of an
-- outbox of another hash slot addressed to this queue (`<dependent>\n<dependency>\n<status>\n<time>`,
-- see `remote_queue`).
-- Resolves each entry's edge as the end of a dependency in this slot would (`resolve_edge`, at the
-- dependency's end time), cascading and waking as `release_all` does. An entry applied twice (a reader
-- that died before it took it out, two readers at once) finds its edge no longer open and changes
-- nothing. Returns per entry 1 when it is done with, for the caller to take out of its outbox, or 0
-- to keep it: its dependent is not written yet (the enqueue that linked it may still be on its way,
-- see `link.lua`) and the entry is younger than the grace.
local Q, now, grace = KEYS[1], ARGV[1], tonumber(ARGV[2])
local done, ended, woken = {}, {}, {}
for i = 3, #ARGV do
  local dependent, dep, status, at = string.match(ARGV[i], '^([^\n]*)\n([^\n]*)\n([^\n]*)\n([^\n]*)$')
  if not dependent then
    done[#done + 1] = 1
  elseif redis.call('EXISTS', jkey(Q, dependent)) == 1 then
    resolve_edge(Q, dependent, dep, status, at, ended, woken)
    done[#done + 1] = 1
  elseif tonumber(now) - tonumber(at) > grace then
    done[#done + 1] = 1
  else
    done[#done + 1] = 0
  end
end
release_all(ended, now, woken)
return done
