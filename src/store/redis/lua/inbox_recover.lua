-- ARGV: prefix, taken before.
-- Puts the items of processing lists taken before then (their ingester died) back into their inboxes,
-- at the end read next. Returns how many items went back.
local before = tonumber(ARGV[2])
local registry = P .. 'inbox-processing'
local moved = 0
local entries = redis.call('HGETALL', registry)
for n = 1, #entries, 2 do
  local processing, value = entries[n], entries[n + 1]
  local space = string.find(value, ' ', 1, true)
  local taken, inbox = tonumber(string.sub(value, 1, space - 1)), string.sub(value, space + 1)
  if taken < before then
    while redis.call('LMOVE', processing, inbox, 'LEFT', 'RIGHT') do
      moved = moved + 1
    end
    redis.call('HDEL', registry, processing)
  end
end
return moved
