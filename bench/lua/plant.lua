-- plant.lua - Lua 5.4 twin of bench/programs/plant.st (see bench/README.md).
--   lua5.4 bench/lua/plant.lua N      run N cycles, print the results
--   dofile('bench/lua/plant.lua')     returns {name, cycle, result} without running
-- Mirrors the ST statement by statement. Function blocks are tables; the standard timers
-- (TON, TP) follow IEC 61131-3 on the implicit task's clock: cycle k (0-based) starts at
-- k * 10 ms. LREAL operations are evaluated in the ST order, so the results match exactly.

local function wrap32(x) return ((x + 0x80000000) & 0xFFFFFFFF) - 0x80000000 end

-- REAL -> integer conversion: round half away from zero
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
local function limit(mn, x, mx) if x < mn then return mn elseif x > mx then return mx end return x end

-- virtual clock, ms
local now = 0

-- ---- standard function blocks ----
local function rtrig(fb, clk) fb.Q = clk and not fb.M; fb.M = clk end
local function ton(fb, IN, PT)
  if IN then
    if not fb.prev then fb.start = now end
    local et = now - fb.start
    if et >= PT then fb.Q = true; fb.ET = PT else fb.Q = false; fb.ET = et end
  else
    fb.Q = false; fb.ET = 0
  end
  fb.prev = IN
end
local function tp(fb, IN, PT)
  if not fb.Q and IN and not fb.prev and fb.ET == 0 then fb.Q = true; fb.start = now end
  if fb.Q then
    fb.ET = now - fb.start
    if fb.ET >= PT then fb.Q = false; fb.ET = PT end
  end
  if not fb.Q and not IN then fb.ET = 0 end
  fb.prev = IN
end
local function ctu(fb, CU, R, PV)
  if R then fb.CV = 0
  elseif CU and not fb.prev and fb.CV < 32767 then fb.CV = fb.CV + 1 end
  fb.prev = CU
  fb.Q = fb.CV >= PV
end
local function newTimer() return {Q = false, ET = 0, prev = false, start = 0} end
local function newTrig() return {Q = false, M = false} end

-- ---- user functions and function blocks ----
local function scaleAnalog(raw, lo, hi)
  local r = limit(0, raw, 27648)
  return lo + (hi - lo) * r / 27648.0
end

local function pidReset(p) p.integ = 0.0; p.prevErr = 0.0; p.out = 0.0; p.first = true end
local function pidCall(p, sp, pv)
  local err = sp - pv
  p.err = err
  if p.first then p.prevErr = err; p.first = false end
  p.deriv = (err - p.prevErr) / p.ts
  p.prevErr = err
  p.newInteg = p.integ + p.ki * err * p.ts
  local raw = p.kp * err + p.newInteg + p.kd * p.deriv
  p.raw = raw
  if raw > p.outMax then
    p.out = p.outMax; p.saturated = true
    if err < 0.0 then p.integ = p.newInteg end
  elseif raw < p.outMin then
    p.out = p.outMin; p.saturated = true
    if err > 0.0 then p.integ = p.newInteg end
  else
    p.out = raw; p.saturated = false; p.integ = p.newInteg
  end
end

local function motorCall(m, cmd, feedback)
  m.out = cmd and not m.fault
  rtrig(m.startEdge, m.out)
  if m.startEdge.Q then m.starts = m.starts + 1 end
  ton(m.discrepancy, m.out ~= feedback, m.timeout)
  if m.discrepancy.Q then m.fault = true; m.out = false end
  m.running = m.out and feedback
end

local function almCall(a, condition, ack)
  rtrig(a.edge, condition)
  a.raised = a.edge.Q
  if a.raised then a.active = true; a.count = a.count + 1 end
  if ack and not condition then a.active = false end
end

-- ---- program state ----
local IDLE, STARTING, RUNNING, STOPPING, FAULTED = 0, 1, 2, 3, 4        -- LineState
local WAITING, WORKING, RELEASING, JAMMED = 0, 1, 2, 3                  -- StationState
local stateNames = {[0] = 'IDLE', 'START', 'RUN', 'STOP', 'FAULT'}             -- as in the report
local enumNames = {[0] = 'Idle', 'Starting', 'Running', 'Stopping', 'Faulted'}  -- as ST prints them

local n, phase = 0, 0
local pos = {-1, -1, -1, -1, -1, -1, -1, -1}
local spawnIn, fbDelay, tripped = 10, 0, false
local tankLevel, draw = 50.0, 0.0
local startPb, stopPb, eStopOk, ackAlarms = false, false, true, false
local fillerSensor, capperSensor, exitSensor, motorFb = false, false, false, false
local levelRaw = 0
local conveyorOut, fillValve, capperOut, gateOpen, runLamp, horn = false, false, false, false, false, false
local inletValve = 0
local state, filler = IDLE, WAITING
local stations = {}
for i = 1, 3 do stations[i] = {count = 0, rejects = 0, busyCycles = 0, state = WAITING} end
local motorCmd, lineMoving, anyAlarm, hornLatch = false, false, false, false
local fillTime, batchSize = 200, 4
local motor = {out = false, running = false, fault = false, starts = 0, timeout = 500,
               discrepancy = newTimer(), startEdge = newTrig()}
local alm = {}
for i = 1, 5 do alm[i] = {active = false, raised = false, count = 0, edge = newTrig()} end
local startEdge, exitEdge, capEdge = newTrig(), newTrig(), newTrig()
local fillTimer, releaseTimer, stopTimer, capPulse = newTimer(), newTimer(), newTimer(), newTimer()
local fillCounter = {Q = false, CV = 0, prev = false}
local starvedTimer, starvedCycles = newTimer(), 0
local trackQ = {[0] = 0, 0, 0, 0, 0, 0, 0, 0}
local qHead, qCount, nextBottle, lastOut, untracked = 0, 0, 0, 0, 0
local setpoint, spRamp, levelPct, levelFilt, inletCmd = 60.0, 50.0, 0.0, 50.0, 0.0
local highCond, lowCond = false, false
local pid = {kp = 4.0, ki = 0.5, kd = 0.0, ts = 0.01, outMin = 0.0, outMax = 100.0,
             out = 0.0, err = 0.0, saturated = false, integ = 0.0, newInteg = 0.0, prevErr = 0.0,
             deriv = 0.0, raw = 0.0, first = true}
local history = {[0] = 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
local histIdx, bottlesPerMin, totalDone, maxCount, minCount, activeAlarms = 0, 0, 0, 0, 0, 0
local runTicks, idleTicks, faultTicks = 0, 0, 0
local util = {0.0, 0.0, 0.0}
local yieldPct = 0.0
local alarmNames = {'E-stop', 'Motor', 'Jam', 'High', 'Low'}
local alarmText = ''
local stateName, report = '', ''
local stateCode, bottlesOut, filled, capped, batches, trips, levelMilli, checksum = 0, 0, 0, 0, 0, 0, 0, 0

local function cycle()
  now = n * 10
  n = n + 1
  phase = n % 3000

  -- ==================== simulated world ====================
  startPb = phase == 20 or phase == 1900
  stopPb = phase == 2600
  ackAlarms = (phase >= 1800 and phase < 1805) or (phase >= 2900 and phase < 2905)
  eStopOk = not (phase >= 2800 and phase < 2810)
  if phase == 1500 then tripped = true end
  if ackAlarms then tripped = false end
  if conveyorOut and not tripped then
    if fbDelay < 5 then fbDelay = fbDelay + 1 end
  else
    fbDelay = 0
  end
  motorFb = fbDelay >= 5
  if motorFb then
    for slot = 1, 8 do
      local p = pos[slot]
      if p >= 0 then
        if p <= 300 and p + 10 >= 300 and not gateOpen then p = 300 else p = p + 10 end
        if p > 1000 then p = -1 end
        pos[slot] = p
      end
    end
    spawnIn = spawnIn - 1
    if spawnIn <= 0 then
      spawnIn = 45
      for slot = 1, 8 do
        if pos[slot] < 0 then pos[slot] = 0; break end
      end
    end
  end
  fillerSensor, capperSensor, exitSensor = false, false, false
  for slot = 1, 8 do
    local p = pos[slot]
    if p >= 295 and p <= 305 then fillerSensor = true end
    if p >= 600 and p < 640 then capperSensor = true end
    if p >= 900 and p < 930 then exitSensor = true end
  end
  if fillValve then draw = 0.15 else draw = 0.01 end
  tankLevel = limit(0.0, tankLevel + inletCmd * 0.004 - draw, 100.0)
  levelRaw = round(tankLevel * 276.48)

  -- ==================== line control ====================
  if ackAlarms then
    motor.fault = false                                   -- motor.Reset()
    if filler == JAMMED and not fillerSensor then filler = WAITING end
    hornLatch = false
  end
  almCall(alm[1], not eStopOk, ackAlarms)
  almCall(alm[2], motor.fault, ackAlarms)
  almCall(alm[3], filler == JAMMED, ackAlarms)
  almCall(alm[4], highCond, ackAlarms)
  almCall(alm[5], lowCond, ackAlarms)
  anyAlarm = false
  for i = 1, 3 do anyAlarm = anyAlarm or alm[i].active end
  for i = 1, 5 do
    if alm[i].raised then hornLatch = true end
  end
  if alm[2].raised then trips = trips + 1 end

  rtrig(startEdge, startPb)
  if state == IDLE then
    motorCmd = false
    if startEdge.Q and not anyAlarm then state = STARTING end
  elseif state == STARTING then
    motorCmd = true
    if anyAlarm then state = FAULTED elseif motor.running then state = RUNNING end
  elseif state == RUNNING then
    motorCmd = true
    if anyAlarm then state = FAULTED elseif stopPb then state = STOPPING end
  elseif state == STOPPING then
    motorCmd = true
    if anyAlarm then state = FAULTED
    elseif filler == WAITING or stopTimer.Q then state = IDLE end
  elseif state == FAULTED then
    motorCmd = false
    if not anyAlarm then state = IDLE end
  end
  if not eStopOk then motorCmd = false end
  motorCall(motor, motorCmd, motorFb)
  conveyorOut = motor.out
  lineMoving = motor.running and (state == RUNNING or state == STOPPING)
  ton(stopTimer, state == STOPPING, 2000)

  if filler == WAITING then
    if fillerSensor and lineMoving and not lowCond then filler = WORKING end
  elseif filler == WORKING then
    if not fillerSensor then
      stations[1].rejects = stations[1].rejects + 1
      filler = WAITING
    elseif fillTimer.Q then
      filler = RELEASING
    end
  elseif filler == RELEASING then
    if not fillerSensor then
      stations[1].count = stations[1].count + 1
      nextBottle = nextBottle + 1
      if qCount < 8 then
        trackQ[(qHead + qCount) % 8] = nextBottle
        qCount = qCount + 1
      end
      filler = WAITING
    elseif releaseTimer.Q then
      filler = JAMMED
    end
  end
  ton(fillTimer, filler == WORKING and state ~= FAULTED, fillTime)
  ton(releaseTimer, filler == RELEASING and lineMoving, 1000)
  fillValve = filler == WORKING and not fillTimer.Q and state ~= FAULTED and eStopOk
  gateOpen = filler == RELEASING
  ton(starvedTimer, state == RUNNING and filler == WAITING, 300)
  if starvedTimer.Q then starvedCycles = starvedCycles + 1 end
  ctu(fillCounter, filler == RELEASING, fillCounter.Q, batchSize)
  if fillCounter.Q then batches = batches + 1 end

  rtrig(capEdge, capperSensor and lineMoving)
  tp(capPulse, capEdge.Q, 150)
  capperOut = capPulse.Q
  if capEdge.Q then stations[2].count = stations[2].count + 1 end
  rtrig(exitEdge, exitSensor)
  if exitEdge.Q then
    stations[3].count = stations[3].count + 1
    if qCount > 0 then
      lastOut = trackQ[qHead]
      qHead = (qHead + 1) % 8
      qCount = qCount - 1
    else
      untracked = untracked + 1
    end
  end

  stations[1].state = filler
  stations[2].state = capPulse.Q and WORKING or WAITING
  stations[3].state = exitSensor and WORKING or WAITING
  for i = 1, 3 do
    local s = stations[i]
    if s.state ~= WAITING then s.busyCycles = s.busyCycles + 1 end
  end
  runLamp = state == RUNNING
  horn = hornLatch

  -- ==================== tank control ====================
  levelPct = scaleAnalog(levelRaw, 0.0, 100.0)
  levelFilt = levelFilt + 0.2 * (levelPct - levelFilt)
  if phase == 1000 then setpoint = 70.0 elseif phase == 2000 then setpoint = 60.0 end
  if spRamp < setpoint then
    spRamp = math.min(spRamp + 0.05, setpoint)
  elseif spRamp > setpoint then
    spRamp = math.max(spRamp - 0.05, setpoint)
  end
  pidCall(pid, spRamp, levelFilt)
  inletCmd = limit(0.0, pid.out + (fillValve and 12.0 or 0.0), 100.0)
  if not eStopOk then
    inletCmd = 0.0
    pidReset(pid)
  end
  inletValve = round(inletCmd * 276.48)
  highCond = levelFilt > 90.0 or (highCond and levelFilt > 85.0)
  lowCond = levelFilt < 10.0 or (lowCond and levelFilt < 15.0)

  -- ==================== supervisor, every 10th cycle ====================
  stateCode = state
  bottlesOut = stations[3].count
  if n % 10 == 0 then
    bottlesPerMin = (bottlesOut - history[histIdx]) * 60
    history[histIdx] = bottlesOut
    histIdx = (histIdx + 1) % 10
    totalDone = 0
    maxCount = stations[1].count
    minCount = stations[1].count
    for i = 1, 3 do
      local c = stations[i].count
      totalDone = totalDone + c
      if c > maxCount then maxCount = c end
      if c < minCount then minCount = c end
    end
    if state == RUNNING or state == STOPPING then runTicks = runTicks + 1
    elseif state == FAULTED then faultTicks = faultTicks + 1
    else idleTicks = idleTicks + 1 end
    for i = 1, 3 do
      util[i] = stations[i].busyCycles * 100.0 / n
    end
    local s1 = stations[1]
    if s1.count + s1.rejects > 0 then
      yieldPct = s1.count * 100.0 / (s1.count + s1.rejects)
    else
      yieldPct = 100.0
    end
    activeAlarms = 0
    alarmText = ''
    for i = 1, 5 do
      if alm[i].active then
        activeAlarms = activeAlarms + 1
        if #alarmText > 0 then alarmText = alarmText .. ',' end
        alarmText = alarmText .. alarmNames[i]
      end
    end
    stateName = stateNames[state]
    report = stateName .. ' out=' .. bottlesOut .. ' bpm=' .. bottlesPerMin .. ' lvl='
      .. round(levelFilt) .. ' alarms=' .. activeAlarms
  end

  -- ==================== results ====================
  filled = stations[1].count
  capped = stations[2].count
  levelMilli = round(levelFilt * 1000.0)
  checksum = wrap32(checksum * 31 + stateCode + bottlesOut * 7 + filled * 3 + levelMilli + inletValve
    + lastOut)
end

-- keys are the ST variable names (PlantBench.<key>)
local function result()
  return {checksum = checksum, bottlesOut = bottlesOut, filled = filled, capped = capped,
          batches = batches, trips = trips, levelMilli = levelMilli, report = report,
          state = enumNames[state], levelFilt = levelFilt, tankLevel = tankLevel,
          ['stations[1].rejects'] = stations[1].rejects, ['motor.starts'] = motor.starts,
          lastOut = lastOut, starvedCycles = starvedCycles, runTicks = runTicks,
          alarmText = alarmText}
end

local bench = {name = 'plant', cycle = cycle, result = result}

if arg and arg[0] == debug.getinfo(1, 'S').source:sub(2) then
  for _ = 1, tonumber(arg[1]) or 1 do cycle() end
  local r = result()
  print('checksum=' .. r.checksum)
  for _, k in ipairs{'bottlesOut', 'filled', 'capped', 'batches', 'trips', 'levelMilli', 'lastOut',
                     'starvedCycles', 'runTicks'} do
    print(k .. '=' .. r[k])
  end
  print("alarmText='" .. r.alarmText .. "'")
  print("report='" .. r.report .. "'")
  print('state=' .. r.state)
  print(string.format('levelFilt=%.17g', r.levelFilt))
  print(string.format('tankLevel=%.17g', r.tankLevel))
  print('stations[1].rejects=' .. r['stations[1].rejects'])
  print('motor.starts=' .. r['motor.starts'])
end
return bench
