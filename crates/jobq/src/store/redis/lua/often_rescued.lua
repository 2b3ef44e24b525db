-- KEYS: the queue's prefix. ARGV: at least, limit.
-- The queue's pending, running, waiting and dead jobs whose error history holds at least `at least`
-- rescues (see `Store::often_rescued`), by id, at most `limit`, each packed (see `packed`). A rescue
-- is the JSON string "worker lost" in the history, quotes included (inside another error's text its
-- quotes are escaped). A job whose history is shorter than `at least` is passed over on its length
-- alone. Reads every live and dead job of the queue: an operator's call, not a worker's; it only
-- reads.
local Q, least, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
local needle = '"worker lost"'
local found = {}

local function consider(id)
  local h = redis.call('HMGET', jkey(Q, id), 'ec', 'e')
  if tonumber(h[1] or '0') < least or not h[2] then
    return
  end
  local n, at = 0, 1
  while true do
    local _, stop = string.find(h[2], needle, at, true)
    if not stop then
      break
    end
    n, at = n + 1, stop + 1
  end
  if n >= least then
    found[#found + 1] = id
  end
end

for _, pr in ipairs(redis.call('ZRANGE', Q .. 'prios', 0, -1)) do
  for _, m in ipairs(redis.call('ZRANGE', pend_key(Q, pr), 0, -1)) do
    consider(string.sub(m, 18))
  end
end
for _, index in ipairs({ 'run', 'wait', 'done:dead' }) do
  for _, id in ipairs(redis.call('ZRANGE', Q .. index, 0, -1)) do
    consider(id)
  end
end

table.sort(found)
local out = {}
local queue = queue_of(Q)
for n = 1, math.min(limit, #found) do
  out[n] = packed(redis.call('HGETALL', jkey(Q, found[n])), queue, found[n])
end
return out
