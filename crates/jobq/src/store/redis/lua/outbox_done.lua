-- KEYS: the prefix of the queue whose outbox it is. ARGV: the queue it is addressed to, then entries.
-- Takes each entry out of the outbox once (`outbox_apply.lua` applied it); one another reader took out
-- first is not there any more, and nothing else goes.
local key = KEYS[1] .. 'outbox:' .. ARGV[1]
for i = 2, #ARGV do
  redis.call('LREM', key, 1, ARGV[i])
end
return 0
