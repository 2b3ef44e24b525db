-- ARGV: prefix, limit, offset, created since ('' for any), created until ('' for any), queue count,
-- queues…, type count, types…, status count, statuses…
-- Jobs matching, newest first (created_at, then id, descending). Returns per job its id and its hash as
-- field/value pairs.
local limit, offset = tonumber(ARGV[2]), tonumber(ARGV[3])
local since, until_ = ARGV[4], ARGV[5]
local queues, i = take(7, tonumber(ARGV[6]))
local types, j = take(i + 1, tonumber(ARGV[i]))
local statuses = take(j + 1, tonumber(ARGV[j]))
local type_ok, status_ok = set_of(types), set_of(statuses)
local hi, lo = '+inf', '-inf'
if until_ ~= '' then
  hi = '(' .. until_
end
if since ~= '' then
  lo = since
end

local cands = {}
for _, q in ipairs(queues_or_all(queues)) do
  local found = redis.call('ZRANGE', qkey(q, 'all'), hi, lo, 'BYSCORE', 'REV', 'WITHSCORES')
  for n = 1, #found, 2 do
    cands[#cands + 1] = { tonumber(found[n + 1]), found[n] }
  end
end
table.sort(cands, function(a, b)
  if a[1] ~= b[1] then
    return a[1] > b[1]
  end
  return a[2] > b[2]
end)

local out = {}
local skipped = 0
for _, c in ipairs(cands) do
  if #out >= limit then
    break
  end
  local k = jkey(c[2])
  local ok = true
  if #types > 0 or #statuses > 0 then
    local h = redis.call('HMGET', k, 't', 's')
    ok = (#types == 0 or type_ok[h[1]]) and (#statuses == 0 or status_ok[h[2]])
  end
  if ok then
    if skipped < offset then
      skipped = skipped + 1
    else
      local job = redis.call('HGETALL', k)
      table.insert(job, 1, c[2])
      out[#out + 1] = job
    end
  end
end
return out
