-- model.lua - a Lua re-implementation of the bottling-line example, used to
-- predict what `scanback run examples/plant/*.st --cycles 500 --inputs
-- examples/plant/stimulus.csv --print-state` should end with.
--
--   lua5.4 examples/plant/model.lua [cycles] [stimulus.csv] [--trace]
--
-- It mirrors the ST code statement by statement, schedules the tasks as
-- docs/language.md describes (Fast every 10 ms with priority 1, Slow every
-- 100 ms with priority 5, global cycle numbers across both), applies the
-- stimulus rows at the start of their cycle, and rounds every REAL operation
-- to IEEE single precision so REAL results should match the VM bit for bit.
-- Timers follow the IEC 61131-3 definitions of TON and TP on the task's
-- virtual clock (the start time of the current cycle).

local cycles = tonumber(arg and arg[1]) or 500
local stimPath = (arg and arg[2] and arg[2] ~= '--trace' and arg[2])
  or ((arg and arg[0] or ''):match('^(.*)/[^/]*$') or '.') .. '/stimulus.csv'
local trace = false
for _, a in ipairs(arg or {}) do if a == '--trace' then trace = true end end

---------------------------------------------------------------------------
-- REAL (float32) arithmetic
local spack, sunpack = string.pack, string.unpack
local function f32(x) return (sunpack('<f', spack('<f', x))) end
local function round(x)              -- REAL_TO_INT: half away from zero
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
local function limit(mn, x, mx) if x < mn then return mn elseif x > mx then return mx else return x end end

---------------------------------------------------------------------------
-- standard function blocks; now = start time of the current cycle in ms
local now = 0
local function R_TRIG() return {Q = false, M = false} end
local function rtrig(fb, clk) fb.Q = clk and not fb.M; fb.M = clk end
local function TON() return {Q = false, ET = 0, prev = false, start = 0} end
local function ton(fb, IN, PT)
  if IN then
    if not fb.prev then fb.start = now end
    fb.ET = now - fb.start
    if fb.ET >= PT then fb.Q = true; fb.ET = PT else fb.Q = false end
  else
    fb.Q = false; fb.ET = 0
  end
  fb.prev = IN
end
local function TP() return {Q = false, ET = 0, prev = false, start = 0} end
local function tp(fb, IN, PT)
  if not fb.Q and IN and not fb.prev and fb.ET == 0 then fb.Q = true; fb.start = now end
  if fb.Q then
    fb.ET = now - fb.start
    if fb.ET >= PT then fb.Q = false; fb.ET = PT end
  end
  if not fb.Q and not IN then fb.ET = 0 end
  fb.prev = IN
end
local function CTU() return {Q = false, CV = 0, prev = false} end
local function ctu(fb, CU, R, PV)
  if R then fb.CV = 0
  elseif CU and not fb.prev and fb.CV < 32767 then fb.CV = fb.CV + 1 end
  fb.prev = CU
  fb.Q = fb.CV >= PV
end

---------------------------------------------------------------------------
-- types.st
local Idle, Starting, Running, Stopping, Faulted = 'Idle', 'Starting', 'Running', 'Stopping', 'Faulted'
local Waiting, Working, Releasing, Jammed = 'Waiting', 'Working', 'Releasing', 'Jammed'

-- process image (only the bits and words the example uses)
local IX = {}            -- ['0.0'] = bool
local IW = {[2] = 0}
local QX, QW = {}, {[1] = 0}
local function ix(a) return IX[a] == true end

---------------------------------------------------------------------------
-- fbs.st
local function ScaleAnalog(raw, lo, hi)
  local r = limit(0, raw, 27648)
  return f32(lo + f32(f32(f32(hi - lo) * r) / f32(27648.0)))
end
local function TenthsToText(ticks)
  local q = ticks // 10; if ticks < 0 and ticks % 10 ~= 0 then q = q + 1 end
  return tostring(q) .. '.' .. tostring(math.fmod(ticks, 10)) .. 's'
end

local function PidCtrl(init)
  local p = {sp = 0.0, pv = 0.0, kp = 1.0, ki = 0.0, kd = 0.0, ts = f32(0.01), outMin = 0.0, outMax = 100.0,
             manual = false, manualOut = 0.0, out = 0.0, err = 0.0, saturated = false,
             integ = 0.0, newInteg = 0.0, prevErr = 0.0, deriv = 0.0, raw = 0.0, first = true}
  for k, v in pairs(init) do p[k] = v end
  return p
end
local function pidReset(p) p.integ = 0.0; p.prevErr = 0.0; p.out = 0.0; p.first = true end
local function pidCall(p)
  p.err = f32(p.sp - p.pv)
  if p.manual then
    p.out = limit(p.outMin, p.manualOut, p.outMax)
    p.integ = f32(p.out - f32(p.kp * p.err))
    p.prevErr = p.err
    p.saturated = false
    return
  end
  if p.first then p.prevErr = p.err; p.first = false end
  p.deriv = f32(f32(p.err - p.prevErr) / p.ts)
  p.prevErr = p.err
  p.newInteg = f32(p.integ + f32(f32(p.ki * p.err) * p.ts))
  p.raw = f32(f32(f32(p.kp * p.err) + p.newInteg) + f32(p.kd * p.deriv))
  if p.raw > p.outMax then
    p.out = p.outMax; p.saturated = true
    if p.err < 0.0 then p.integ = p.newInteg end
  elseif p.raw < p.outMin then
    p.out = p.outMin; p.saturated = true
    if p.err > 0.0 then p.integ = p.newInteg end
  else
    p.out = p.raw; p.saturated = false; p.integ = p.newInteg
  end
end

local function MotorCtl(timeout)
  return {cmd = false, feedback = false, timeout = timeout, out = false, running = false, fault = false,
          starts = 0, discrepancy = TON(), startEdge = R_TRIG()}
end
local function motorCall(m, cmd, fb)
  m.cmd, m.feedback = cmd, fb
  m.out = m.cmd and not m.fault
  rtrig(m.startEdge, m.out)
  if m.startEdge.Q then m.starts = m.starts + 1 end
  ton(m.discrepancy, m.out ~= m.feedback, m.timeout)
  if m.discrepancy.Q then m.fault = true; m.out = false end
  m.running = m.out and m.feedback
end

local function AlarmLatch() return {active = false, raised = false, count = 0, edge = R_TRIG()} end
local function almCall(a, cond, ack)
  rtrig(a.edge, cond)
  a.raised = a.edge.Q
  if a.raised then a.active = true; a.count = a.count + 1 end
  if ack and not cond then a.active = false end
end

local function EventLog()
  local e = {entries = {}, total = 0, newest = ''}
  for k = 1, 12 do e.entries[k] = '' end
  return e
end
local function eventsAppend(e, msg)
  msg = msg:sub(1, 40)
  for k = 12, 2, -1 do e.entries[k] = e.entries[k - 1] end
  e.entries[1] = msg
  e.total = e.total + 1
end

---------------------------------------------------------------------------
-- config.st globals
local G = {
  gLineState = Idle, gFilling = false, gAckAlarms = false, gBottlesOut = 0, gBatches = 0,
  gStations = {}, gTank = {level = 0.0, setpoint = 0.0, inlet = 0.0, high = false, low = false},
  gAlarms = {}, gStatusText = '',
}
for i, n in ipairs{'Filler', 'Capper', 'Exit'} do
  G.gStations[i] = {name = n, state = Waiting, count = 0, rejects = 0, busyCycles = 0}
end
for i, t in ipairs{'E-stop', 'Conveyor motor fault', 'Filler jam', 'Tank level high', 'Tank level low'} do
  G.gAlarms[i] = {active = false, count = 0, text = t}
end

---------------------------------------------------------------------------
-- LineControl (instance Line)
local L = {
  ackAlarms = false, resetCounters = false, fillTime = 200, batchSize = 4,
  state = Idle, prevState = Idle, stateCycles = 0, filler = Waiting, motorCmd = false,
  lineMoving = false, anyAlarm = false, hornLatch = false, alarmTotal = 0, lastAlarmTotal = 0,
  lastFillTime = 0, batches = 0,
  trackQ = {[0] = 0, 0, 0, 0, 0, 0, 0, 0}, qHead = 0, qCount = 0, nextBottle = 0, lastOut = 0, untracked = 0,
  exitEdge = R_TRIG(), starvedTimer = TON(), starvedCycles = 0, stopTimer = TON(),
  motor = MotorCtl(500), alm = {AlarmLatch(), AlarmLatch(), AlarmLatch()},
  startEdge = R_TRIG(), fillTimer = TON(), releaseTimer = TON(), capEdge = R_TRIG(), capPulse = TP(),
  fillCounter = CTU(), exitCounter = CTU(),
}
local function LineControl()
  local startPb, stopPb = ix('0.0'), ix('0.1')
  local fillerSensor, capperSensor, exitSensor, motorFb = ix('0.3'), ix('0.4'), ix('0.5'), ix('0.6')
  local gEStopOk = ix('0.2')
  local S = G.gStations

  G.gAckAlarms = L.ackAlarms
  if L.ackAlarms then
    L.motor.fault = false                       -- motor.Reset()
    if L.filler == Jammed and not fillerSensor then L.filler = Waiting end
    L.hornLatch = false
  end
  if L.resetCounters then
    for i = 1, 3 do S[i].count = 0; S[i].rejects = 0; S[i].busyCycles = 0 end
    L.batches = 0
  end

  almCall(L.alm[1], not gEStopOk, L.ackAlarms)
  almCall(L.alm[2], L.motor.fault, L.ackAlarms)
  almCall(L.alm[3], L.filler == Jammed, L.ackAlarms)
  L.anyAlarm = false
  for i = 1, 3 do
    L.anyAlarm = L.anyAlarm or L.alm[i].active
    G.gAlarms[i].active = L.alm[i].active
    G.gAlarms[i].count = L.alm[i].count
  end
  L.alarmTotal = 0
  for i = 1, 5 do L.alarmTotal = L.alarmTotal + G.gAlarms[i].count end
  if L.alarmTotal > L.lastAlarmTotal then L.hornLatch = true end
  L.lastAlarmTotal = L.alarmTotal

  rtrig(L.startEdge, startPb)
  if L.state ~= L.prevState then L.prevState = L.state; L.stateCycles = 0
  else L.stateCycles = L.stateCycles + 1 end

  local st = L.state
  if st == Idle then
    L.motorCmd = false
    if L.startEdge.Q and not L.anyAlarm then L.state = Starting end
  elseif st == Starting then
    L.motorCmd = true
    if L.anyAlarm then L.state = Faulted elseif L.motor.running then L.state = Running end
  elseif st == Running then
    L.motorCmd = true
    if L.anyAlarm then L.state = Faulted elseif stopPb then L.state = Stopping end
  elseif st == Stopping then
    L.motorCmd = true
    if L.anyAlarm then L.state = Faulted
    elseif L.filler == Waiting or L.stopTimer.Q then L.state = Idle end
  elseif st == Faulted then
    L.motorCmd = false
    if not L.anyAlarm then L.state = Idle end
  end

  if not gEStopOk then L.motorCmd = false end
  motorCall(L.motor, L.motorCmd, motorFb)
  QX['0.0'] = L.motor.out
  L.lineMoving = L.motor.running and (L.state == Running or L.state == Stopping)
  ton(L.stopTimer, L.state == Stopping, 2000)

  local f = L.filler
  if f == Waiting then
    if fillerSensor and L.lineMoving and not G.gTank.low then L.filler = Working end
  elseif f == Working then
    if not fillerSensor then
      S[1].rejects = S[1].rejects + 1
      L.filler = Waiting
    elseif L.fillTimer.Q then
      L.lastFillTime = L.fillTimer.ET
      L.filler = Releasing
    end
  elseif f == Releasing then
    if not fillerSensor then
      S[1].count = S[1].count + 1
      L.nextBottle = L.nextBottle + 1
      if L.qCount < 8 then
        L.trackQ[math.fmod(L.qHead + L.qCount, 8)] = L.nextBottle
        L.qCount = L.qCount + 1
      end
      L.filler = Waiting
    elseif L.releaseTimer.Q then
      L.filler = Jammed
    end
  end
  ton(L.fillTimer, L.filler == Working and L.state ~= Faulted, L.fillTime)
  ton(L.releaseTimer, L.filler == Releasing and L.lineMoving, 1000)
  QX['0.1'] = L.filler == Working and not L.fillTimer.Q and L.state ~= Faulted and gEStopOk
  QX['0.5'] = L.filler == Releasing
  ton(L.starvedTimer, L.state == Running and L.filler == Waiting, 300)
  if L.starvedTimer.Q then L.starvedCycles = L.starvedCycles + 1 end

  ctu(L.fillCounter, L.filler == Releasing, L.fillCounter.Q or L.resetCounters, L.batchSize)
  if L.fillCounter.Q then L.batches = L.batches + 1 end

  rtrig(L.capEdge, capperSensor and L.lineMoving)
  tp(L.capPulse, L.capEdge.Q, 150)
  QX['0.2'] = L.capPulse.Q
  if L.capEdge.Q then S[2].count = S[2].count + 1 end

  ctu(L.exitCounter, exitSensor, L.resetCounters, 32767)
  G.gBottlesOut = L.exitCounter.CV
  S[3].count = L.exitCounter.CV
  rtrig(L.exitEdge, exitSensor)
  if L.exitEdge.Q then
    if L.qCount > 0 then
      L.lastOut = L.trackQ[L.qHead]
      L.qHead = math.fmod(L.qHead + 1, 8)
      L.qCount = L.qCount - 1
    else
      L.untracked = L.untracked + 1
    end
  end

  S[1].state = L.filler
  S[2].state = L.capPulse.Q and Working or Waiting
  S[3].state = exitSensor and Working or Waiting
  for i = 1, 3 do
    if S[i].state ~= Waiting then S[i].busyCycles = S[i].busyCycles + 1 end
  end

  QX['0.4'] = L.state == Running
  QX['0.3'] = L.hornLatch                       -- gHorn
  G.gLineState = L.state
  G.gFilling = QX['0.1']
  G.gBatches = L.batches
end

---------------------------------------------------------------------------
-- TankControl (instance Tank)
local T = {
  setpoint = f32(60.0), rampRate = f32(5.0), ts = f32(0.01), spRamp = 0.0, level = 0.0, levelFilt = 0.0,
  inletCmd = 0.0, feedForward = 0.0, inflow = 0.0, totalIn = 0.0, highCond = false, lowCond = false,
  firstScan = true,
  pid = PidCtrl{kp = f32(4.0), ki = f32(0.5), kd = 0.0, ts = f32(0.01), outMin = 0.0, outMax = f32(100.0)},
  almHigh = AlarmLatch(), almLow = AlarmLatch(),
}
local function TankControl()
  local gEStopOk = ix('0.2')
  T.level = ScaleAnalog(IW[2], 0.0, f32(100.0))
  if T.firstScan then T.levelFilt = T.level; T.spRamp = T.level; T.firstScan = false end
  T.levelFilt = f32(T.levelFilt + f32(f32(0.2) * f32(T.level - T.levelFilt)))
  if T.spRamp < T.setpoint then
    T.spRamp = math.min(f32(T.spRamp + f32(T.rampRate * T.ts)), T.setpoint)
  elseif T.spRamp > T.setpoint then
    T.spRamp = math.max(f32(T.spRamp - f32(T.rampRate * T.ts)), T.setpoint)
  end
  T.feedForward = G.gFilling and f32(12.0) or 0.0
  if not gEStopOk then pidReset(T.pid) end
  T.pid.sp, T.pid.pv, T.pid.manual, T.pid.manualOut = T.spRamp, T.levelFilt, not gEStopOk, 0.0
  pidCall(T.pid)
  T.inletCmd = limit(0.0, f32(T.pid.out + T.feedForward), f32(100.0))
  if not gEStopOk then T.inletCmd = 0.0 end
  QW[1] = round(f32(T.inletCmd * f32(276.48)))
  T.inflow = f32(T.inletCmd * f32(1.2))
  T.totalIn = f32(T.totalIn + f32(f32(T.inflow * T.ts) / f32(60.0)))
  T.highCond = T.levelFilt > 90.0 or (T.highCond and T.levelFilt > 85.0)
  T.lowCond = T.levelFilt < 10.0 or (T.lowCond and T.levelFilt < 15.0)
  almCall(T.almHigh, T.highCond, G.gAckAlarms)
  almCall(T.almLow, T.lowCond, G.gAckAlarms)
  local tk = G.gTank
  tk.level, tk.setpoint, tk.inlet, tk.high, tk.low = T.levelFilt, T.spRamp, T.inletCmd, T.almHigh.active, T.lowCond
  G.gAlarms[4].active, G.gAlarms[4].count = T.almHigh.active, T.almHigh.count
  G.gAlarms[5].active, G.gAlarms[5].count = T.almLow.active, T.almLow.count
end

---------------------------------------------------------------------------
-- Supervisor (instance Monitor)
local V = {
  history = {[0] = 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, histIdx = 0, bottlesPerMin = 0, uptime = 0, upTicks = 0,
  runTicks = 0, idleTicks = 0, faultTicks = 0, availability = 0.0, totalDone = 0, maxCount = 0, minCount = 0,
  inTransit = 0, avgCount = 0.0, busiest = '', maxBusy = 0, yieldPct = 0.0, activeAlarms = 0, alarmText = '',
  stateName = '', report = '', reports = 0,
  events = EventLog(), stamp = '', lastState = Idle, lastAlarmCount = {0, 0, 0, 0, 0},
  lastAlarmActive = {false, false, false, false, false}, lastBatches = 0,
}
local stateNames = {Idle = 'IDLE', Starting = 'START', Running = 'RUN', Stopping = 'STOP', Faulted = 'FAULT'}
local function Supervisor()
  local S = G.gStations
  V.stamp = TenthsToText(V.upTicks)
  V.uptime = V.uptime + 100
  V.upTicks = V.upTicks + 1
  local ls = G.gLineState
  if ls == Running or ls == Stopping then V.runTicks = V.runTicks + 1
  elseif ls == Faulted then V.faultTicks = V.faultTicks + 1
  else V.idleTicks = V.idleTicks + 1 end
  V.availability = f32(f32(V.runTicks * 100.0) / V.upTicks)

  V.bottlesPerMin = (G.gBottlesOut - V.history[V.histIdx]) * 60
  V.history[V.histIdx] = G.gBottlesOut
  V.histIdx = math.fmod(V.histIdx + 1, 10)

  V.totalDone = 0
  V.maxCount = S[1].count
  V.minCount = S[1].count
  V.maxBusy = -1
  for i = 1, 3 do
    V.totalDone = V.totalDone + S[i].count
    if S[i].count > V.maxCount then V.maxCount = S[i].count end
    if S[i].count < V.minCount then V.minCount = S[i].count end
    if S[i].busyCycles > V.maxBusy then V.maxBusy = S[i].busyCycles; V.busiest = S[i].name end
  end
  V.avgCount = f32(V.totalDone / f32(3.0))
  V.inTransit = S[1].count - S[3].count
  if S[1].count + S[1].rejects > 0 then
    V.yieldPct = f32(f32(S[1].count * 100.0) / (S[1].count + S[1].rejects))
  else
    V.yieldPct = 100.0
  end

  V.activeAlarms = 0
  V.alarmText = ''
  for i = 1, 5 do
    if G.gAlarms[i].active then
      V.activeAlarms = V.activeAlarms + 1
      if #V.alarmText > 0 then V.alarmText = (V.alarmText .. ', '):sub(1, 80) end
      V.alarmText = (V.alarmText .. G.gAlarms[i].text):sub(1, 80)
    end
  end
  if V.activeAlarms == 0 then V.alarmText = 'no alarms' end

  V.stateName = stateNames[ls]
  if ls ~= V.lastState then
    eventsAppend(V.events, V.stamp .. ' line ' .. V.stateName)
    V.lastState = ls
  end
  for i = 1, 5 do
    if G.gAlarms[i].count > V.lastAlarmCount[i] then
      eventsAppend(V.events, V.stamp .. ' ALARM ' .. G.gAlarms[i].text)
    end
    if V.lastAlarmActive[i] and not G.gAlarms[i].active then
      eventsAppend(V.events, V.stamp .. ' cleared ' .. G.gAlarms[i].text)
    end
    V.lastAlarmCount[i] = G.gAlarms[i].count
    V.lastAlarmActive[i] = G.gAlarms[i].active
  end
  if G.gBatches > V.lastBatches then
    eventsAppend(V.events, V.stamp .. ' batch ' .. tostring(G.gBatches))
    V.lastBatches = G.gBatches
  end
  V.events.newest = V.events.entries[1]

  V.report = (V.stateName .. ' out=' .. tostring(G.gBottlesOut) .. ' bpm=' .. tostring(V.bottlesPerMin)
    .. ' lvl=' .. tostring(round(G.gTank.level)) .. '% alarms=' .. tostring(V.activeAlarms)):sub(1, 80)
  G.gStatusText = V.report
  V.reports = V.reports + 1
end

---------------------------------------------------------------------------
-- stimulus
local stim = {}
do
  local f = assert(io.open(stimPath))
  local header = {}
  for name in f:read('l'):gmatch('[^,]+') do header[#header + 1] = name end
  for line in f:lines() do
    local row, i = {}, 0
    for v in line:gmatch('[^,]+') do i = i + 1; row[header[i]] = v end
    stim[tonumber(row.cycle)] = row
  end
  f:close()
end
local function apply(row)
  for name, v in pairs(row) do
    if name ~= 'cycle' then
      local bit = name:match('^%%IX(%d+%.%d+)$')
      local word = name:match('^%%IW(%d+)$')
      if bit then IX[bit] = (v == '1' or v == 'TRUE')
      elseif word then IW[tonumber(word)] = tonumber(v)
      elseif name == 'Line.ackAlarms' then L.ackAlarms = (v == '1' or v == 'TRUE')
      elseif name == 'Tank.setpoint' then T.setpoint = f32(tonumber(v))
      else error('unknown stimulus column ' .. name) end
    end
  end
end

---------------------------------------------------------------------------
-- scheduler: Fast (10 ms, prio 1) runs Line then Tank; Slow (100 ms, prio 5) runs Super
local cycle, t = 0, 0
local lastLine, lastFiller, lastFault, lastHorn, lastOut = L.state, L.filler, false, false, 0
local lastAlarm = {false, false, false, false, false}
while cycle < cycles do
  for _, task in ipairs{'Fast', 'Slow'} do
    if cycle >= cycles then break end
    if task == 'Fast' or t % 100 == 0 then
      if stim[cycle] then apply(stim[cycle]) end
      now = t
      if task == 'Fast' then LineControl(); TankControl() else Supervisor() end
      if trace then
        if L.state ~= lastLine or L.filler ~= lastFiller then
          print(string.format('cycle %3d t=%4dms  line %-8s filler %s', cycle, t, L.state, L.filler))
          lastLine, lastFiller = L.state, L.filler
        end
        if L.motor.fault ~= lastFault then
          print(string.format('cycle %3d t=%4dms  motor fault %s', cycle, t, tostring(L.motor.fault)))
          lastFault = L.motor.fault
        end
        for i = 1, 5 do
          if G.gAlarms[i].active ~= lastAlarm[i] then
            print(string.format('cycle %3d t=%4dms  alarm %d (%s) active %s', cycle, t, i, G.gAlarms[i].text,
              tostring(G.gAlarms[i].active)))
            lastAlarm[i] = G.gAlarms[i].active
          end
        end
        if QX['0.3'] ~= lastHorn then
          print(string.format('cycle %3d t=%4dms  horn %s', cycle, t, tostring(QX['0.3'])))
          lastHorn = QX['0.3']
        end
        if G.gBottlesOut ~= lastOut then
          print(string.format('cycle %3d t=%4dms  bottles out %d', cycle, t, G.gBottlesOut))
          lastOut = G.gBottlesOut
        end
      end
      cycle = cycle + 1
    end
  end
  t = t + 10
end

---------------------------------------------------------------------------
-- final state
local function fmt(v)
  if type(v) == 'number' and math.type(v) == 'float' then return string.format('%.9g', v) end
  if type(v) == 'string' then return "'" .. v .. "'" end
  return tostring(v)
end
print(string.format('after %d cycles (last cycle started at t=%d ms)', cycles, now))
print('Line.state', L.state, 'Line.filler', L.filler, 'Line.stateCycles', L.stateCycles)
print('Line.motor.starts', L.motor.starts, 'Line.motor.fault', L.motor.fault, 'Line.hornLatch', L.hornLatch)
print('Line.batches', L.batches, 'Line.fillCounter.CV', L.fillCounter.CV, 'Line.nextBottle', L.nextBottle,
  'Line.lastOut', L.lastOut, 'Line.qCount', L.qCount, 'Line.untracked', L.untracked)
print('Line.lastFillTime(ms)', L.lastFillTime, 'Line.starvedCycles', L.starvedCycles)
for i = 1, 3 do
  local s = G.gStations[i]
  print(string.format('gStations[%d] name=%s state=%s count=%d rejects=%d busyCycles=%d',
    i, s.name, s.state, s.count, s.rejects, s.busyCycles))
end
for i = 1, 5 do
  local a = G.gAlarms[i]
  print(string.format('gAlarms[%d] active=%s count=%d text=%s', i, tostring(a.active), a.count, a.text))
end
print('gBottlesOut', G.gBottlesOut, 'gBatches', G.gBatches, 'gLineState', G.gLineState)
print('gTank', 'level=' .. fmt(G.gTank.level), 'setpoint=' .. fmt(G.gTank.setpoint), 'inlet=' .. fmt(G.gTank.inlet),
  'high=' .. tostring(G.gTank.high), 'low=' .. tostring(G.gTank.low))
print('Tank.pid', 'out=' .. fmt(T.pid.out), 'integ=' .. fmt(T.pid.integ), 'err=' .. fmt(T.pid.err),
  'saturated=' .. tostring(T.pid.saturated))
print('Tank.totalIn', fmt(T.totalIn), '%QW1', QW[1])
print('outputs', '%QX0.0=' .. tostring(QX['0.0']), '%QX0.1=' .. tostring(QX['0.1']), '%QX0.2=' .. tostring(QX['0.2']),
  '%QX0.3=' .. tostring(QX['0.3']), '%QX0.4=' .. tostring(QX['0.4']), '%QX0.5=' .. tostring(QX['0.5']))
print('Monitor.upTicks', V.upTicks, 'runTicks', V.runTicks, 'idleTicks', V.idleTicks, 'faultTicks', V.faultTicks,
  'availability', fmt(V.availability))
print('Monitor.bottlesPerMin', V.bottlesPerMin, 'totalDone', V.totalDone, 'maxCount', V.maxCount, 'minCount', V.minCount,
  'inTransit', V.inTransit, 'avgCount', fmt(V.avgCount), 'yieldPct', fmt(V.yieldPct))
print('Monitor.busiest', fmt(V.busiest), 'maxBusy', V.maxBusy, 'reports', V.reports)
print('Monitor.alarmText', fmt(V.alarmText))
print('gStatusText', fmt(G.gStatusText))
for k = 1, 12 do print(string.format('Monitor.events.entries[%d] %s', k, fmt(V.events.entries[k]))) end
print('Monitor.events.total', V.events.total)
