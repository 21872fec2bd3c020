-- One request slot: a chat's pace and its platform's bot-wide budget, both as GCRA cells
-- (a theoretical arrival time, `tat`, per cell), decided on Redis's own clock.
--
-- KEYS[1]  chat cell (hash, field `tat`): the chat's next free moment, in ms
-- KEYS[2]  budget cell (hash, field `tat`): the platform's bot-wide schedule, in ms
-- ARGV[1]  chat interval in ms: slots in the chat at least this far apart (0: not paced)
-- ARGV[2]  budget emission interval T in ms (0: no bot-wide budget)
-- ARGV[3]  how far ahead of now the budget's schedule may run for this request, in ms:
--          finals get the whole burst, intermediates that minus the reserve kept for finals
--
-- Returns {0, now, 0, ahead} when the slot is taken (both cells advanced; `ahead`: ms the budget's schedule now
-- runs ahead of `now`, so the caller need not ask before it could be granted), else {ms to wait before asking
-- again, now, cause}: cause 1 when the chat holds the request back, 2 when the budget does.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = tonumber(ARGV[1])
local T = tonumber(ARGV[2])
local tolerance = tonumber(ARGV[3])

local chat = tonumber(redis.call('HGET', KEYS[1], 'tat') or '0')
local wait = chat - now
local cause = 1
local budget = now
if T > 0 then
  budget = math.max(tonumber(redis.call('HGET', KEYS[2], 'tat') or '0'), now)
  if budget - tolerance - now > wait then
    wait = budget - tolerance - now
    cause = 2
  end
end
if wait > 0 then return {math.ceil(wait), now, cause} end

if interval > 0 then
  redis.call('HSET', KEYS[1], 'tat', now + interval)
  redis.call('PEXPIRE', KEYS[1], math.ceil(interval))
end
if T > 0 then
  redis.call('HSET', KEYS[2], 'tat', budget + T)
  redis.call('PEXPIRE', KEYS[2], math.ceil(budget + T - now))
  return {0, now, 0, math.floor(budget + T - now)}
end
return {0, now, 0, 0}
