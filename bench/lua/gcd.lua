-- gcd.lua - Lua 5.4 twin of bench/programs/gcd.st (see bench/README.md).
--   lua5.4 bench/lua/gcd.lua N      run N cycles, print the results
--   dofile('bench/lua/gcd.lua')     returns {name, cycle, result} without running
local fmod = math.fmod

local function wrap32(x) return ((x + 0x80000000) & 0xFFFFFFFF) - 0x80000000 end

local sa, sb, checksum, coprime, negative = 0, 0, 0, 0, 0

-- Euclid with ST's MOD (truncating, sign of the dividend) = math.fmod on integers
local function gcd(a, b)
  local x, y = a, b
  while y ~= 0 do
    local tmp = fmod(x, y)
    x = y
    y = tmp
  end
  return x
end

local function cycle()
  sa = (sa + 7717) % 100003           -- operands are >= 0 here, so % = MOD
  sb = (sb + 3119) % 65521
  local cs = checksum
  for i = 1, 500 do
    local a = (i * 7919 + sa) % 100003 - 50000
    local b = (i * 4391 + sb) % 65521 + 1
    local g = gcd(a, b)
    cs = cs + g * i
    if g == 1 or g == -1 then coprime = coprime + 1 end
    if g < 0 then negative = negative + 1 end
  end
  checksum = wrap32(cs)
end

local function result()
  return {checksum = checksum, coprime = coprime, negative = negative}
end

local bench = {name = 'gcd', cycle = cycle, result = result}

if arg and arg[0] == debug.getinfo(1, 'S').source:sub(2) then
  for _ = 1, tonumber(arg[1]) or 1 do cycle() end
  local r = result()
  print('checksum=' .. r.checksum)
  print('coprime=' .. r.coprime)
  print('negative=' .. r.negative)
end
return bench
