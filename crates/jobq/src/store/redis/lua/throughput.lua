-- KEYS: the queue's prefix. ARGV: since (ms), bucket width (ms), number of buckets.
-- The queue's jobs finished per bucket and status (see `Store::throughput`): a list of
-- { status, bucket, count }, non-empty buckets only. Each finished status has an index
-- scored by finish time (`done:<status>`), so a bucket is one ZCOUNT over the score range
-- [start, start + width): the cost is the number of buckets, whatever the number of jobs. One
-- script, so the counts are of one moment; it only reads.
local Q = KEYS[1]
local since, width, buckets = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {}

for _, s in ipairs({ 'succeeded', 'dead', 'discarded', 'cancelled', 'expired' }) do
  local key = Q .. 'done:' .. s
  -- Nothing finished in the window with this status: skip its buckets.
  if redis.call('ZCOUNT', key, since, '(' .. (since + width * buckets)) > 0 then
    for b = 0, buckets - 1 do
      local start = since + width * b
      local n = redis.call('ZCOUNT', key, start, '(' .. (start + width))
      if n > 0 then
        out[#out + 1] = { s, b, n }
      end
    end
  end
end

return out
