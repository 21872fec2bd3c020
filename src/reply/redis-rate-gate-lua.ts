/**
 * The Lua scripts of the shared rate gate (redis-rate-gate.ts): every decision that several worker
 * processes must agree on is taken inside Redis, in one round trip.
 */

/**
 * Shared Lua helpers. Every key lives at least KEEP past the latest time it holds. Rather than a
 * PTTL and a PEXPIRE on every call, a hash notes its own expiry (field `exp`; the chat hash also notes
 * its finals zset's, `fexp`) and the expiry is pushed out a further KEEP whenever it falls short, so a
 * busy chat renews it about once a minute. The chat hash always outlives its finals zset, so its count
 * of queued finals (`nf`) cannot outlive the zset's members unnoticed.
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
-- Finals of a process that died while waiting must not hold the chat for ever. Only looked at when
-- some are queued: the count in the chat hash says so without a round trip to the zset.
local function liveFinals(chat, finals, storedNf, now)
  local nf = 0
  if storedNf == 0 then return 0 end
  for _, m in ipairs(redis.call('ZRANGE', finals, 0, -1)) do
    local lease = tonumber(redis.call('HGET', chat, 'lease:' .. m))
    if lease == nil or lease < now then
      redis.call('ZREM', finals, m)
      redis.call('HDEL', chat, 'lease:' .. m)
    else
      nf = nf + 1
    end
  end
  return nf
end
local function extend(key, ms)
  ms = math.ceil(ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end
`;


/** What ACQUIRE and LEASE share: the chat's state, the dead finals swept, the bot-wide buckets. */
const CHAT_STATE = `${CLOCK}
local now = clock(ARGV[1])
local interval = tonumber(ARGV[3])
local id = ARGV[4]
local ticket = tonumber(ARGV[5])
local T, tau, Ti, taui = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local leaseMs = tonumber(ARGV[10])
local chat, finals, global = KEYS[1], KEYS[2], KEYS[3]

local st = redis.call('HMGET', chat, 'next', 'headAt', 'nf', 'exp', 'fexp', 'lh', 'lend')
local nextAt = tonumber(st[1]) or 0
local mine = st[6] == ARGV[11]
if st[6] and not mine then nextAt = math.max(nextAt, tonumber(st[7]) or 0) end
-- Where the caller's own last request leaves the chat: the holder's credits are not in 'next', and a
-- request that completed promptly is not told to Redis on its own (its completion comes with the next one).
nextAt = math.max(nextAt, tonumber(ARGV[12]) or 0)
local headAt = tonumber(st[2]) or 0
local storedNf = tonumber(st[3]) or 0
local exp = tonumber(st[4]) or 0
local fexp = tonumber(st[5]) or 0

-- Chat fields written once, at the end (with the expiry when it moves).
local writes = {}
local function put(field, value) writes[#writes + 1] = field; writes[#writes + 1] = value end
local nf = 0
local function saveChat(untilAt)
  if nf ~= storedNf then put('nf', nf) end
  local newExp = pushOut(exp, untilAt)
  if newExp then put('exp', newExp) end
  if #writes > 0 then redis.call('HSET', chat, unpack(writes)) end
  if newExp then expireAt(chat, newExp, now) end
end

nf = liveFinals(chat, finals, storedNf, now)
local live = nf

-- tat: reservations (the order finals go in; intermediates are charged here too, so finals queue
-- behind what was really used); act: the grants as they really happen, which is what the platform
-- counts (a reservation used late, e.g. by a process that stalled, must not crowd a window).
-- Read only when a decision needs it.
local tat, tati, act, gblocked, gexp = 0, 0, 0, 0, 0
local globalRead, globalDirty = false, false
local function readGlobal()
  if globalRead or not global then return end
  globalRead = true
  local g = redis.call('HMGET', global, 'tat', 'tati', 'act', 'blocked', 'exp')
  tat, tati, act, gblocked, gexp = tonumber(g[1]) or 0, tonumber(g[2]) or 0, tonumber(g[3]) or 0, tonumber(g[4]) or 0, tonumber(g[5]) or 0
end
local function saveGlobal()
  if not globalDirty then return end
  local newExp = pushOut(gexp, math.max(tat, tati, act, gblocked) + KEEP)
  if newExp then
    redis.call('HSET', global, 'tat', tat, 'tati', tati, 'act', act, 'exp', newExp)
    expireAt(global, newExp, now)
  else
    redis.call('HSET', global, 'tat', tat, 'tati', tati, 'act', act)
  end
end

local function grant()
  put('next', now + interval)
  saveGlobal()
  saveChat(now + interval + KEEP)
  return {1, now}
end

`;

/**
 * One slot, for a final or a lone intermediate. KEYS: chat hash, finals zset, [global hash]
 * ARGV: now|'', kind, interval, waiter id, ticket|'', T, tau, Ti, taui, leaseMs, holder, the holder's own earliest next|''
 * Returns {1, now} (granted) or {0, waitMs, ticket|-1}. Another process's credits (`lh`, `lend`, see
 * LEASE) hold the chat until they end; the holder's own final goes ahead of them and ends them.
 */
export const ACQUIRE = `${CHAT_STATE}
if ARGV[2] == 'final' then
  -- Alone in the chat, and both the chat and the budget are free: granted without a place in the chat's
  -- queue (the same outcome as queueing it first and granting it at once, without the finals zset's work).
  if nf == 0 and nextAt <= now and ticket == nil then
    local free = true
    if global then
      readGlobal()
      free = gblocked <= now and tat - tau <= now and act - tau <= now
    end
    if free then
      if global then
        tat = math.max(tat, now) + T
        act = math.max(act, now) + T
        globalDirty = true
      end
      if mine then redis.call('HDEL', chat, 'headAt', 'lh', 'lend')
      elseif st[2] then redis.call('HDEL', chat, 'headAt') end
      return grant()
    end
  end
  if redis.call('ZSCORE', finals, id) == false then
    -- An empty queue is a new zset, without an expiry whatever fexp still says.
    if nf == 0 then fexp = 0 end
    local seq = redis.call('HINCRBY', chat, 'seq', 1)
    redis.call('ZADD', finals, seq, id)
    nf = nf + 1
    live = live + 1
  end
  local rank = redis.call('ZRANK', finals, id)
  local function grantFinal()
    redis.call('ZREM', finals, id)
    nf = nf - 1
    if mine then redis.call('HDEL', chat, 'lease:' .. id, 'headAt', 'lh', 'lend')
    else redis.call('HDEL', chat, 'lease:' .. id, 'headAt') end
    return grant()
  end
  local wait, keep = 0, -1
  if rank > 0 then
    -- Behind other finals of this chat: look again about when our turn should come.
    wait = math.max(10, math.max(nextAt, headAt, now) - now + rank * interval)
  elseif nextAt > now then
    wait = nextAt - now
    if ticket then keep = ticket end
  elseif not global then
    return grantFinal()
  else
    readGlobal()
    if ticket == nil or gblocked > now then
      -- Reserve the next bot-wide slot (FIFO over all chats' finals; intermediates yield until it passed).
      ticket = math.max(now, tat - tau, gblocked)
      tat = math.max(tat, ticket) + T
      globalDirty = true
    end
    if ticket > now then
      wait = ticket - now
    elseif act - tau > now then
      -- Its time has come, but late: reservations that fell due together still go out spaced.
      wait = act - tau - now
    else
      act = math.max(act, now) + T
      globalDirty = true
      return grantFinal()
    end
    keep = ticket
  end
  saveGlobal()
  put('lease:' .. id, now + wait + leaseMs)
  if rank == 0 then put('headAt', now + wait) end
  -- The finals zset lives as long as the waiters' leases, and the chat hash at least as long as the zset.
  local untilAt = now + wait + leaseMs + KEEP
  local newFexp = pushOut(fexp, untilAt)
  if newFexp then
    put('fexp', newFexp)
    expireAt(finals, newFexp, now)
    untilAt = math.max(untilAt, newFexp)
  end
  saveChat(untilAt)
  return {0, math.max(1, math.ceil(wait)), keep}
end

-- An intermediate.
if live > 0 then
  -- A final waits for this chat: it goes first.
  saveChat(0)
  return {0, math.ceil(math.max(10, math.max(nextAt, headAt, now) - now + live * interval)), ticket or -1}
end
if nextAt > now then
  saveChat(0)
  return {0, math.ceil(nextAt - now), ticket or -1}
end
if not global then return grant() end
readGlobal()
if ticket == nil or gblocked > now then
  -- A place in the intermediates' own (slower) bucket, never inside time finals have reserved. A late
  -- caller keeps its place: the shared bucket is charged when the slot is granted, below.
  ticket = math.max(now, tati - taui, tat - tau, gblocked)
  tati = math.max(tati, ticket) + Ti
  globalDirty = true
end
local waitFor = 0
if ticket > now then waitFor = ticket - now
elseif tat - tau > now then waitFor = tat - tau - now
elseif act - tau > now then waitFor = act - tau - now
end
if waitFor > 0 then
  saveGlobal()
  saveChat(0)
  return {0, math.ceil(waitFor), ticket}
end
tat = math.max(tat, now) + T
act = math.max(act, now) + T
globalDirty = true
return grant()
`;

/**
 * Credits for intermediates. KEYS: chat hash, finals zset, [global hash]
 * ARGV: now|'', k, interval, '', '', T, tau, Ti, taui, leaseMs, holder, the holder's own earliest next|'', slack
 * Returns {1, start, now, credits} (the credits from start; fewer than k when the budget binds) or {0, waitMs, now}.
 */
export const LEASE = `${CHAT_STATE}

-- Credits: k request slots in this chat, at start + j * interval, for this process (the holder) alone;
-- the chat is the holder's until lend. The bot-wide budget is charged for all k at once (intermediates'
-- bucket: k * Ti, so leases start at least that far apart) and refunded for credits left unused (RELEASE).
local k = tonumber(ARGV[2])
local holder = ARGV[11]
local slack = tonumber(ARGV[13])
if live > 0 then
  -- A final waits for this chat: it goes first.
  saveChat(0)
  return {0, math.ceil(math.max(10, math.max(nextAt, headAt, now) - now + live * interval)), now}
end
if nextAt > now + interval then
  -- Blocked (a 429) or another process's credits: ask again then.
  saveChat(0)
  return {0, math.ceil(nextAt - now), now}
end
local start = math.max(now, nextAt)
if global then
  readGlobal()
  if gblocked > now then
    saveChat(0)
    return {0, math.ceil(gblocked - now), now}
  end
  -- After every lease already placed and never inside time finals have reserved.
  start = math.max(start, tati - taui, tat - tau)
  -- More than one lease's worth already queued means the budget binds: then one credit per round trip, so
  -- every streaming chat gets its turn often (a chat waits for all others' leases between two of its own).
  if tati - now > k * Ti then k = 1 end
  tati = math.max(tati, start) + k * Ti
  tat = math.max(tat, start) + k * T
  act = math.max(act, start) + k * T
  globalDirty = true
end
-- The last credit may be used up to slack late; the chat is free one interval after that.
local lend = start + (k - 1) * interval + slack + interval
put('lh', holder)
put('lend', lend)
saveGlobal()
saveChat(lend + KEEP)
return {1, start, now, k}
`;


/**
 * KEYS: chat hash, [global hash, recent-429 zset]
 * ARGV: now|'', retryAfterMs, chat key, flood window ms, flood chats
 */
export const BACKOFF = `${CLOCK}
local now = clock(ARGV[1])
local upto = now + tonumber(ARGV[2])
local chat, global, recent = KEYS[1], KEYS[2], KEYS[3]
local st = redis.call('HMGET', chat, 'next', 'exp')
local newExp = pushOut(tonumber(st[2]) or 0, upto + KEEP)
if upto > (tonumber(st[1]) or 0) then
  if newExp then redis.call('HSET', chat, 'next', upto, 'exp', newExp) else redis.call('HSET', chat, 'next', upto) end
elseif newExp then
  redis.call('HSET', chat, 'exp', newExp)
end
if newExp then expireAt(chat, newExp, now) end
if global then
  local window = tonumber(ARGV[4])
  redis.call('ZADD', recent, now, ARGV[3])
  redis.call('ZREMRANGEBYSCORE', recent, '-inf', now - window)
  extend(recent, window * 2)
  if redis.call('ZCARD', recent) >= tonumber(ARGV[5]) then
    local g = redis.call('HMGET', global, 'blocked', 'exp')
    local gExp = pushOut(tonumber(g[2]) or 0, upto + KEEP)
    if upto > (tonumber(g[1]) or 0) then redis.call('HSET', global, 'blocked', upto) end
    if gExp then
      redis.call('HSET', global, 'exp', gExp)
      expireAt(global, gExp, now)
    end
  end
end
return upto
`;

/**
 * A final that gave up waiting leaves its chat's queue (and the queue's count).
 * KEYS: chat hash, finals zset · ARGV: waiter id
 */
export const LEAVE = `
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  local nf = tonumber(redis.call('HGET', KEYS[1], 'nf')) or 0
  if nf > 0 then redis.call('HSET', KEYS[1], 'nf', nf - 1) end
end
redis.call('HDEL', KEYS[1], 'lease:' .. ARGV[1])
return 1
`;


/**
 * The holder is done with a chat for now (its reply ended, or its final landed): the chat is free one
 * interval after now, and credits it had left in the future go back to the bot-wide budget.
 * KEYS: chat hash, [global hash] · ARGV: now|'', interval, holder, unused credits, Ti, T
 */
export const RELEASE = `${CLOCK}
local now = clock(ARGV[1])
local upto = now + tonumber(ARGV[2])
local chat, global = KEYS[1], KEYS[2]
local st = redis.call('HMGET', chat, 'next', 'exp', 'lh')
local newExp = pushOut(tonumber(st[2]) or 0, upto + KEEP)
local writes = {}
if upto > (tonumber(st[1]) or 0) then writes[#writes + 1] = 'next'; writes[#writes + 1] = upto end
if newExp then writes[#writes + 1] = 'exp'; writes[#writes + 1] = newExp end
if #writes > 0 then redis.call('HSET', chat, unpack(writes)) end
if newExp then expireAt(chat, newExp, now) end
if st[3] == ARGV[3] then
  redis.call('HDEL', chat, 'lh', 'lend')
  local unused = tonumber(ARGV[4])
  if global and unused > 0 then
    local g = redis.call('HMGET', global, 'tati', 'tat', 'act')
    local Ti, T = tonumber(ARGV[5]), tonumber(ARGV[6])
    redis.call('HSET', global,
      'tati', math.max(now, (tonumber(g[1]) or 0) - unused * Ti),
      'tat', math.max(now, (tonumber(g[2]) or 0) - unused * T),
      'act', math.max(now, (tonumber(g[3]) or 0) - unused * T))
  end
end
return upto
`;
