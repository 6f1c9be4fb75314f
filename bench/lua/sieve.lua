-- sieve.lua - Lua 5.4 twin of bench/programs/sieve.st (see bench/README.md).
--   lua5.4 bench/lua/sieve.lua N      run N cycles, print the results
--   dofile('bench/lua/sieve.lua')     returns {name, cycle, result} without running
local function wrap32(x) return ((x + 0x80000000) & 0xFFFFFFFF) - 0x80000000 end

local flags = {}
for i = 0, 8191 do flags[i] = false end
local n, count, total, checksum = 0, 0, 0, 0

local function cycle()
  n = n + 1
  for i = 0, 8191 do flags[i] = true end
  flags[0] = false
  flags[1] = false
  local i = 2
  while i * i <= 8191 do
    if flags[i] then
      for j = i * i, 8191, i do flags[j] = false end
    end
    i = i + 1
  end
  local c, cs = 0, checksum
  for p = 0, 8191 do
    if flags[p] then
      c = c + 1
      cs = cs + p * n
    end
  end
  count = c
  checksum = wrap32(cs)
  total = wrap32(total + c)
end

local function result()
  return {checksum = checksum, count = count, total = total}
end

local bench = {name = 'sieve', cycle = cycle, result = result}

if arg and arg[0] == debug.getinfo(1, 'S').source:sub(2) then
  for _ = 1, tonumber(arg[1]) or 1 do cycle() end
  local r = result()
  print('checksum=' .. r.checksum)
  print('count=' .. r.count)
  print('total=' .. r.total)
end
return bench
