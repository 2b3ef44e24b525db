-- KEYS: the finished jobs' queue prefix, then the prefixes of the queues to claim from (on a cluster,
-- all in that queue's hash slot). ARGV: how many of the arguments that follow are `finish.lua`'s,
-- those, then `claim_limited.lua`'s.
-- A worker under limits writes its outcomes and claims their replacements in one call: this script
-- is `finish.lua` and then `claim_limited.lua`, each the very file, run as a function of its own keys
-- and arguments (`joined!` in scripts.rs puts them before this), so the claim sees the slots the
-- outcomes freed and no other claim comes between. Returns {finish.lua's reply, claim_limited.lua's}.
local finish_count = tonumber(ARGV[1])
local finish_args, claim_args, claim_keys = {}, {}, {}
for i = 2, finish_count + 1 do
  finish_args[#finish_args + 1] = ARGV[i]
end
for i = finish_count + 2, #ARGV do
  claim_args[#claim_args + 1] = ARGV[i]
end
for i = 2, #KEYS do
  claim_keys[#claim_keys + 1] = KEYS[i]
end
local applied = finish_script({ KEYS[1] }, finish_args)
return { applied, claim_limited_script(claim_keys, claim_args) }
