-- KEYS: the queue registry (`<prefix>queues`). ARGV: the key prefix, a job id.
-- Returns the job with that id, packed (see `packed`), from the first queue in name order that has
-- it, or false when none has. Reads only.
-- For a single server only (the shebang says `no-cluster`): it finds the job's queue in the registry
-- and so touches keys it cannot declare, which is what lets `get` take one round trip. On a cluster
-- the store reads the registry first and then the job hashes.
local prefix, id = ARGV[1], ARGV[2]
local queues = redis.call('SMEMBERS', KEYS[1])
table.sort(queues)
for _, q in ipairs(queues) do
  local Q = prefix .. '{' .. q .. '}:'
  local fields = redis.call('HGETALL', jkey(Q, id))
  if #fields > 0 then
    return packed(fields, q, id)
  end
end
return false
