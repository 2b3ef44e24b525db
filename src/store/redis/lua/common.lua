-- Shared by every script (prepended to each). ARGV[1] is the key prefix; keys are built here so that a
-- batch names any number of jobs and queues for a constant number of declared keys.
local P = ARGV[1]
local ERROR_CAP = 25

local function qkey(q, name)
  return P .. '{' .. q .. '}:' .. name
end

local function jkey(id)
  return P .. 'job:' .. id
end

-- A pending job sits in the lex-ordered set of its priority, as "<run_at key>:<id>".
local function pend_key(q, pr)
  return qkey(q, 'pend:' .. pr)
end

local function index_pending(id, q, pr, r)
  redis.call('ZADD', pend_key(q, pr), '0', r .. ':' .. id)
  redis.call('ZADD', qkey(q, 'prios'), pr, pr)
end

-- Takes a job out of the index of its status (pending, running, waiting or one of the terminal ones).
local function unindex(id, q, s, pr, r)
  if s == 'pending' then
    redis.call('ZREM', pend_key(q, pr), r .. ':' .. id)
  elseif s == 'running' then
    redis.call('ZREM', qkey(q, 'run'), id)
  elseif s == 'waiting' then
    redis.call('ZREM', qkey(q, 'wait'), id)
  else
    redis.call('ZREM', qkey(q, 'done:' .. s), id)
  end
end

-- A job that stops being live gives up its unique key.
local function free_unique(q, u, id)
  if u and redis.call('HGET', qkey(q, 'uniq'), u) == id then
    redis.call('HDEL', qkey(q, 'uniq'), u)
  end
end

-- Appends one pre-encoded error entry to the job's history, keeping the newest ERROR_CAP.
local function push_error(k, entry)
  local e = redis.call('HGET', k, 'e')
  if not e then
    redis.call('HSET', k, 'e', '[' .. entry .. ']', 'ec', 1)
    return
  end
  local n = tonumber(redis.call('HGET', k, 'ec') or '0') + 1
  if n <= ERROR_CAP then
    redis.call('HSET', k, 'e', string.sub(e, 1, -2) .. ',' .. entry .. ']', 'ec', n)
  else
    local list = cjson.decode(e)
    table.insert(list, cjson.decode(entry))
    while #list > ERROR_CAP do
      table.remove(list, 1)
    end
    redis.call('HSET', k, 'e', cjson.encode(list), 'ec', #list)
  end
end

local function error_entry(attempt, at, text)
  return '{"attempt":' .. attempt .. ',"at":' .. at .. ',"error":' .. cjson.encode(text) .. '}'
end

-- Tells idle workers that a queue may have work.
local function wake(q)
  redis.call('XADD', P .. 'wake', 'MAXLEN', '64', '*', 'q', q)
end

-- The queues a call names, or every queue when it names none.
local function queues_or_all(list)
  if #list > 0 then
    return list
  end
  return redis.call('SMEMBERS', P .. 'queues')
end

-- Reads `n` arguments from position `i` on; returns them and the next position.
local function take(i, n)
  local out = {}
  for j = 0, n - 1 do
    out[#out + 1] = ARGV[i + j]
  end
  return out, i + n
end

local function set_of(list)
  local s = {}
  for _, v in ipairs(list) do
    s[v] = true
  end
  return s
end

-- Gathers the arguments of one command per key, sent at the end of a script in a few large calls
-- instead of one call per job: `batch_add(b, key, score, member)` then `batch_flush(b, 'ZADD')`
-- (`member` alone for ZREM). Only for writes that nothing later in the same script reads back.
local function batch_add(b, key, first, second)
  local args = b[key]
  if not args then
    args = {}
    b[key] = args
  end
  args[#args + 1] = first
  if second ~= nil then
    args[#args + 1] = second
  end
end

local function batch_flush(b, command)
  for key, args in pairs(b) do
    for n = 1, #args, 1000 do
      redis.call(command, key, unpack(args, n, math.min(n + 999, #args)))
    end
  end
end
