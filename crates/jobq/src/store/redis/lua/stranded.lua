-- KEYS: the queue's prefix. ARGV: from (a rank in the queue's blocked jobs), at most this many to read.
-- Reads up to `at most` of the queue's blocked jobs, by creation time from rank `from`, and returns
-- { the rank to go on from (0: none left), the ids of those among them that wait for no job which
-- has not ended } (see `Store::stranded`): every dependency ended or gone, a release missed. Each
-- call is atomic, so a release cannot be seen half-way; a page at a time, so that a queue with many
-- blocked jobs holds the server for no longer than one page. Only reads.
local Q, from, page = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
local ids = redis.call('ZRANGE', blocked_key(Q), from, from + page - 1)
local stranded = {}
for _, id in ipairs(ids) do
  local edges = redis.call('HGETALL', after_key(Q, id))
  local waits = false
  for f = 1, #edges, 2 do
    local state, q = string.match(edges[f + 1], '^(%S+) %S+ (.*)$')
    -- (An open edge to another slot of a cluster may have its release on the way in an outbox.)
    local far = remote_queue(q)
    local status = not far and job_status(sibling(Q, q), edges[f])
    if (far and state == 'open') or (status and not ENDED[status]) then
      waits = true
      break
    end
  end
  if not waits then
    stranded[#stranded + 1] = id
  end
end
local next = 0
if #ids == page then
  next = from + page
end
return { next, stranded }
