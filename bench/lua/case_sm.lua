-- case_sm.lua - Lua 5.4 twin of bench/programs/case_sm.st (see bench/README.md).
--   lua5.4 bench/lua/case_sm.lua N      run N cycles, print the results
--   dofile('bench/lua/case_sm.lua')     returns {name, cycle, result} without running

-- the enum Phase, by ordinal
local IDLE, STARTING, FILLING, HEATING, MIXING, DRAINING, CLEANING, WAITING, FAULT, STOPPING =
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9
local names = {[0] = 'Idle', 'Starting', 'Filling', 'Heating', 'Mixing', 'Draining', 'Cleaning',
  'Waiting', 'Fault', 'Stopping'}

local state = IDLE
local seed = 12345                     -- UDINT
local level, temp, acc = 0, 20, 0
local visits = {[0] = 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
local transitions, faults, batches = 0, 0, 0

local function cycle()
  for _ = 1, 1000 do
    seed = (seed * 1664525 + 1013904223) & 0xFFFFFFFF
    local r = (seed // 65536) % 100
    local prev = state
    if state == IDLE then
      visits[0] = visits[0] + 1
      if r < 30 then state = STARTING end
    elseif state == STARTING then
      visits[1] = visits[1] + 1
      level = 0
      if r < 90 then state = FILLING else state = FAULT end
    elseif state == FILLING then
      visits[2] = visits[2] + 1
      level = level + r % 7 + 1
      if level >= 50 then state = HEATING
      elseif r == 99 then state = FAULT end
    elseif state == HEATING then
      visits[3] = visits[3] + 1
      temp = temp + r % 5 + 1
      if temp >= 80 then state = MIXING
      elseif r >= 98 then state = FAULT end
    elseif state == MIXING then
      visits[4] = visits[4] + 1
      temp = temp - 1
      if r < 20 then state = DRAINING end
    elseif state == DRAINING then
      visits[5] = visits[5] + 1
      level = level - (r % 9 + 1)
      if level <= 0 then
        level = 0
        batches = batches + 1
        state = CLEANING
      end
    elseif state == CLEANING then
      visits[6] = visits[6] + 1
      temp = temp - (r % 6 + 1)
      if temp < 30 then
        temp = 20 + r % 10
        state = WAITING
      end
    elseif state == WAITING then
      visits[7] = visits[7] + 1
      if r < 50 then state = IDLE
      elseif r > 95 then state = STOPPING end
    elseif state == FAULT then
      visits[8] = visits[8] + 1
      if r < 10 then
        temp = 20
        level = 0
        state = IDLE
      end
    elseif state == STOPPING then
      visits[9] = visits[9] + 1
      if r < 40 then state = IDLE end
    end
    if state ~= prev then
      transitions = transitions + 1
      if state == FAULT then faults = faults + 1 end
    end
    acc = ((acc * 31 + r + 0x80000000) & 0xFFFFFFFF) - 0x80000000   -- DINT wrap
  end
end

local function result()
  return {checksum = acc, transitions = transitions, faults = faults, batches = batches,
          seed = seed, state = names[state], visits = visits}
end

local bench = {name = 'case_sm', cycle = cycle, result = result}

if arg and arg[0] == debug.getinfo(1, 'S').source:sub(2) then
  for _ = 1, tonumber(arg[1]) or 1 do cycle() end
  local r = result()
  print('checksum=' .. r.checksum)
  print('transitions=' .. r.transitions)
  print('faults=' .. r.faults)
  print('batches=' .. r.batches)
  print('seed=' .. r.seed)
  print('state=' .. r.state)
  local v = {}
  for i = 0, 9 do v[#v + 1] = tostring(r.visits[i]) end
  print('visits=[' .. table.concat(v, ', ') .. ']')
end
return bench
