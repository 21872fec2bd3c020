/**
 * The Lua scripts of the shared rate gate (redis-rate-gate.ts): every decision that several worker
 * processes must agree on is taken inside Redis, in one round trip.
 */

/**
 * Shared Lua helpers. A chat's state and a budget's state are each one string of fields joined by '|'
 * (chat: next|exp|-|-|blk, two fields unused; budget: tat|tati|act|blocked|exp), so a script reads both in one MGET and
 * writes each with one SET … KEEPTTL. Every key lives at least KEEP past the latest time it holds. Rather
 * than a PTTL and a PEXPIRE on every call, the state notes its own expiry (`exp`) and the expiry is pushed
 * out a further KEEP whenever it falls short, so a busy chat renews it about once a minute.
 */
const CLOCK = `
local KEEP = 60000
local function clock(arg)
  if arg ~= '' then return tonumber(arg) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The new expiry (absolute) when the key, expiring at exp, must live until untilAt; nil when it already does.
local function pushOut(exp, untilAt)
  if exp >= untilAt then return nil end
  return untilAt + KEEP
end
local function expireAt(key, at, now)
  redis.call('PEXPIRE', key, math.max(1, math.ceil(at - now)))
end
-- The fields of a state string (an empty table for a missing key).
local function fields(s)
  local t = {}
  if not s then return t end
  local i = 1
  while true do
    local j = string.find(s, '|', i, true)
    if not j then t[#t + 1] = string.sub(s, i) return t end
    t[#t + 1] = string.sub(s, i, j - 1)
    i = j + 1
  end
end
local function num(v) return tonumber(v or '') or 0 end
-- The state string of n fields (numbers in full precision; nil and false as empty).
local function pack(t, n)
  local out = {}
  for i = 1, n do
    local v = t[i]
    if type(v) == 'number' then out[i] = string.format('%.17g', v)
    elseif v then out[i] = v
    else out[i] = '' end
  end
  return table.concat(out, '|')
end
-- A chat's state and, when there is a budget, the budget's, in one read.
local function readStates(chat, global)
  if not global then return fields(redis.call('GET', chat)), {} end
  local raw = redis.call('MGET', chat, global)
  return fields(raw[1]), fields(raw[2])
end
-- Writes a state, keeping the key's expiry, or giving it the new one when it moved.
local function store(key, t, newExp, now)
  redis.call('SET', key, pack(t, 5), 'KEEPTTL')
  if newExp then expireAt(key, newExp, now) end
end
local function extend(key, ms)
  ms = math.ceil(ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end
`;

/** ACQUIRE's reading of the chat's state and the bot-wide buckets. */
const CHAT_STATE = `${CLOCK}
local now = clock(ARGV[1])
local interval = tonumber(ARGV[3])
local ticket = tonumber(ARGV[5])
local T, tau, Ti, taui = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local chat, global = KEYS[1], KEYS[2]

local st, g = readStates(chat, global)
local storedNext = num(st[1])
local nextAt = storedNext
-- A final coming back to a chat it holds (see ACQUIRE): the chat is free for it from the held time, even
-- if requests were placed after it meanwhile, unless a 429 blocked the chat since.
local held = tonumber(ARGV[4])
if held and storedNext >= held + interval and num(st[5]) <= held then nextAt = held end
-- Where the caller's own last request leaves the chat: a request that completed promptly is not told to
-- Redis on its own (its completion comes with the next one).
nextAt = math.max(nextAt, tonumber(ARGV[12]) or 0)
local exp = num(st[2])

-- Chat fields (1 next, 2 exp, 3 and 4 unused, 5 blk) written once, at the end (with the expiry when it moves).
local chatDirty = false
local function put(index, value) st[index] = value; chatDirty = true end
local function saveChat(untilAt)
  local newExp = pushOut(exp, untilAt)
  if newExp then put(2, newExp) end
  if chatDirty then store(chat, st, newExp, now) end
end

-- tat: reservations (the order finals go in; intermediates are charged here too, so finals queue
-- behind what was really used); act: the grants as they happen, which is what the platform counts.
-- Read with the chat's state (the same MGET).
local tat, tati, act, gblocked, gexp = num(g[1]), num(g[2]), num(g[3]), num(g[4]), num(g[5])
local globalDirty = false
local function saveGlobal()
  if not globalDirty then return end
  local newExp = pushOut(gexp, math.max(tat, tati, act, gblocked) + KEEP)
  if newExp then gexp = newExp end
  store(global, {tat, tati, act, gblocked, gexp}, newExp, now)
end

-- A slot for the time given (now, or later for a final): the chat's next request comes one interval after it.
local function grant(at)
  put(1, at + interval)
  saveGlobal()
  saveChat(at + interval + KEEP)
  return {1, at, storedNext}
end

`;

/**
 * One slot, for a final or a lone intermediate. KEYS: chat state, [budget state]
 * ARGV: now|'', kind, interval, held|'', ticket|'', T, tau, Ti, taui, '', '' (unused), the caller's own earliest next|''
 * Returns {1, at, the chat's 'next' before} (granted for `at`, now or later), {0, waitMs, ticket|-1}, or for
 * a final {0, waitMs, -2, held, the chat's 'next' before} (the chat is held for it from `held`: it comes
 * back then with `held`).
 *
 * A final is granted, in one round trip, for the earliest time both its chat and the bot-wide
 * reservations allow: the chat's next slot is then past it, so intermediates of every process asking in
 * the meantime come after it, and its reservation in `tat` makes intermediates everywhere yield until it
 * has gone. A second final in the chat is granted one interval after the first: finals go in arrival order.
 * Only when its chat is busy for longer than the bot-wide queue does it take two: it holds the chat from
 * when it is free and comes back then for its place in the budget (the buckets cannot hold a reservation
 * that leaves a gap before it).
 */
export const ACQUIRE = `${CHAT_STATE}
if ARGV[2] == 'final' then
  local at = math.max(now, nextAt)
  if global then
    local turn = math.max(now, gblocked, tat - tau, act - tau)
    if at > turn + T then
      -- Its chat is free only after the bot-wide queue has moved on: a reservation that far ahead would
      -- leave the budget idle until then for every other chat. It holds the chat from then (requests asking
      -- meanwhile come after it) and comes back then for its place in the budget.
      put(1, at + interval)
      saveChat(at + interval + KEEP)
      return {0, math.ceil(at - now), -2, at, storedNext}
    end
    at = math.ceil(math.max(at, turn))
    tat = math.max(tat, at) + T
    act = math.max(act, at) + T
    globalDirty = true
  end
  return grant(at)
end

-- An intermediate.
if nextAt > now then
  saveChat(0)
  return {0, math.ceil(nextAt - now), ticket or -1}
end
if not global then return grant(now) end
if ticket == nil or gblocked > now then
  -- A place in the intermediates' own (slower) bucket, never inside time finals have reserved. A late
  -- caller keeps its place: the shared bucket is charged when the slot is granted, below.
  ticket = math.ceil(math.max(now, tati - taui, tat - tau, gblocked))
  tati = math.max(tati, ticket) + Ti
  globalDirty = true
end
-- Its slot: after its ticket, and after what finals reserved and what was really granted.
local at = math.ceil(math.max(now, ticket, tat - tau, act - tau))
if at - now > T then
  saveGlobal()
  saveChat(0)
  return {0, at - now, ticket}
end
-- Due within one bot-wide spacing: granted for then in this round trip rather than asked for again (a
-- final coming meanwhile goes after it, by at most that spacing).
tat = math.max(tat, at) + T
act = math.max(act, at) + T
globalDirty = true
return grant(at)
`;

/**
 * A final granted (or holding its chat) for later that will not be used (its wait was aborted) gives the chat back: its
 * 'next' goes back to what it was, unless another request was granted after it meanwhile. The bot-wide
 * reservation stays (a slot of the budget left unused).
 * KEYS: chat state · ARGV: the 'next' the grant set, the 'next' before it (0: none)
 */
export const UNGRANT = `${CLOCK}
local st = fields(redis.call('GET', KEYS[1]))
if num(st[1]) ~= tonumber(ARGV[1]) then return 0 end
st[1] = tonumber(ARGV[2]) > 0 and ARGV[2] or ''
store(KEYS[1], st, nil)
return 1
`;

/**
 * KEYS: chat state, [budget state, recent-429 zset]
 * ARGV: now|'', retryAfterMs, chat key, flood window ms, flood chats
 */
export const BACKOFF = `${CLOCK}
local now = clock(ARGV[1])
local upto = now + tonumber(ARGV[2])
local chat, global, recent = KEYS[1], KEYS[2], KEYS[3]
local st = fields(redis.call('GET', chat))
local newExp = pushOut(num(st[2]), upto + KEEP)
-- 'blk': when the chat is free of its 429s (a final holding the chat from before must wait for them too).
st[5] = math.max(upto, num(st[5]))
if upto > num(st[1]) then st[1] = upto end
if newExp then st[2] = newExp end
store(chat, st, newExp, now)
if global then
  local window = tonumber(ARGV[4])
  redis.call('ZADD', recent, now, ARGV[3])
  redis.call('ZREMRANGEBYSCORE', recent, '-inf', now - window)
  extend(recent, window * 2)
  if redis.call('ZCARD', recent) >= tonumber(ARGV[5]) then
    local g = fields(redis.call('GET', global))
    local gExp = pushOut(num(g[5]), upto + KEEP)
    if upto > num(g[4]) then g[4] = upto end
    if gExp then g[5] = gExp end
    store(global, g, gExp, now)
  end
end
return upto
`;

/**
 * A request that took long to complete frees its chat one interval after now (its completion, not its grant).
 * KEYS: chat state · ARGV: now|'', interval
 */
export const RELEASE = `${CLOCK}
local now = clock(ARGV[1])
local upto = now + tonumber(ARGV[2])
local st = readStates(KEYS[1])
local newExp = pushOut(num(st[2]), upto + KEEP)
local dirty = false
if upto > num(st[1]) then st[1] = upto; dirty = true end
if newExp then st[2] = newExp; dirty = true end
if dirty then store(KEYS[1], st, newExp, now) end
return upto
`;

/**
 * One worker process's share of a bot-wide budget whose lane every process paces by itself (drafts: no final
 * draws on that budget). KEYS: the shares hash (field: process id, value: demand|published|until)
 * ARGV: now|'', holder, demand, floor, capacity, ttlMs, headroom, windowMs
 * Returns {allowance, available, total demand}.
 *
 * Budget units are grants in any window (the gate's 1 s plus its latency margin). Each process publishes what
 * it wants (`demand`) and what it may be using (`published`): its allowance, or more while a larger one it
 * held within the last window (`floor`) may still show in that window. Allowances never sum above the
 * capacity: a process grows only into what the others do not publish, and shrinks at once.
 * While the demands fit, each process gets what it wants plus `headroom` (chats starting there need no
 * round trip); when they do not, each gets the capacity in proportion to its demand.
 */
export const SHARE = `${CLOCK}
local now = clock(ARGV[1])
local key, holder = KEYS[1], ARGV[2]
local demand, floor, capacity = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local ttl, headroom, window = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local raw = redis.call('HGETALL', key)
local total, held, gone = demand, 0, {}
for i = 1, #raw, 2 do
  if raw[i] ~= holder then
    local f = fields(raw[i + 1])
    if num(f[3]) <= now then gone[#gone + 1] = raw[i]
    else
      total = total + num(f[1])
      held = held + num(f[2])
    end
  end
end
if #gone > 0 then redis.call('HDEL', key, unpack(gone)) end
local target
if demand == 0 then target = 0
elseif total + headroom <= capacity then target = demand + headroom
else target = math.floor(capacity * demand / total) end
local available = math.max(0, capacity - held)
local allowance = math.min(target, available)
local published = math.max(allowance, floor)
if published == 0 and demand == 0 then
  redis.call('HDEL', key, holder)
else
  -- Idle, it lets go once its last window has passed; streaming, it renews well before others would drop it.
  local untilAt = now + (demand == 0 and window or ttl)
  redis.call('HSET', key, holder, demand .. '|' .. published .. '|' .. untilAt)
  redis.call('PEXPIRE', key, ttl * 2)
end
return {allowance, available, total}
`;
