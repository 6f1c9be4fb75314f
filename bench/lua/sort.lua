-- sort.lua - Lua 5.4 twin of bench/programs/sort.st (see bench/README.md).
--   lua5.4 bench/lua/sort.lua N      run N cycles, print the results
--   dofile('bench/lua/sort.lua')     returns {name, cycle, result} without running
local function wrap32(x) return ((x + 0x80000000) & 0xFFFFFFFF) - 0x80000000 end
-- LREAL_TO_DINT rounds half away from zero
local function round(x)
  if x >= 0 then return math.floor(x + 0.5) end
  return -math.floor(-x + 0.5)
end

local a = {}
for i = 0, 199 do a[i] = 0 end
local seed = 4242                       -- UDINT
local swaps, checksum = 0, 0
local x = 0.0
local lo, mid, hi = 0, 0, 0

local function cycle()
  for i = 0, 199 do
    seed = (seed * 1664525 + 1013904223) & 0xFFFFFFFF
    a[i] = (seed // 65536) % 20000 - 10000
  end
  local s = swaps
  for i = 0, 198 do
    for j = 0, 198 - i do
      if a[j] > a[j + 1] then
        local t = a[j]
        a[j] = a[j + 1]
        a[j + 1] = t
        s = s + 1
      end
    end
  end
  swaps = wrap32(s)
  for k = 0, 199 do x = x * 0.75 + a[k] * 0.125 end
  lo, mid, hi = a[0], a[100], a[199]
  checksum = wrap32(checksum * 31 + lo + mid * 7 + hi * 3 + round(x))
end

local function result()
  return {checksum = checksum, swaps = swaps, seed = seed, x = x, lo = lo, mid = mid, hi = hi}
end

local bench = {name = 'sort', cycle = cycle, result = result}

if arg and arg[0] == debug.getinfo(1, 'S').source:sub(2) then
  for _ = 1, tonumber(arg[1]) or 1 do cycle() end
  local r = result()
  for _, k in ipairs({'checksum', 'swaps', 'seed', 'x', 'lo', 'mid', 'hi'}) do
    local v = r[k]
    if math.type(v) == 'float' then v = string.format('%.17g', v) end
    print(k .. '=' .. v)
  end
end
return bench
