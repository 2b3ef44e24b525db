-- KEYS: an inbox, its processing registry, a new processing list (both named inside the inbox's hash
-- tag, so all three share its slot). ARGV: now, stale before, at most.
-- Takes a batch to ingest: the items of a processing list whose ingester has not finished since
-- before `stale before` (it died), or else up to `at most` items, oldest first, moved from the inbox
-- into the new processing list. Either list is stamped with `now` in the registry. Returns the list's
-- name and its items, or nothing.
local inbox, registry, fresh = KEYS[1], KEYS[2], KEYS[3]
local now, stale, most = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local entries = redis.call('HGETALL', registry)
for n = 1, #entries, 2 do
  local list, taken = entries[n], tonumber(entries[n + 1])
  if taken < stale then
    local items = redis.call('LRANGE', list, 0, -1)
    if #items == 0 then
      redis.call('HDEL', registry, list)
    else
      redis.call('HSET', registry, list, now)
      return { list, items }
    end
  end
end
local items = {}
for _ = 1, most do
  local item = redis.call('LMOVE', inbox, fresh, 'RIGHT', 'RIGHT')
  if not item then
    break
  end
  items[#items + 1] = item
end
if #items == 0 then
  return {}
end
redis.call('HSET', registry, fresh, now)
return { fresh, items }
