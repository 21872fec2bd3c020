-- A 429: no slot in the given cells (a chat, or a platform's whole budget) before now + ARGV[1] ms.
--
-- KEYS[1..n]  cells of pace-slot.lua (hash, field `tat`)
-- ARGV[1]     the platform's retry_after in ms
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ = now + math.ceil(tonumber(ARGV[1]))
for _, key in ipairs(KEYS) do
  local tat = tonumber(redis.call('HGET', key, 'tat') or '0')
  if tat < until_ then
    redis.call('HSET', key, 'tat', until_)
    redis.call('PEXPIRE', key, until_ - now)
  end
end
return 0
