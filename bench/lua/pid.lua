-- pid.lua - Lua 5.4 twin of bench/programs/pid.st (see bench/README.md).
--   lua5.4 bench/lua/pid.lua N      run N cycles, print the results
--   dofile('bench/lua/pid.lua')     returns {name, cycle, result} without running
-- Every floating-point operation is done in the same order as in the ST source, so the
-- LREAL results are bit-identical (printed with %.17g).

-- LREAL_TO_DINT: round half away from zero (the values here stay far inside DINT)
local function round(x)
  if x >= 0 then
    local r = math.floor(x)
    if x - r >= 0.5 then r = r + 1 end
    return math.tointeger(r)
  else
    local r = math.floor(-x)
    if -x - r >= 0.5 then r = r + 1 end
    return -math.tointeger(r)
  end
end

-- FUNCTION_BLOCK Pid as a table; call() is the FB body
local Pid = {}
Pid.__index = Pid
local function newPid(init)
  local p = setmetatable({sp = 0.0, pv = 0.0, kp = 1.0, ki = 0.0, kd = 0.0, ts = 0.015625,
    outMin = -100.0, outMax = 100.0, out = 0.0, saturated = false,
    err = 0.0, prevErr = 0.0, deriv = 0.0, integ = 0.0, newInteg = 0.0, raw = 0.0}, Pid)
  for k, v in pairs(init) do p[k] = v end
  return p
end
function Pid:call(sp, pv)
  self.sp, self.pv = sp, pv
  local err = self.sp - self.pv
  self.err = err
  self.deriv = (err - self.prevErr) / self.ts
  self.prevErr = err
  self.newInteg = self.integ + self.ki * err * self.ts
  local raw = self.kp * err + self.newInteg + self.kd * self.deriv
  self.raw = raw
  if raw > self.outMax then
    self.out = self.outMax
    self.saturated = true
    if err < 0.0 then self.integ = self.newInteg end
  elseif raw < self.outMin then
    self.out = self.outMin
    self.saturated = true
    if err > 0.0 then self.integ = self.newInteg end
  else
    self.out = raw
    self.saturated = false
    self.integ = self.newInteg
  end
end

local ctrl = newPid{kp = 2.5, ki = 0.75, kd = 0.125, ts = 0.015625, outMin = -100.0, outMax = 100.0}
local k = 0
local sp, y, load, sumY, sumAbsErr = 0.0, 0.0, 0.0, 0.0, 0.0
local saturatedSteps, checksum = 0, 0

local function cycle()
  for _ = 1, 1000 do
    if k % 500 == 0 then
      sp = ((k // 500) % 4) * 25.0
    end
    if k % 700 == 350 then
      load = -12.5
    elseif k % 700 == 0 then
      load = 0.0
    end
    ctrl:call(sp, y)
    if ctrl.saturated then saturatedSteps = saturatedSteps + 1 end
    y = y + (1.5 * ctrl.out + load - y) * 0.03125
    sumY = sumY + y
    sumAbsErr = sumAbsErr + math.abs(sp - y)
    k = k + 1
  end
  checksum = round(y * 1000.0)
end

local function result()
  return {checksum = checksum, y = y, sumY = sumY, sumAbsErr = sumAbsErr,
          saturatedSteps = saturatedSteps}
end

local bench = {name = 'pid', cycle = cycle, result = result}

if arg and arg[0] == debug.getinfo(1, 'S').source:sub(2) then
  for _ = 1, tonumber(arg[1]) or 1 do cycle() end
  local r = result()
  print('checksum=' .. r.checksum)
  print(string.format('y=%.17g', r.y))
  print(string.format('sumY=%.17g', r.sumY))
  print(string.format('sumAbsErr=%.17g', r.sumAbsErr))
  print('saturatedSteps=' .. r.saturatedSteps)
end
return bench
