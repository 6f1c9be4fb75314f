// Replay sessions (launch with `trace`) and the reverse requests: stepBack, reverseContinue,
// restartFrame, scanback/stepBackIn, scanback/stepBackOut, scanback/seek, scanback/timeline, data
// breakpoints both ways, sources served from the trace, history read-only.
//
// The traces are recorded once, by `scanback run --record`, into a temporary directory:
// - the plant (examples/plant with its stimulus), 3000 cycles. Global cycles: the Slow task
//   (thread 2, Monitor : Supervisor) runs in cycles 1, 12, 23, ... (11k + 1, at k * 100 ms), the Fast
//   task (thread 1, Line then Tank) in all the others; `Monitor.upTicks` counts the Slow cycles.
// - the cell (tests/dap/e2e/programs/cell), which faults in its fourth cycle (cycle 3): a division
//   by zero in Ratio (lib.st), called by Calc.scale (fbs.st), called by Calc (main.st).
// Positions are 'CYCLE:STEP' as scanback/timeline reports them. `scanback trace why` (an
// independent reader of the same trace) is the oracle for where variables changed.
'use strict';

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const {
  plant, cell, plantFiles, cellFiles, lineOf, useClient, tempDir, recordTrace, traceChanges,
} = require('../lib/fixtures');

const P = plant.programs;
const F = plant.fbs;
const src = (p) => ({ path: p });
const L = {
  lineFirst: lineOf(P, 'gAckAlarms := ackAlarms;'),
  motor: lineOf(P, 'motor(cmd := motorCmd, feedback := motorFb);'),
  conveyorOut: lineOf(P, 'conveyorOut := motor.out;'),
  count1: lineOf(P, 'gStations[1].count := gStations[1].count + 1;'),
  nextBottle: lineOf(P, 'nextBottle := nextBottle + 1;'),
  trackQ: lineOf(P, 'trackQ[(qHead + qCount) MOD 8] := nextBottle;'),
  qCount: lineOf(P, 'qCount := qCount + 1;'),
  lineLast: lineOf(P, 'gBatches := batches;'),
  scale: lineOf(P, 'level := ScaleAnalog'),
  inletValve: lineOf(P, 'inletValve := REAL_TO_INT(inletCmd * 276.48);'),
  almHigh: lineOf(P, 'almHigh(condition := highCond, ack := gAckAlarms);'),
  tankLast: lineOf(P, 'gAlarms[5].count := almLow.count;'),
  stamp: lineOf(P, 'stamp := TenthsToText(upTicks);'),
  upTicks: lineOf(P, 'upTicks := upTicks + 1;'),
  reports: lineOf(P, 'reports := reports + 1;'),
  motorFirst: lineOf(F, 'out := cmd AND NOT fault;'),
  discrepancy: lineOf(F, 'discrepancy(IN := out XOR feedback, PT := timeout);'),
  motorLast: lineOf(F, 'running := out AND feedback;'),
  scaleLast: lineOf(F, 'ScaleAnalog := lo + (hi - lo)'),
};
const C = {
  ratio: lineOf(cell.lib, 'Ratio := num / den;'),
  calls: lineOf(cell.fbs, 'calls := calls + 1;'),
  callRatio: lineOf(cell.fbs, 'scaled := Ratio('),
  n: lineOf(cell.main, 'n := n + 1;'),
  callScale: lineOf(cell.main, 'scale(value := n);'),
  result: lineOf(cell.main, 'result := scale.scaled;'),
};
const PLANT_CYCLES = 3000;
const SLOW_EVERY = 11;   // Slow cycles are 11k + 1
const slowCycle = (k) => SLOW_EVERY * k + 1;

// [file, line] of a frame; a source served by reference shows as 'ref:NAME'.
const frameAt = (f) => [f.source && (f.source.path || `ref:${f.source.name}`), f.line];
const framesAt = async (dc, threadId = 1) => (await dc.frames(threadId)).stackFrames.map(frameAt);
const cycleOf = (position) => Number(position.split(':')[0]);
const stepOf = (position) => Number(position.split(':')[1]);

describe('replay', function () {
  const ctx = useClient();
  let dir;
  let plantTrace;
  let cellTrace;

  before(function () {
    dir = tempDir('replay');
    plantTrace = recordTrace(plantFiles, path.join(dir, 'plant.trace'), { cycles: PLANT_CYCLES, inputs: plant.stimulus });
    // The cell faults in its fourth cycle: `run` exits 3, the trace is complete all the same.
    cellTrace = recordTrace(cellFiles, path.join(dir, 'cell.trace'), { cycles: 10, exitCode: 3 });
  });
  after(function () {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  // A replay session of `trace` (initialize, launch, configurationDone): the first stop.
  async function replay(dc, trace, extra = {}) {
    await dc.startSession({ trace, ...extra });
    return dc.configureToStop();
  }

  // evaluate without a frame (instance paths such as 'Line.batches', globals).
  async function value(dc, expression) {
    const r = await dc.request('evaluate', { expression, context: 'watch' });
    assert.strictEqual(r.success, true, `evaluate '${expression}' failed: ${r.message}`);
    return r.body.result;
  }

  ctx.it('a replay of the faulted cell starts at the fault: reason exception at lib.st, the stack across three files, exceptionInfo, the timeline', async function () {
    const { dc } = ctx;
    // `trace` relative to `cwd`.
    await dc.startSession({ trace: path.basename(cellTrace), cwd: dir });
    const caps = dc.messages.find((m) => m.type === 'response' && m.command === 'initialize').body;
    assert.deepStrictEqual([caps.supportsStepBack, caps.supportsRestartFrame], [true, true]);
    const stopped = await dc.configureToStop();
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId], ['exception', 1]);
    assert.ok(stopped.body.description.includes(`${cell.lib}:${C.ratio}:1`), stopped.body.description);
    assert.match(stopped.body.description, /division by zero/);
    assert.ok(dc.outputsSince(0).some((o) => o.includes(`replaying ${cellTrace}`)), 'the console says what is replayed');
    assert.deepStrictEqual((await dc.threadsRequest()).body.threads, [{ id: 1, name: 'Main' }]);
    const trace = (await dc.frames(1)).stackFrames;
    assert.deepStrictEqual(trace.map(frameAt), [[cell.lib, C.ratio], [cell.fbs, C.callRatio], [cell.main, C.callScale]]);
    assert.deepStrictEqual(trace.map((f) => f.name), ['Ratio', 'Calc.scale (Scaler)', 'Calc (Calculator)']);
    const info = (await dc.exceptionInfoRequest({ threadId: 1 })).body;
    assert.deepStrictEqual([info.exceptionId, info.breakMode, info.details.typeName], ['division by zero', 'always', 'division by zero']);
    assert.ok(info.description.includes(`${cell.lib}:${C.ratio}`), info.description);
    // The state of the fourth cycle, before the faulting statement: n = 4 = gLimit.
    assert.strictEqual(await dc.evaluate('den', trace[0].id), '0');
    assert.strictEqual(await dc.evaluate('num', trace[0].id), '40');
    assert.strictEqual(await dc.evaluate('calls', trace[1].id), '4');
    assert.strictEqual(await dc.evaluate('n', trace[2].id), '4');
    assert.strictEqual(await value(dc, 'gHistory[3]'), '30');
    assert.strictEqual(await value(dc, 'gCount'), '3');
    const t = await dc.timeline();
    assert.ok(t.step > 0, 'the fault is inside the cycle');
    assert.deepStrictEqual({ ...t, step: 0, fault: undefined }, {
      firstCycle: 0, lastCycle: 3, firstTimeNs: 0, lastTimeNs: 30000000, cycle: 3, step: 0, timeNs: 30000000,
      tasks: [{ threadId: 1, name: 'Main', intervalNs: 10000000 }], gaps: [], live: false, fault: undefined,
      newest: { cycle: 3, step: t.step }, running: false,
    });
    // docs/timeline-protocol.md: the fault is an object with its position and source line.
    assert.ok(t.fault.message.includes(`${cell.lib}:${C.ratio}`) && /division by zero/.test(t.fault.message), JSON.stringify(t.fault));
    assert.deepStrictEqual([t.fault.cycle, t.fault.step, t.fault.line], [3, t.step, C.ratio]);
    assert.ok(t.fault.file.endsWith(cell.lib), t.fault.file);
    // Back from the faulting statement, the first of Ratio: the caller's call statement.
    const back = await dc.resumeToStop('stepBack', { threadId: 1 });
    assert.strictEqual(back.body.reason, 'step');
    assert.deepStrictEqual(await framesAt(dc), [[cell.fbs, C.callRatio], [cell.main, C.callScale]]);
    assert.strictEqual(await dc.position(), `3:${t.step - 1}`);
    assert.match((await dc.fails('exceptionInfo', { threadId: 1 })).message, /not stopped at a fault/);
    // stepIn: the faulting statement again, shown as the fault it was.
    const again = await dc.resumeToStop('stepIn', { threadId: 1 });
    assert.strictEqual(again.body.reason, 'exception');
    assert.strictEqual(await dc.position(), `3:${t.step}`);
    assert.strictEqual((await dc.exceptionInfoRequest({ threadId: 1 })).body.exceptionId, 'division by zero');
  });

  // The recording ends inside the call being stepped over (or out of): the step cannot complete,
  // and as live (and as `continue`) it must stop at the end of the recording, the fault, with
  // reason exception. The adapter stays where it was instead (reason step, the position unchanged)
  // while its output says "the end of the recording was reached (cycle 3, step 1)".
  ctx.it('next over (and stepOut of) the call in which the recording faulted stops at the fault with reason exception', async function () {
    const { dc } = ctx;
    await replay(dc, cellTrace);
    const fault = await dc.position();
    await dc.resumeToStop('scanback/stepBackOut', { threadId: 1 });
    await dc.resumeToStop('scanback/stepBackOut', { threadId: 1 });
    assert.deepStrictEqual(await framesAt(dc), [[cell.main, C.callScale]]);
    const call = await dc.position();
    for (const [command, frames] of [
      ['next', [[cell.main, C.callScale]]],
      ['stepOut', [[cell.fbs, C.callRatio], [cell.main, C.callScale]]]]) {
      if (command === 'stepOut') {
        await dc.resumeToStop('scanback/seek', { cycle: cycleOf(fault), step: stepOf(fault) - 1 });
        assert.deepStrictEqual(await framesAt(dc), frames);
      }
      const from = dc.mark();
      const stopped = await dc.resumeToStop(command, { threadId: 1 });
      const at = await dc.position();
      assert.deepStrictEqual([stopped.body.reason, at], ['exception', fault],
        `${command} from ${command === 'next' ? call : `${cycleOf(fault)}:${stepOf(fault) - 1}`} stopped (${stopped.body.reason}) at ${at}; ` +
        `its output: ${JSON.stringify(dc.outputsSince(from))}`);
      assert.deepStrictEqual((await framesAt(dc))[0], [cell.lib, C.ratio]);
      assert.ok(dc.outputsSince(from).some((o) => o.includes('the end of the recording was reached')));
    }
  });

  ctx.it('startAt "start": the first stop is entry at 0:0, the first statement of the recording, before any scan', async function () {
    const { dc } = ctx;
    const stopped = await replay(dc, plantTrace, { startAt: 'start' });
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId], ['entry', 1]);
    assert.strictEqual(await dc.position(), '0:0');
    const t = await dc.timeline();
    assert.deepStrictEqual([t.firstCycle, t.lastCycle, t.timeNs, t.firstTimeNs], [0, PLANT_CYCLES - 1, 0, 0]);
    assert.deepStrictEqual(t.tasks, [
      { threadId: 1, name: 'Fast', intervalNs: 10000000 }, { threadId: 2, name: 'Slow', intervalNs: 100000000 }]);
    assert.deepStrictEqual(await framesAt(dc, 1), [[P, L.lineFirst]]);
    assert.strictEqual((await dc.frames(2)).totalFrames, 0, 'Slow is between cycles');
    assert.strictEqual(await value(dc, 'Tank.firstScan'), 'TRUE');
    assert.strictEqual(await value(dc, 'Monitor.upTicks'), '0');
    assert.strictEqual(await value(dc, 'Tank.levelRaw'), '13824', 'the scan inputs of cycle 0 are applied');
  });

  ctx.it('startAt a cycle stops (entry) at its first statement, in its task; launches with program and trace, or a startAt outside the recording, fail', async function () {
    const { dc } = ctx;
    await dc.init();
    assert.match((await dc.fails('launch', { trace: plantTrace, program: plantFiles })).message, /not both/);
    const outside = await dc.fails('launch', { trace: plantTrace, startAt: PLANT_CYCLES + 5 });
    assert.ok(outside.message.includes(`cycles 0 to ${PLANT_CYCLES - 1}`), outside.message);
    assert.match((await dc.fails('launch', { trace: plantTrace, startAt: 'middle' })).message, /startAt/);
    assert.match((await dc.fails('launch', { trace: path.join(dir, 'none.trace') })).message, /none\.trace/);
    await dc.noEvent('initialized', 0, 50);
    // The session is still to be launched: cycle 397 is the 37th Slow cycle (k = 36, at 3.6 s).
    const cycle = slowCycle(36);
    const from = dc.mark();
    dc.post('launch', { trace: plantTrace, startAt: cycle });
    await dc.event('initialized', from);
    const stopped = await dc.configureToStop();
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId], ['entry', 2]);
    const t = await dc.timeline();
    assert.deepStrictEqual([t.cycle, t.step, t.timeNs], [cycle, 0, 36 * 100000000]);
    assert.deepStrictEqual(await framesAt(dc, 2), [[P, L.stamp]]);
    assert.strictEqual((await dc.frames(1)).totalFrames, 0, 'Fast is between cycles');
    assert.strictEqual(await value(dc, 'Monitor.upTicks'), '36');
  });

  ctx.it('stepBack is the exact reverse of next: 20 nexts (over calls, across programs and cycles) walked back show the same positions, stacks and values', async function () {
    const { dc } = ctx;
    // Fast cycle 396 is followed by the Slow cycle 397, then Fast 398.
    assert.strictEqual(slowCycle(36), 397);
    await replay(dc, plantTrace, { startAt: 396 });
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.inletValve }] });
    const hit = await dc.resumeToStop('continue', { threadId: 1 });
    assert.strictEqual(hit.body.reason, 'breakpoint');
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
    const watched = ['Tank.inletCmd', 'Tank.inletValve', 'Tank.almHigh.count', 'gTank.level', 'gTank.inlet',
      'Line.stateCycles', 'Line.alm[1].count', 'Monitor.upTicks', 'Monitor.reports'];
    const look = async (stopped) => ({
      thread: stopped.body.threadId,
      at: await dc.position(),
      frames: (await dc.frames(stopped.body.threadId)).stackFrames.map((f) => [...frameAt(f), f.name]),
      values: await Promise.all(watched.map((e) => value(dc, e))),
    });
    const forward = [await look(hit)];
    assert.ok(forward[0].at.startsWith('396:'));
    for (let i = 0; i < 20; ++i) {
      const stopped = await dc.resumeToStop('next', { threadId: 1 });
      assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId], ['step', 1]);
      forward.push(await look(stopped));
    }
    // What the walk went through: over calls (almHigh's several statements in one step), to the
    // next Fast cycle (398, past the Slow cycle 397), never into a callee.
    const afterCall = forward.findIndex((s) => s.frames[0][1] === L.almHigh) + 1;
    assert.ok(afterCall > 0 && stepOf(forward[afterCall].at) > stepOf(forward[afterCall - 1].at) + 1, 'a next over almHigh()');
    const crossing = forward.findIndex((s) => s.at.startsWith('398:'));
    assert.ok(crossing > 0, `the walk reaches cycle 398: ${forward.map((s) => s.at).join(' ')}`);
    assert.deepStrictEqual(forward[crossing - 1].frames[0].slice(0, 2), [P, L.tankLast]);
    assert.deepStrictEqual(forward[crossing].frames[0].slice(0, 2), [P, L.lineFirst]);
    assert.notStrictEqual(forward[crossing].values[watched.indexOf('Monitor.upTicks')],
      forward[crossing - 1].values[watched.indexOf('Monitor.upTicks')], 'the Slow cycle ran in between');
    assert.ok(forward.every((s) => s.frames.length === 1));
    for (let i = forward.length - 2; i >= 0; --i) {
      const stopped = await dc.resumeToStop('stepBack', { threadId: 1 });
      assert.strictEqual(stopped.body.reason, 'step');
      assert.deepStrictEqual(await look(stopped), forward[i], `stepBack #${forward.length - 1 - i}`);
    }
    // stepBack from a POU's first statement goes to the caller's call statement.
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.motor }] });
    await dc.resumeToStop('continue', { threadId: 1 });
    const call = await dc.position();
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
    await dc.resumeToStop('stepIn', { threadId: 1 });
    assert.deepStrictEqual(await framesAt(dc), [[F, L.motorFirst], [P, L.motor]]);
    await dc.resumeToStop('stepBack', { threadId: 1 });
    assert.deepStrictEqual(await framesAt(dc), [[P, L.motor]]);
    assert.strictEqual(await dc.position(), call);
    // As next stops at a breakpoint inside the call it steps over, so does stepBack (the last hit).
    await dc.resumeToStop('next', { threadId: 1 });
    assert.deepStrictEqual(await framesAt(dc), [[P, L.conveyorOut]]);
    const set = await dc.setBreakpointsRequest({ source: src(F), breakpoints: [{ line: L.discrepancy }] });
    const inside = await dc.resumeToStop('stepBack', { threadId: 1 });
    assert.deepStrictEqual([inside.body.reason, inside.body.hitBreakpointIds], ['breakpoint', [set.body.breakpoints[0].id]]);
    assert.deepStrictEqual(await framesAt(dc), [[F, L.discrepancy], [P, L.motor]]);
    assert.ok(cycleOf(await dc.position()) === cycleOf(call) && stepOf(await dc.position()) > stepOf(call));
    await dc.setBreakpointsRequest({ source: src(F), breakpoints: [] });
    // Stepping back the other thread: its previous statement, in its previous cycle (Slow 397's last).
    const other = await dc.resumeToStop('stepBack', { threadId: 2 });
    assert.deepStrictEqual([other.body.reason, other.body.threadId], ['step', 2]);
    assert.ok((await dc.position()).startsWith('397:'), await dc.position());
    assert.deepStrictEqual(await framesAt(dc, 2), [[P, L.reports]]);
  });

  ctx.it('reverseContinue stops at the last hit before here, with its condition and a hit condition counted from the start of the recording; logpoints print going forward only', async function () {
    const { dc } = ctx;
    await replay(dc, plantTrace);   // at the end
    const final = Number(await value(dc, 'Monitor.upTicks'));
    assert.ok(final > 200, `upTicks at the end: ${final}`);
    let set = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.upTicks, condition: 'upTicks MOD 10 = 3' }] });
    let id = set.body.breakpoints[0].id;
    assert.strictEqual(set.body.breakpoints[0].verified, true);
    // The last Slow cycle that began with upTicks = ...3, then the one before it.
    const expected = Math.floor((final - 1 - 3) / 10) * 10 + 3;
    for (const upTicks of [expected, expected - 10]) {
      const stopped = await dc.resumeToStop('reverseContinue', { threadId: 1 });
      assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId, stopped.body.hitBreakpointIds], ['breakpoint', 2, [id]]);
      const top = await dc.topFrame(2);
      assert.deepStrictEqual(frameAt(top), [P, L.upTicks]);
      assert.strictEqual(await dc.evaluate('upTicks', top.id), String(upTicks));
      assert.strictEqual(cycleOf(await dc.position()), slowCycle(upTicks));
    }
    // '=3': the third hit since the start of the recording (upTicks 3, 13, 23), not the third
    // one before here.
    set = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.upTicks, condition: 'upTicks MOD 10 = 3', hitCondition: '=3' }] });
    id = set.body.breakpoints[0].id;
    let stopped = await dc.resumeToStop('reverseContinue', { threadId: 2 });
    assert.deepStrictEqual([stopped.body.reason, stopped.body.hitBreakpointIds], ['breakpoint', [id]]);
    assert.strictEqual(await value(dc, 'Monitor.upTicks'), '23');
    const third = await dc.position();
    assert.strictEqual(cycleOf(third), slowCycle(23));
    // A logpoint: going backwards it neither stops nor prints; no hit before the third: the start.
    set = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [
      { line: L.upTicks, condition: 'upTicks MOD 10 = 3', hitCondition: '=3' },
      { line: L.reports, logMessage: 'reports={reports} up={upTicks}' }] });
    id = set.body.breakpoints[0].id;
    let from = dc.mark();
    stopped = await dc.resumeToStop('reverseContinue', { threadId: 2 });
    assert.strictEqual(stopped.body.reason, 'step');
    assert.strictEqual(await dc.position(), '0:0');
    const back = dc.outputsSince(from);
    assert.ok(back.some((o) => o.includes('the start of the recording was reached')), JSON.stringify(back));
    assert.deepStrictEqual(back.filter((o) => o.startsWith('reports=')), [], 'no logpoint output going backwards');
    // Forward from after the first two hits (cycle 150 > Slow cycle 144, upTicks 13): the hit
    // condition still means the third since the start, so it stops at upTicks = 23 again; the
    // logpoint printed every Slow cycle passed, before the stop.
    await dc.resumeToStop('scanback/seek', { cycle: 150 });
    from = dc.mark();
    stopped = await dc.resumeToStop('continue', { threadId: 1 });
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId, stopped.body.hitBreakpointIds], ['breakpoint', 2, [id]]);
    assert.strictEqual(await dc.position(), third);
    const logs = dc.eventsSince('output', from).filter((o) => o.body.output.startsWith('reports='));
    const want = [];
    for (let k = 14; k <= 22; ++k) want.push(`reports=${k} up=${k + 1}\n`);
    assert.deepStrictEqual(logs.map((o) => o.body.output), want);
    assert.ok(logs.every((o) => o.__index < stopped.__index));
  });

  ctx.it('data breakpoints on a struct field (gStations[1].count) and an array element (Line.trackQ[3]) stop right after the write, backwards and forwards, where `trace why` saw the changes', async function () {
    const { dc } = ctx;
    const changes = [
      ...traceChanges(plantTrace, 'gStations[1].count').map((c) => ({ ...c, name: 'count' })),
      ...traceChanges(plantTrace, 'Line.trackQ[3]').map((c) => ({ ...c, name: 'trackQ' })),
    ].sort((a, b) => b.cycle - a.cycle || b.step - a.step);   // newest first
    // The oracle: count written by the filler five times, trackQ[3] once (the fourth bottle).
    assert.deepStrictEqual(changes.map((c) => [c.name, c.where, c.to]), [
      ['count', `${P}:${L.count1}`, '5'], ['trackQ', `${P}:${L.trackQ}`, '4'], ['count', `${P}:${L.count1}`, '4'],
      ['count', `${P}:${L.count1}`, '3'], ['count', `${P}:${L.count1}`, '2'], ['count', `${P}:${L.count1}`, '1']]);
    const after = { count: L.nextBottle, trackQ: L.qCount };   // the statement after the writing one
    const expression = { count: 'gStations[1].count', trackQ: 'Line.trackQ[3]' };

    const entry = await replay(dc, plantTrace);
    const end = await dc.position();
    // gStations[1].count through the variables of the Globals scope, as VS Code asks; trackQ[3] by expression.
    const top = await dc.topFrame(entry.body.threadId);
    const globals = await dc.variables((await dc.scopes(top.id)).byName.Globals.variablesReference);
    const stations = await dc.variables(globals.byName.gStations.variablesReference);
    const countInfo = (await dc.dataBreakpointInfoRequest({ name: 'count', variablesReference: stations.byName['[1]'].variablesReference })).body;
    const trackInfo = (await dc.dataBreakpointInfoRequest({ name: 'Line.trackQ[3]' })).body;
    assert.ok(typeof countInfo.dataId === 'string' && typeof trackInfo.dataId === 'string', JSON.stringify([countInfo, trackInfo]));
    const set = await dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: countInfo.dataId, accessType: 'write' }, { dataId: trackInfo.dataId }] });
    assert.deepStrictEqual(set.body.breakpoints.map((b) => b.verified), [true, true]);
    const ids = { count: set.body.breakpoints[0].id, trackQ: set.body.breakpoints[1].id };
    const check = async (stopped, c, direction) => {
      const what = `${direction} to ${c.name} = ${c.to} at ${c.cycle}:${c.step}`;
      assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId, stopped.body.hitBreakpointIds],
        ['data breakpoint', 1, [ids[c.name]]], what);
      assert.strictEqual(await dc.position(), `${c.cycle}:${c.step}`, what);
      assert.deepStrictEqual(await framesAt(dc), [[P, after[c.name]]], what);
      assert.strictEqual(await value(dc, expression[c.name]), c.to, what);
    };
    // Backwards: the last four writes, newest first.
    for (const c of changes.slice(0, 4)) await check(await dc.resumeToStop('reverseContinue', { threadId: 1 }), c, 'back');
    // The value just written differs from the one before: the statement before wrote it.
    await dc.resumeToStop('stepBack', { threadId: 1 });
    assert.deepStrictEqual(await framesAt(dc), [[P, L.count1]]);
    assert.strictEqual(await value(dc, 'gStations[1].count'), changes[3].from);
    // Forwards: the same writes again, oldest first (the first one is the write just stepped back over).
    for (const c of changes.slice(0, 4).reverse()) await check(await dc.resumeToStop('continue', { threadId: 1 }), c, 'forward');
    // No write after the last one: the end of the recording.
    const from = dc.mark();
    const last = await dc.resumeToStop('continue', { threadId: 1 });
    assert.strictEqual(last.body.reason, 'step');
    assert.strictEqual(await dc.position(), end);
    assert.ok(dc.outputsSince(from).some((o) => o.includes('the end of the recording was reached')));
  });

  ctx.it('a data breakpoint on a variable written by the scan inputs (Line.ackAlarms, from the stimulus) stops at step 0 of the cycle, both ways', async function () {
    const { dc } = ctx;
    const changes = traceChanges(plantTrace, 'Line.ackAlarms');
    assert.deepStrictEqual(changes.map((c) => [c.where, c.step, c.to]), [['scan inputs', 0, 'false'], ['scan inputs', 0, 'true']]);
    await replay(dc, plantTrace);
    const info = (await dc.dataBreakpointInfoRequest({ name: 'Line.ackAlarms' })).body;
    const id = (await dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: info.dataId }] })).body.breakpoints[0].id;
    for (const [c, command] of [[changes[0], 'reverseContinue'], [changes[1], 'reverseContinue'], [changes[0], 'continue']]) {
      const stopped = await dc.resumeToStop(command, { threadId: 1 });
      assert.deepStrictEqual([stopped.body.reason, stopped.body.hitBreakpointIds], ['data breakpoint', [id]], command);
      assert.strictEqual(await dc.position(), `${c.cycle}:0`, command);
      // Before the cycle's first statement, the scan inputs applied.
      assert.deepStrictEqual(await framesAt(dc), [[P, L.lineFirst]]);
      assert.strictEqual(await value(dc, 'Line.ackAlarms'), c.to.toUpperCase());
      assert.strictEqual(await value(dc, 'gAckAlarms'), c.to === 'true' ? 'FALSE' : 'TRUE', 'the statement copying it has not run');
    }
  });

  ctx.it('restartFrame goes back to the first statement of an FB frame and of a program frame (reason restart); going forward again repeats the same steps', async function () {
    const { dc } = ctx;
    await replay(dc, plantTrace, { startAt: 400 });
    await dc.setBreakpointsRequest({ source: src(F), breakpoints: [{ line: L.motorLast }] });
    await dc.resumeToStop('continue', { threadId: 1 });
    await dc.setBreakpointsRequest({ source: src(F), breakpoints: [] });
    const last = await dc.position();
    assert.strictEqual(cycleOf(last), 400);
    let trace = (await dc.frames(1)).stackFrames;
    assert.deepStrictEqual(trace.map(frameAt), [[F, L.motorLast], [P, L.motor]]);
    // The FB's frame.
    let stopped = await dc.resumeToStop('restartFrame', { frameId: trace[0].id });
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId], ['restart', 1]);
    assert.deepStrictEqual(await framesAt(dc), [[F, L.motorFirst], [P, L.motor]]);
    const first = await dc.position();
    assert.ok(cycleOf(first) === 400 && stepOf(first) < stepOf(last), `${first} before ${last}`);
    let steps = 0;
    while ((await dc.topFrame()).line !== L.motorLast && steps < 20) {
      await dc.resumeToStop('next', { threadId: 1 });
      ++steps;
    }
    assert.strictEqual(await dc.position(), last, 'next from the restarted frame reaches the same statement');
    assert.strictEqual(stepOf(last) - stepOf(first), steps, 'MotorCtl has no calls with statements');
    // The program's frame (Line, the cycle's first program): the cycle's step 0.
    trace = (await dc.frames(1)).stackFrames;
    stopped = await dc.resumeToStop('restartFrame', { frameId: trace[1].id });
    assert.strictEqual(stopped.body.reason, 'restart');
    assert.deepStrictEqual(await framesAt(dc), [[P, L.lineFirst]]);
    assert.strictEqual(await dc.position(), '400:0');
    // Tank, the second program of the Fast cycle: its first statement, within the cycle.
    await dc.setBreakpointsRequest({ source: src(F), breakpoints: [{ line: L.scaleLast }] });
    await dc.resumeToStop('continue', { threadId: 1 });
    await dc.setBreakpointsRequest({ source: src(F), breakpoints: [] });
    trace = (await dc.frames(1)).stackFrames;
    assert.deepStrictEqual(trace.map(frameAt), [[F, L.scaleLast], [P, L.scale]]);
    stopped = await dc.resumeToStop('restartFrame', { frameId: trace[1].id });
    assert.strictEqual(stopped.body.reason, 'restart');
    assert.deepStrictEqual(await framesAt(dc), [[P, L.scale]]);
    const tankFirst = await dc.position();
    assert.ok(cycleOf(tankFirst) === 400 && stepOf(tankFirst) > 0, tankFirst);
    // Line ran before it in the same cycle.
    await dc.resumeToStop('stepBack', { threadId: 1 });
    assert.deepStrictEqual(await framesAt(dc), [[P, L.lineLast]]);
    assert.strictEqual(await dc.position(), `400:${stepOf(tankFirst) - 1}`);
    assert.match((await dc.fails('restartFrame', { frameId: 99 })).message, /frame/);
  });

  ctx.it('scanback/stepBackIn enters the call that just returned at its last statement; scanback/stepBackOut goes to the calling statement (plant and the cell\'s three files)', async function () {
    const { dc } = ctx;
    // The cell: cycle 2, after `scale(value := n)` returned.
    await replay(dc, cellTrace, { startAt: 2 });
    await dc.setBreakpointsRequest({ source: src(cell.main), breakpoints: [{ line: C.result }] });
    await dc.resumeToStop('continue', { threadId: 1 });
    await dc.setBreakpointsRequest({ source: src(cell.main), breakpoints: [] });
    const after = await dc.position();
    assert.ok(after.startsWith('2:'), after);
    // The last statement executed before here: Ratio's, two calls deep (Scaler's last statement is
    // the call of Ratio), the reverse of the `next` that returned from it to here.
    let stopped = await dc.resumeToStop('scanback/stepBackIn', { threadId: 1 });
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId], ['step', 1]);
    assert.deepStrictEqual(await framesAt(dc), [[cell.lib, C.ratio], [cell.fbs, C.callRatio], [cell.main, C.callScale]]);
    const inRatio = await dc.position();
    assert.strictEqual(stepOf(inRatio), stepOf(after) - 1, 'the last statement before the return');
    await dc.resumeToStop('next', { threadId: 1 });
    assert.strictEqual(await dc.position(), after);
    await dc.resumeToStop('scanback/stepBackIn', { threadId: 1 });
    assert.strictEqual(await dc.position(), inRatio);
    assert.strictEqual(await dc.evaluate('den'), '1');
    // Out, one frame at a time, to the calling statements.
    await dc.resumeToStop('scanback/stepBackOut', { threadId: 1 });
    assert.deepStrictEqual(await framesAt(dc), [[cell.fbs, C.callRatio], [cell.main, C.callScale]]);
    const callRatio = await dc.position();
    stopped = await dc.resumeToStop('scanback/stepBackOut', { threadId: 1 });
    assert.strictEqual(stopped.body.reason, 'step');
    assert.deepStrictEqual(await framesAt(dc), [[cell.main, C.callScale]]);
    const callScale = await dc.position();
    assert.ok(stepOf(callScale) < stepOf(callRatio) && stepOf(callRatio) < stepOf(inRatio), [callScale, callRatio, inRatio].join(' '));
    assert.strictEqual(await dc.evaluate('n'), '3');
    assert.strictEqual(await dc.evaluate('scale.calls'), '2', 'the call has not run yet');
  });

  ctx.it('scanback/stepBackIn and stepBackOut on the plant: into MotorCtl from after its call, and out to the call', async function () {
    const { dc } = ctx;
    await replay(dc, plantTrace, { startAt: 400 });
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.conveyorOut }] });
    await dc.resumeToStop('continue', { threadId: 1 });
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
    const after = await dc.position();
    await dc.resumeToStop('scanback/stepBackIn', { threadId: 1 });
    const inside = (await dc.frames(1)).stackFrames;
    assert.deepStrictEqual(inside.map(frameAt), [[F, L.motorLast], [P, L.motor]]);
    assert.strictEqual(inside[0].name, 'Line.motor (MotorCtl)');
    assert.strictEqual(await dc.position(), `400:${stepOf(after) - 1}`);
    await dc.resumeToStop('scanback/stepBackOut', { threadId: 1 });
    assert.deepStrictEqual(await framesAt(dc), [[P, L.motor]]);
    const call = await dc.position();
    // The call statement: next from it comes back to where stepBackIn started.
    await dc.resumeToStop('next', { threadId: 1 });
    assert.strictEqual(await dc.position(), after);
    // stepBackIn on a statement that follows no call is a plain stepBack.
    await dc.resumeToStop('scanback/seek', { cycle: 400, step: stepOf(call) });
    await dc.resumeToStop('scanback/stepBackIn', { threadId: 1 });
    assert.strictEqual(await dc.position(), `400:${stepOf(call) - 1}`);
    assert.strictEqual((await dc.frames(1)).totalFrames, 1);
  });

  ctx.it('scanback/seek: the response, then stopped (goto) at the position; outside the recording it fails and nothing moves; references from before a move are gone', async function () {
    const { dc } = ctx;
    const [batch] = traceChanges(plantTrace, 'Line.batches');
    assert.deepStrictEqual([batch.where, batch.to], [`${P}:${lineOf(P, 'batches := batches + 1;')}`, '1']);
    await replay(dc, plantTrace);
    const end = await dc.timeline();
    // References handed out at the end of the recording.
    const top = await dc.topFrame(1);
    const scopes = await dc.scopes(top.id);
    const globals = scopes.byName.Globals.variablesReference;
    const gTank = (await dc.variables(globals)).byName.gTank.variablesReference;
    assert.ok(gTank > 0);
    let stopped = await dc.resumeToStop('scanback/seek', { cycle: batch.cycle, step: batch.step });
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId], ['goto', 1]);
    assert.strictEqual(await dc.position(), `${batch.cycle}:${batch.step}`);
    assert.deepStrictEqual(await framesAt(dc), [[P, lineOf(P, 'capEdge(CLK := capperSensor AND lineMoving);')]]);
    assert.strictEqual(await value(dc, 'Line.batches'), '1');
    for (const reference of [globals, gTank])
      assert.match((await dc.fails('variables', { variablesReference: reference })).message, /no variables with reference/);
    // One step earlier: before the write.
    const fresh = (await dc.scopes((await dc.topFrame(1)).id)).byName.Instance.variablesReference;
    await dc.resumeToStop('scanback/seek', { cycle: batch.cycle, step: batch.step - 1 });
    assert.strictEqual(await value(dc, 'Line.batches'), '0');
    assert.match((await dc.fails('variables', { variablesReference: fresh })).message, /no variables with reference/, 'also after a move backwards');
    // Without a step: the cycle's step 0; a Slow cycle stops in thread 2.
    stopped = await dc.resumeToStop('scanback/seek', { cycle: slowCycle(10) });
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId], ['goto', 2]);
    assert.strictEqual(await dc.position(), `${slowCycle(10)}:0`);
    assert.deepStrictEqual(await framesAt(dc, 2), [[P, L.stamp]]);
    assert.strictEqual(await value(dc, 'Monitor.upTicks'), '10');
    assert.strictEqual((await dc.timeline()).timeNs, 10 * 100000000);
    // Outside the recording: an error response, no stop, the position unchanged.
    const from = dc.mark();
    const past = await dc.fails('scanback/seek', { cycle: end.lastCycle + 1 });
    assert.match(past.message, /not in the recording/);
    assert.ok(past.message.includes(`cycles 0 to ${end.lastCycle}`), past.message);
    assert.match((await dc.fails('scanback/seek', { cycle: 400, step: 100000 })).message, /past its end/);
    await dc.fails('scanback/seek', { cycle: -1 });
    await dc.fails('scanback/seek', {});
    await dc.noEvent('stopped', from, 200);
    assert.strictEqual(await dc.position(), `${slowCycle(10)}:0`);
    // Back to where the session started.
    await dc.resumeToStop('scanback/seek', { cycle: end.cycle, step: end.step });
    assert.deepStrictEqual(await dc.topFrame(1), { ...top });
  });

  ctx.it('sources missing or changed on disk are served by sourceReference with the recorded text; breakpoints by sourceReference and by recorded path verify and stop', async function () {
    const { dc } = ctx;
    // A copy of the cell, recorded, then lib.st deleted and fbs.st edited.
    const copy = tempDir('replay-sources');
    try {
      const files = {};
      for (const name of ['config', 'lib', 'fbs', 'main']) {
        files[name] = path.join(copy, `${name}.st`);
        fs.copyFileSync(cell[name], files[name]);
      }
      const trace = recordTrace([files.config, files.lib, files.fbs, files.main], path.join(copy, 'cell.trace'), { cycles: 10, exitCode: 3 });
      const recorded = { lib: fs.readFileSync(files.lib, 'utf8'), fbs: fs.readFileSync(files.fbs, 'utf8') };
      fs.rmSync(files.lib);
      fs.writeFileSync(files.fbs, `(* edited after the recording *)\n${recorded.fbs}`);

      const stopped = await replay(dc, trace);
      assert.strictEqual(stopped.body.reason, 'exception');
      const trace0 = (await dc.frames(1)).stackFrames;
      const [lib, fbs, main] = trace0.map((f) => f.source);
      assert.deepStrictEqual(trace0.map((f) => f.line), [C.ratio, C.callRatio, C.callScale], 'the recorded lines');
      // Missing and changed: by reference, named; unchanged: by path.
      for (const [s, name] of [[lib, 'lib.st'], [fbs, 'fbs.st']]) {
        assert.strictEqual(s.name, name);
        assert.ok(Number.isInteger(s.sourceReference) && s.sourceReference > 0, JSON.stringify(s));
        assert.strictEqual(s.path, undefined, JSON.stringify(s));
      }
      assert.notStrictEqual(lib.sourceReference, fbs.sourceReference);
      assert.strictEqual(main.path, files.main);
      assert.ok(!main.sourceReference, JSON.stringify(main));
      // The recorded text, as the client asks for it (the source and, deprecated, the reference).
      const text = async (s) => (await dc.ok('source', { source: s, sourceReference: s.sourceReference })).body.content;
      assert.strictEqual(await text(lib), recorded.lib);
      assert.strictEqual(await text(fbs), recorded.fbs);
      assert.strictEqual((await dc.ok('source', { sourceReference: lib.sourceReference })).body.content, recorded.lib);
      await dc.fails('source', { source: { sourceReference: 9999 }, sourceReference: 9999 });
      // Breakpoints: lib.st by its recorded path (the file is gone), fbs.st by reference.
      const byPath = await dc.setBreakpointsRequest({ source: src(files.lib), breakpoints: [{ line: C.ratio }] });
      const byRef = await dc.setBreakpointsRequest({ source: fbs, breakpoints: [{ line: C.calls }] });
      const [ratioBp, callsBp] = [byPath.body.breakpoints[0], byRef.body.breakpoints[0]];
      assert.deepStrictEqual([ratioBp.verified, ratioBp.line, ratioBp.source.sourceReference], [true, C.ratio, lib.sourceReference]);
      assert.deepStrictEqual([callsBp.verified, callsBp.line, callsBp.source.sourceReference], [true, C.calls, fbs.sourceReference]);
      await dc.resumeToStop('scanback/seek', { cycle: 0 });
      let hit = await dc.resumeToStop('continue', { threadId: 1 });
      assert.deepStrictEqual([hit.body.reason, hit.body.hitBreakpointIds], ['breakpoint', [callsBp.id]]);
      let top = await dc.topFrame(1);
      assert.deepStrictEqual([top.line, top.source.sourceReference], [C.calls, fbs.sourceReference]);
      hit = await dc.resumeToStop('continue', { threadId: 1 });
      assert.deepStrictEqual([hit.body.reason, hit.body.hitBreakpointIds], ['breakpoint', [ratioBp.id]]);
      top = await dc.topFrame(1);
      assert.deepStrictEqual([top.line, top.source.sourceReference], [C.ratio, lib.sourceReference]);
      assert.strictEqual(await dc.position(), `0:${stepOf(await dc.position())}`);
      assert.strictEqual(await dc.evaluate('num'), '10');
      // And backwards: the breakpoint in fbs.st, by reference, earlier in the same cycle.
      hit = await dc.resumeToStop('reverseContinue', { threadId: 1 });
      assert.deepStrictEqual([hit.body.reason, hit.body.hitBreakpointIds], ['breakpoint', [callsBp.id]]);
      assert.ok((await dc.position()).startsWith('0:'));
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });

  ctx.it('history is read-only: setVariable, setExpression and stReload fail with "history is read-only" and change nothing', async function () {
    const { dc } = ctx;
    await replay(dc, plantTrace, { startAt: 400 });
    const top = await dc.topFrame(1);
    const scopes = await dc.scopes(top.id);
    const locals = scopes.byName.Instance.variablesReference;
    const before = await value(dc, 'Line.batchSize');
    const from = dc.mark();
    const failures = [
      await dc.fails('setVariable', { variablesReference: locals, name: 'batchSize', value: '9' }),
      await dc.fails('setExpression', { expression: 'Line.batchSize', value: '9', frameId: top.id }),
      await dc.fails('setExpression', { expression: 'gStations[1].count', value: '9' }),
      await dc.fails('stReload', {}),
    ];
    // A struct field, through its container (gStations[1]).
    const globals = await dc.variables(scopes.byName.Globals.variablesReference);
    const filler = (await dc.variables(globals.byName.gStations.variablesReference)).byName['[1]'];
    failures.push(await dc.fails('setVariable', { variablesReference: filler.variablesReference, name: 'count', value: '9' }));
    for (const f of failures)
      assert.ok(f.message.includes('history is read-only'), `${f.command}: ${f.message}`);
    assert.deepStrictEqual(dc.eventsSince('stopped', from), []);
    assert.deepStrictEqual(dc.outputsSince(from).filter((o) => /next cycle|reloaded/.test(o)), []);
    // Nothing changed, here or a cycle later.
    assert.strictEqual(await value(dc, 'Line.batchSize'), before);
    await dc.resumeToStop('scanback/seek', { cycle: 402 });
    assert.strictEqual(await value(dc, 'Line.batchSize'), before);
    assert.strictEqual(await value(dc, 'gStations[1].count'), '3');
  });

  ctx.it('continue to the end of the recording stops there (step) with an output event and no terminated; the end is the launch\'s end; then stepBack and reverseContinue still work', async function () {
    const { dc } = ctx;
    await replay(dc, plantTrace);
    const end = await dc.position();
    const endFrames = await framesAt(dc);
    assert.strictEqual(cycleOf(end), PLANT_CYCLES - 1);
    await dc.resumeToStop('scanback/seek', { cycle: PLANT_CYCLES - 12 });
    let from = dc.mark();
    let stopped = await dc.resumeToStop('continue', { threadId: 1 });
    assert.strictEqual(stopped.body.reason, 'step');
    assert.strictEqual(await dc.position(), end);
    assert.deepStrictEqual(await framesAt(dc), endFrames);
    const said = dc.eventsSince('output', from).filter((o) => o.body.output.includes('the end of the recording was reached'));
    assert.strictEqual(said.length, 1);
    assert.ok(said[0].__index < stopped.__index, 'the output before the stopped event');
    // Going on forward: still the end, said again; the session never ends by itself.
    from = dc.mark();
    stopped = await dc.resumeToStop('next', { threadId: 1 });
    assert.strictEqual(stopped.body.reason, 'step');
    assert.strictEqual(await dc.position(), end);
    assert.ok(dc.outputsSince(from).some((o) => o.includes('the end of the recording was reached')));
    await dc.noEvent('terminated', 0, 200);
    assert.deepStrictEqual(dc.eventsSince('exited'), []);
    // Backwards from the end.
    stopped = await dc.resumeToStop('stepBack', { threadId: 1 });
    assert.strictEqual(stopped.body.reason, 'step');
    assert.strictEqual(await dc.position(), `${cycleOf(end)}:${stepOf(end) - 1}`);
    from = dc.mark();
    stopped = await dc.resumeToStop('reverseContinue', { threadId: 1 });
    assert.strictEqual(stopped.body.reason, 'step');
    assert.strictEqual(await dc.position(), '0:0');
    assert.ok(dc.outputsSince(from).some((o) => o.includes('the start of the recording was reached')));
    // And forward once more.
    await dc.resumeToStop('next', { threadId: 1 });
    assert.strictEqual(await dc.position(), '0:1');
    assert.deepStrictEqual(dc.eventsSince('terminated'), []);
  });

  // The launch's end (and continue's) is the last statement of the last cycle, before it runs; the
  // boundary after it (the end of that cycle, no statement) is a recorded position scanback/seek
  // accepts. A forward move from there must not go back in history; continue goes back one
  // statement (to the launch's end) instead, and says "the end of the recording was reached".
  ctx.it('continue from the end of the last recorded cycle (seek to its last boundary) does not move backwards', async function () {
    const { dc } = ctx;
    await replay(dc, plantTrace);
    const end = await dc.timeline();
    const last = `${end.cycle}:${end.step + 1}`;
    const goto = await dc.resumeToStop('scanback/seek', { cycle: end.cycle, step: end.step + 1 });
    assert.strictEqual(goto.body.reason, 'goto');
    assert.strictEqual(await dc.position(), last);
    // The end of a cycle: one frame, the task's last program at its END_PROGRAM line.
    const endFrames = await dc.frames(1);
    assert.strictEqual(endFrames.totalFrames, 1, 'the end of a cycle: the program frame');
    assert.match(endFrames.stackFrames[0].name, /end of cycle$/);
    const from = dc.mark();
    const stopped = await dc.resumeToStop('continue', { threadId: 1 });
    assert.strictEqual(stopped.body.reason, 'step');
    assert.strictEqual(await dc.position(), last, `continue from ${last} went back; its output: ${JSON.stringify(dc.outputsSince(from))}`);
  });

  ctx.it('continue in the faulted cell ends at the fault (reason exception, "the end of the recording was reached"); a breakpoint before it stops first', async function () {
    const { dc } = ctx;
    await replay(dc, cellTrace, { startAt: 'start' });
    const set = await dc.setBreakpointsRequest({ source: src(cell.main), breakpoints: [{ line: C.n, condition: 'n = 2' }] });
    let stopped = await dc.resumeToStop('continue', { threadId: 1 });
    assert.deepStrictEqual([stopped.body.reason, stopped.body.hitBreakpointIds], ['breakpoint', [set.body.breakpoints[0].id]]);
    assert.strictEqual(await dc.position(), '2:0');
    const from = dc.mark();
    stopped = await dc.resumeToStop('continue', { threadId: 1 });
    assert.strictEqual(stopped.body.reason, 'exception');
    assert.match(stopped.body.description, /division by zero/);
    assert.deepStrictEqual((await framesAt(dc))[0], [cell.lib, C.ratio]);
    assert.ok(dc.outputsSince(from).some((o) => o.includes('the end of the recording was reached')));
    assert.strictEqual((await dc.exceptionInfoRequest({ threadId: 1 })).body.exceptionId, 'division by zero');
    await dc.noEvent('terminated', from, 200);
    // Backwards past the breakpoint's cycle: the breakpoint again.
    stopped = await dc.resumeToStop('reverseContinue', { threadId: 1 });
    assert.deepStrictEqual([stopped.body.reason, await dc.position()], ['breakpoint', '2:0']);
  });
});
