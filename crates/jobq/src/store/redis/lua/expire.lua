-- KEYS: the queue's prefix. ARGV: at most this many.
-- Ends `expired` the queue's jobs that have not started (pending or blocked) and whose expiry the
-- server's clock has passed, at most the given number, read from the queue's index of expiries
-- (`expiry`, see `index_expiry`) soonest first. An entry for a job that started, ended or went meanwhile
-- is dropped from the index. The jobs that wait for those ended are resolved in this script. Returns
-- { how many ended, how many entries were read }: a caller calls again while it read as many as it
-- asked for.
local Q, most = KEYS[1], tonumber(ARGV[1])
local now = server_millis()
local due = redis.call('ZRANGE', Q .. 'expiry', '-inf', now, 'BYSCORE', 'LIMIT', 0, most)
local ended, gone = {}, {}
local count = 0
for _, id in ipairs(due) do
  local h = redis.call('HMGET', jkey(Q, id), 's', 'pr', 'r', 'u', 'dn', 'd1', 'xa', 't')
  local s = status_of(h[1])
  if h[8] and (s == 'pending' or s == 'blocked') and tonumber(h[7]) and tonumber(h[7]) <= now then
    unindex(Q, id, s, h[2], h[3])
    end_expired(Q, id, h[4], h[5], h[6], now, ended)
    count = count + 1
  else
    gone[#gone + 1] = id
  end
end
if #gone > 0 then
  redis.call('ZREM', Q .. 'expiry', unpack(gone))
end
release_all(ended, now)
return { count, #due }
