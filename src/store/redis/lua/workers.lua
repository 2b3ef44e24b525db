-- ARGV: prefix, seen since.
-- Forgets the workers not seen since then; returns the others' records.
local since = ARGV[2]
local seen = P .. 'workers:seen'
local gone = redis.call('ZRANGE', seen, '-inf', '(' .. since, 'BYSCORE')
for _, id in ipairs(gone) do
  redis.call('HDEL', P .. 'workers', id)
  redis.call('ZREM', seen, id)
end
local out = {}
for _, id in ipairs(redis.call('ZRANGE', seen, since, '+inf', 'BYSCORE')) do
  local record = redis.call('HGET', P .. 'workers', id)
  if record then
    out[#out + 1] = record
  end
end
return out
