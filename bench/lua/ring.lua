-- ring.lua - Lua 5.4 twin of bench/programs/ring.st (see bench/README.md).
--   lua5.4 bench/lua/ring.lua N      run N cycles, print the results
--   dofile('bench/lua/ring.lua')     returns {name, cycle, result} without running
local function wrap32(x) return ((x + 0x80000000) & 0xFFFFFFFF) - 0x80000000 end

local buf = {}
for i = 0, 63 do buf[i] = 0 end
local head, tail, count = 0, 0, 0
local seed = 777                        -- UDINT
local pushed, popped, dropped, misses = 0, 0, 0, 0
local sum, window, peak, checksum = 0, 0, 0, 0

local function cycle()
  for step = 1, 2000 do
    seed = (seed * 1664525 + 1013904223) & 0xFFFFFFFF
    local r = (seed // 65536) % 100
    if r < 52 then
      if count < 64 then
        buf[tail] = r * 1000 + step
        tail = tail + 1
        if tail == 64 then tail = 0 end
        count = count + 1
        pushed = pushed + 1
      else
        dropped = dropped + 1
      end
    else
      if count > 0 then
        local v = buf[head]
        head = (head + 1) % 64
        count = count - 1
        popped = popped + 1
        sum = sum + v
      else
        misses = misses + 1
      end
    end
    if step % 100 == 0 then
      window, peak = 0, 0
      local p = head
      for _ = 1, count do
        window = window + buf[p]
        if buf[p] > peak then peak = buf[p] end
        p = (p + 1) % 64
      end
    end
  end
  sum = wrap32(sum)
  checksum = wrap32(checksum * 31 + sum + window + peak + count)
end

local function result()
  return {checksum = checksum, pushed = pushed, popped = popped, dropped = dropped, misses = misses,
          count = count, head = head, tail = tail, window = window, peak = peak, seed = seed}
end

local bench = {name = 'ring', cycle = cycle, result = result}

if arg and arg[0] == debug.getinfo(1, 'S').source:sub(2) then
  for _ = 1, tonumber(arg[1]) or 1 do cycle() end
  local r = result()
  for _, k in ipairs({'checksum', 'pushed', 'popped', 'dropped', 'misses', 'count', 'head', 'tail',
                      'window', 'peak', 'seed'}) do
    print(k .. '=' .. r[k])
  end
end
return bench
