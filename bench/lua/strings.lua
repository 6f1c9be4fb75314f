-- strings.lua - Lua 5.4 twin of bench/programs/strings.st (see bench/README.md).
--   lua5.4 bench/lua/strings.lua N      run N cycles, print the results
--   dofile('bench/lua/strings.lua')     returns {name, cycle, result} without running
-- STRING[80] assignments keep the first 80 bytes; ST positions are 1-based like Lua's.
local find, sub = string.find, string.sub

local function wrap32(x) return ((x + 0x80000000) & 0xFFFFFFFF) - 0x80000000 end

local buf, s, num, part = '', '', '', ''
local n, k, finds, full, checksum = 0, 1, 0, 0, 0

local function cycle()
  local cs = checksum
  n = n + 1
  buf = sub(tostring(n) .. buf, 1, 80)               -- CONCAT(DINT_TO_STRING(n), buf)
  for _ = 1, 10 do
    k = (k * 21 + 7) % 1000                          -- k >= 0, so % = MOD
    num = tostring(k - 500)                          -- INT_TO_STRING
    s = '<' .. num .. '>'
    buf = buf .. s .. num
    if #buf > 80 then buf = sub(buf, 1, 80) end      -- STRING[80] truncation
    if #buf == 80 then full = full + 1 end
    if #buf >= 76 then buf = sub(buf, #buf - 23) end -- RIGHT(buf, 24)
    local p = find(buf, '-', 1, true) or 0           -- FIND
    if p > 0 then
      buf = sub(buf, 1, p - 1) .. 'm' .. sub(buf, p + 1)   -- REPLACE(buf, 'm', 1, p)
      finds = finds + 1
    end
    local at = #buf // 2
    part = sub(buf, at, at + 1)                      -- MID(buf, 2, LEN(buf) / 2)
    part = sub(buf, 1, 2) .. part                    -- CONCAT(LEFT(buf, 2), part)
    local q = find(part, '<', 1, true) or 0
    cs = cs + #buf * 7 + p * 3 + q + #part
  end
  checksum = wrap32(cs)
end

local function result()
  return {checksum = checksum, finds = finds, full = full, buf = buf, part = part}
end

local bench = {name = 'strings', cycle = cycle, result = result}

if arg and arg[0] == debug.getinfo(1, 'S').source:sub(2) then
  for _ = 1, tonumber(arg[1]) or 1 do cycle() end
  local r = result()
  print('checksum=' .. r.checksum)
  print('finds=' .. r.finds)
  print('full=' .. r.full)
  print("buf='" .. r.buf .. "'")
  print("part='" .. r.part .. "'")
end
return bench
