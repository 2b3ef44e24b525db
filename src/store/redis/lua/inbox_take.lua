-- ARGV: prefix, inbox key, processing key, now, at most.
-- Moves up to `at most` items, oldest first, from an inbox into a processing list of the caller's own,
-- and records when, so that the items of a caller that dies are put back. Returns the items.
local inbox, processing, now, most = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local out = {}
for _ = 1, most do
  local item = redis.call('LMOVE', inbox, processing, 'RIGHT', 'LEFT')
  if not item then
    break
  end
  out[#out + 1] = item
end
if #out > 0 then
  redis.call('HSET', P .. 'inbox-processing', processing, now .. ' ' .. inbox)
end
return out
