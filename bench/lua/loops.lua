-- loops.lua - Lua 5.4 twin of bench/programs/loops.st (see bench/README.md).
--   lua5.4 bench/lua/loops.lua N      run N cycles, print the results
--   dofile('bench/lua/loops.lua')     returns {name, cycle, result} without running
local fmod = math.fmod

-- DINT wrap-around: reduce to a signed 32-bit value
local function wrap32(x) return ((x + 0x80000000) & 0xFFFFFFFF) - 0x80000000 end

local n, sum, lsum, restarts = 0, 0, 0, 0

local function cycle()
  n = n + 1
  local s, ls = sum, lsum
  for i = 1, 100 do
    for j = 1, 80 do
      local tmp = (i - 50) * j + n
      -- + and * wrap modulo 2^64 in Lua, which keeps the low 32 bits exact; wrapped below
      s = s + tmp * tmp
      -- ST / and MOD truncate toward zero: fmod has the C semantics
      ls = ls + (tmp - fmod(tmp, 7)) // 7 - fmod(tmp, 5)
    end
  end
  s = wrap32(s)
  local k, m = n, 0
  while m < 2000 do
    if k % 2 == 0 then
      k = k // 2                      -- exact, so floor = truncation
    else
      k = wrap32(3 * k + 1)
    end
    if k == 1 then
      restarts = restarts + 1
      k = n + m
    end
    s = s ~ k
    m = m + 1
  end
  sum, lsum = s, ls
end

local function result()
  return {checksum = sum, lsum = lsum, restarts = restarts}
end

local bench = {name = 'loops', cycle = cycle, result = result}

if arg and arg[0] == debug.getinfo(1, 'S').source:sub(2) then
  for _ = 1, tonumber(arg[1]) or 1 do cycle() end
  local r = result()
  print('checksum=' .. r.checksum)
  print('lsum=' .. r.lsum)
  print('restarts=' .. r.restarts)
end
return bench
