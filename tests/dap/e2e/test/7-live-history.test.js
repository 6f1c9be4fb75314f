// Live sessions keep their history: a live `launch` (with `program`) records by default (`record`:
// a path, true: a temporary trace removed at the end unless `keepTrace`, false: no history), and
// from a live pause the reverse requests (stepBack, reverseContinue, restartFrame,
// scanback/stepBackIn, stepBackOut, seek) move into that history while the live task stays paused
// where it was. Forward moves in history replay up to the live position, then the live task takes
// the move over and executes for real. History is read-only; the live position is not.
//
// All on the plant (examples/plant with its stimulus, `realtime: false`: it runs at full speed, so
// every session is stopped by a breakpoint set before configurationDone, or by stopOnEntry).
// Global cycles: the Slow task (thread 2, Monitor) runs in cycles 11k + 1 (`Monitor.upTicks` counts
// them), the Fast task (thread 1, Line then Tank) in all the others. Positions are 'CYCLE:STEP' as
// scanback/timeline reports them; `scanback trace why` on the session's own (kept) trace is the
// oracle for where a variable was written.
'use strict';

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { ScanbackClient } = require('../lib/client');
const { plant, plantLaunch, cellLaunch, lineOf, useClient, tempDir, traceChanges } = require('../lib/fixtures');

const P = plant.programs;
const F = plant.fbs;
const src = (p) => ({ path: p });
const L = {
  lineFirst: lineOf(P, 'gAckAlarms := ackAlarms;'),
  stateCycles: lineOf(P, 'stateCycles := stateCycles + 1;'),
  motor: lineOf(P, 'motor(cmd := motorCmd, feedback := motorFb);'),
  conveyorOut: lineOf(P, 'conveyorOut := motor.out;'),
  count1: lineOf(P, 'gStations[1].count := gStations[1].count + 1;'),
  nextBottle: lineOf(P, 'nextBottle := nextBottle + 1;'),
  upTicks: lineOf(P, 'upTicks := upTicks + 1;'),
  reports: lineOf(P, 'reports := reports + 1;'),
  uptime: lineOf(P, 'uptime := uptime + T#100ms;'),
  motorEdge: lineOf(F, 'startEdge(CLK := out);'),
  motorLast: lineOf(F, 'running := out AND feedback;'),
};
const slowCycle = (k) => 11 * k + 1;   // the Slow cycle in which upTicks goes from k to k + 1

const frameAt = (f) => [f.source && f.source.path, f.line];
const framesAt = async (dc, threadId = 1) => (await dc.frames(threadId)).stackFrames.map(frameAt);
const cycleOf = (position) => Number(position.split(':')[0]);
const stepOf = (position) => Number(position.split(':')[1]);
const earlier = (a, b) => cycleOf(a) < cycleOf(b) || (cycleOf(a) === cycleOf(b) && stepOf(a) < stepOf(b));

// evaluate without a frame (instance paths such as 'Line.stateCycles', globals).
async function value(dc, expression) {
  const r = await dc.request('evaluate', { expression, context: 'watch' });
  assert.strictEqual(r.success, true, `evaluate '${expression}' failed: ${r.message}`);
  return r.body.result;
}

// The trace path the launch's console output names ("recording to PATH ...").
function recordingPath(dc) {
  const said = dc.outputsSince(0).find((o) => o.startsWith('recording to '));
  assert.ok(said, `no 'recording to' output: ${JSON.stringify(dc.outputsSince(0))}`);
  return /^recording to (\S+)/.exec(said)[1];
}

// Ends the session as a client does (disconnect) and waits for the adapter process to exit, so
// that the trace is complete (or removed) when this returns.
async function disconnect(dc) {
  const r = await dc.disconnectRequest({});
  assert.strictEqual(r.success, true);
  assert.deepStrictEqual(await dc.exit, { code: 0, signal: null });
}

// Runs `fn` with another adapter of its own (a second session in the same test, e.g. the replay of a
// live session's trace), closes it, then checks its messages as the harness checks ctx.dc's.
async function withAnotherSession(fn) {
  const dc = new ScanbackClient();
  try {
    await dc.start();
    await fn(dc);
  } finally {
    await dc.close();
  }
  assert.deepStrictEqual([...dc.schemaErrors, ...dc.requestSchemaErrors, ...dc.seqProblems()], [],
    'the other session: schema and seq problems');
}

describe('live history', function () {
  const ctx = useClient();

  ctx.it('live -> history -> live: stepBack from a live pause walks back through earlier positions, next replays the same ones up to the live position, then executes live and continue runs on live', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    const set = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.stateCycles, condition: 'stateCycles = 30' }] });
    const hit = await dc.configureToStop();
    assert.deepStrictEqual([hit.body.reason, hit.body.threadId, hit.body.hitBreakpointIds], ['breakpoint', 1, [set.body.breakpoints[0].id]]);
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
    const watched = ['Line.stateCycles', 'Line.i', 'Line.alarmTotal', 'Line.state', 'gTank.setpoint', 'Tank.totalIn', 'Monitor.upTicks'];
    const look = async () => ({
      at: await dc.position(),
      frames: (await dc.frames(1)).stackFrames.map((f) => [...frameAt(f), f.name]),
      values: await Promise.all(watched.map((e) => value(dc, e))),
    });
    const live = await look();
    assert.deepStrictEqual(live.frames, [[P, L.stateCycles, 'Line (LineControl)']]);
    assert.strictEqual(live.values[0], '30');
    const t0 = await dc.timeline();
    assert.deepStrictEqual([t0.live, t0.lastCycle, `${t0.cycle}:${t0.step}`], [true, t0.cycle, live.at], 'the history ends where the task is paused');
    // Back: the cycle under way (replayed up to the paused statement), then into the previous Fast
    // cycle, three statements deep.
    const back = [];
    let previous = live.at;
    for (let deeper = 0; deeper < 3 && back.length < 80;) {
      const stopped = await dc.resumeToStop('stepBack', { threadId: 1 });
      assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId], ['step', 1]);
      const s = await look();
      assert.ok(earlier(s.at, previous), `stepBack #${back.length + 1} went from ${previous} to ${s.at}`);
      back.push(s);
      previous = s.at;
      if (cycleOf(s.at) < cycleOf(live.at)) ++deeper;
    }
    assert.strictEqual(cycleOf(back[0].at), cycleOf(live.at), 'the first step back stays in the cycle under way');
    assert.ok(cycleOf(back[back.length - 1].at) < cycleOf(live.at), `the walk back reaches the previous cycle: ${back.map((s) => s.at).join(' ')}`);
    assert.strictEqual(back[back.length - 1].values[0], '30', 'stateCycles became 30 in the previous cycle, before its Tank part');
    // The live task did not move: the timeline still ends at the live position.
    const inHistory = await dc.timeline();
    assert.deepStrictEqual([inHistory.live, inHistory.lastCycle], [true, t0.lastCycle]);
    // Forward again by replay: the same positions, stacks and values, ending at the live position.
    for (let i = back.length - 2; i >= 0; --i) {
      const stopped = await dc.resumeToStop('next', { threadId: 1 });
      assert.strictEqual(stopped.body.reason, 'step');
      assert.deepStrictEqual(await look(), back[i], `next #${back.length - 1 - i}`);
    }
    await dc.resumeToStop('next', { threadId: 1 });
    assert.deepStrictEqual(await look(), live, 'back at the live position');
    // One more next: the live task executes the increment for real.
    const step = await dc.resumeToStop('next', { threadId: 1 });
    assert.deepStrictEqual([step.body.reason, step.body.threadId], ['step', 1]);
    const after = await dc.position();
    assert.ok(cycleOf(after) === cycleOf(live.at) && stepOf(after) > stepOf(live.at), `${after} after ${live.at}`);
    assert.strictEqual(await value(dc, 'Line.stateCycles'), '31');
    const t1 = await dc.timeline();
    assert.deepStrictEqual([t1.live, `${t1.cycle}:${t1.step}`, t1.lastCycle], [true, after, cycleOf(after)], 'the history grew with the live step');
    // And continue with a later breakpoint: reached live.
    const later = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.stateCycles, condition: 'stateCycles = 60' }] });
    const again = await dc.resumeToStop('continue', { threadId: 1 });
    assert.deepStrictEqual([again.body.reason, again.body.hitBreakpointIds], ['breakpoint', [later.body.breakpoints[0].id]]);
    assert.strictEqual(await value(dc, 'Line.stateCycles'), '60');
    const t2 = await dc.timeline();
    assert.ok(t2.cycle > cycleOf(after), `cycle ${t2.cycle} after ${after}`);
    assert.deepStrictEqual([t2.live, t2.lastCycle], [true, t2.cycle]);
  });

  ctx.it('reverseContinue from a live pause finds the earlier hits (condition; a hitCondition counted from where it was set); continue replays them up to the live one, then finds new ones live; logpoints print going forward only', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    const cond = 'upTicks MOD 10 = 3';
    let set = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [
      { line: L.upTicks, condition: cond }, { line: L.reports, logMessage: 'reports={reports} up={upTicks}' }] });
    let id = set.body.breakpoints[0].id;
    // The logpoint's output in the Slow cycles from the one with upTicks = a to the one before b
    // (in the cycle in which upTicks goes from k to k + 1, reports is k).
    const logs = (a, b) => Array.from({ length: b - a }, (_, j) => `reports=${a + j} up=${a + j + 1}\n`);
    // A move to the next hit: the stop, checked, after the logpoint output of the cycles passed.
    const move = async (command, upTicks, printed, what) => {
      const from = dc.mark();
      const stopped = command === 'configurationDone' ? await dc.configureToStop() : await dc.resumeToStop(command, { threadId: 2 });
      assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId, stopped.body.hitBreakpointIds], ['breakpoint', 2, [id]], what);
      assert.strictEqual(await value(dc, 'Monitor.upTicks'), String(upTicks), what);
      const out = dc.eventsSince('output', from).filter((o) => o.body.output.startsWith('reports='));
      assert.deepStrictEqual(out.map((o) => o.body.output), printed, `${what}: logpoint output`);
      assert.ok(out.every((o) => o.__index < stopped.__index), `${what}: logpoint output before the stop`);
      return dc.position();
    };
    // Live: the hits at upTicks 3, 13, 23, where they are.
    const liveHits = {};
    liveHits[3] = await move('configurationDone', 3, logs(0, 3), 'live to 3');
    liveHits[13] = await move('continue', 13, logs(3, 13), 'live to 13');
    liveHits[23] = await move('continue', 23, logs(13, 23), 'live to 23');
    for (const k of [3, 13, 23]) assert.strictEqual(cycleOf(liveHits[k]), slowCycle(k));
    // Backwards: the same two earlier hits, at the same positions, printing nothing; then the start
    // of the recording.
    for (const upTicks of [13, 3]) {
      assert.strictEqual(await move('reverseContinue', upTicks, [], `back to ${upTicks}`), liveHits[upTicks]);
      assert.deepStrictEqual(await framesAt(dc, 2), [[P, L.upTicks]]);
    }
    let from = dc.mark();
    let stopped = await dc.resumeToStop('reverseContinue', { threadId: 2 });
    assert.strictEqual(stopped.body.reason, 'step');
    assert.strictEqual(await dc.position(), '0:0');
    assert.ok(dc.outputsSince(from).some((o) => o.includes('the start of the recording was reached')), JSON.stringify(dc.outputsSince(from)));
    assert.deepStrictEqual(dc.outputsSince(from).filter((o) => o.startsWith('reports=')), []);
    // Forward: by replay to 3, 13, and 23 (the live position, reported there as the hit it is),
    // the logpoint printing again what it printed live.
    assert.strictEqual(await move('continue', 3, logs(0, 3), 'forward to 3'), liveHits[3]);
    assert.strictEqual(await move('continue', 13, logs(3, 13), 'forward to 13'), liveHits[13]);
    assert.strictEqual(await move('continue', 23, logs(13, 23), 'forward to 23'), liveHits[23]);
    assert.strictEqual((await dc.timeline()).lastCycle, slowCycle(23), 'nothing ran live meanwhile');
    // One more: a new hit, live.
    const p33 = await move('continue', 33, logs(23, 33), 'live to 33');
    assert.strictEqual(cycleOf(p33), slowCycle(33));
    assert.strictEqual((await dc.timeline()).lastCycle, slowCycle(33));
    // hitCondition '=2' set at the live pause (33): its hits count from there, in history as live
    // (docs/dap.md), so that one pass through time meets its second hit once. None before is
    // numbered: reverseContinue goes to the start of the recording.
    set = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.upTicks, condition: cond, hitCondition: '=2' }] });
    id = set.body.breakpoints[0].id;
    from = dc.mark();
    stopped = await dc.resumeToStop('reverseContinue', { threadId: 2 });
    assert.strictEqual(stopped.body.reason, 'step');
    assert.strictEqual(await dc.position(), '0:0');
    // From history, through the live position (its hit, 33, is not counted: it was there when the
    // breakpoint was set), on live to the second hit after it, 53; no stop on the way.
    from = dc.mark();
    await move('continue', 53, [], 'through the live position to the second hit after it');
    assert.strictEqual(dc.eventsSince('stopped', from).length, 1, 'no stop at the live position on the way');
    const t53 = await dc.timeline();
    assert.deepStrictEqual([t53.cycle, t53.lastCycle], [slowCycle(53), slowCycle(53)]);
  });

  ctx.it('a data breakpoint (write) set at a live pause: reverseContinue stops right after the last writes, as `trace why` saw them; continue replays them, then the live task makes the next one', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch({ keepTrace: true }));
    const trace = recordingPath(dc);
    try {
      assert.ok(!dc.outputsSince(0).some((o) => o.includes('removed at the end')), 'keepTrace: the trace stays');
      // Live to upTicks = 40 (Slow cycle 441): the filler has written gStations[1].count four times.
      await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.upTicks, condition: 'upTicks = 40' }] });
      await dc.configureToStop();
      const live = await dc.position();
      const info = (await dc.dataBreakpointInfoRequest({ name: 'gStations[1].count' })).body;
      assert.strictEqual(typeof info.dataId, 'string', JSON.stringify(info));
      const set = await dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: info.dataId, accessType: 'write' }] });
      assert.deepStrictEqual(set.body.breakpoints.map((b) => b.verified), [true]);
      const id = set.body.breakpoints[0].id;
      await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
      const seen = [];
      const check = async (stopped, what) => {
        assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId, stopped.body.hitBreakpointIds], ['data breakpoint', 1, [id]], what);
        assert.deepStrictEqual(await framesAt(dc), [[P, L.nextBottle]], `${what}: right after the write`);
        const s = { at: await dc.position(), to: await value(dc, 'gStations[1].count'), what };
        seen.push(s);
        return s;
      };
      const last = await check(await dc.resumeToStop('reverseContinue', { threadId: 1 }), 'back 1');
      assert.ok(earlier(last.at, live));
      // The statement before it wrote the value: before it, one less.
      await dc.resumeToStop('stepBack', { threadId: 1 });
      assert.deepStrictEqual(await framesAt(dc), [[P, L.count1]]);
      assert.strictEqual(await value(dc, 'gStations[1].count'), String(Number(last.to) - 1));
      const before = await check(await dc.resumeToStop('reverseContinue', { threadId: 1 }), 'back 2');
      assert.strictEqual(Number(before.to), Number(last.to) - 1);
      // Forward: the last write again (replay), then the live position comes before the next write
      // and the live task makes it.
      const again = await check(await dc.resumeToStop('continue', { threadId: 1 }), 'forward 1');
      assert.deepStrictEqual([again.at, again.to], [last.at, last.to]);
      const next = await check(await dc.resumeToStop('continue', { threadId: 1 }), 'forward, live');
      assert.ok(earlier(live, next.at), `the live write at ${next.at} comes after the live pause at ${live}`);
      assert.strictEqual(Number(next.to), Number(last.to) + 1);
      const t = await dc.timeline();
      assert.deepStrictEqual([t.lastCycle, `${t.cycle}:${t.step}`], [cycleOf(next.at), next.at], 'stopped live');
      // On to a later pause, so that the trace holds the cycle of the live write whole.
      await dc.setDataBreakpointsRequest({ breakpoints: [] });
      await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.upTicks, condition: 'upTicks = 50' }] });
      await dc.resumeToStop('continue', { threadId: 1 });
      assert.strictEqual(await value(dc, 'gStations[1].count'), next.to);
      await disconnect(dc);
      // The oracle: the session's own trace, read by `scanback trace why`.
      const changes = traceChanges(trace, 'gStations[1].count');   // newest first
      const byTo = Object.fromEntries(changes.map((c) => [c.to, c]));
      for (const s of seen) {
        const c = byTo[s.to];
        assert.ok(c, `${s.what}: trace why saw no write of ${s.to}: ${JSON.stringify(changes)}`);
        assert.deepStrictEqual([s.at, c.where], [`${c.cycle}:${c.step}`, `${P}:${L.count1}`], s.what);
      }
      assert.strictEqual(changes[0].to, next.to, 'the live write was the last one recorded');
      assert.strictEqual(changes.filter((c) => earlier(`${c.cycle}:${c.step}`, live)).length, Number(last.to), 'every write before the pause');
    } finally {
      fs.rmSync(trace, { force: true });
      fs.rmSync(`${trace}.partial`, { force: true });
    }
  });

  ctx.it('a data breakpoint set while paused live at the writing statement stops right after it runs, live and again by replay (the hit at the live position reported there)', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.count1 }] });
    await dc.configureToStop();
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
    const atWrite = await dc.position();
    assert.strictEqual(await value(dc, 'gStations[1].count'), '0');
    const info = (await dc.dataBreakpointInfoRequest({ name: 'gStations[1].count' })).body;
    const id = (await dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: info.dataId, accessType: 'write' }] })).body.breakpoints[0].id;
    const write = async (command, count, what) => {
      const stopped = await dc.resumeToStop(command, { threadId: 1 });
      assert.deepStrictEqual([stopped.body.reason, stopped.body.hitBreakpointIds], ['data breakpoint', [id]], what);
      assert.deepStrictEqual(await framesAt(dc), [[P, L.nextBottle]], what);
      assert.strictEqual(await value(dc, 'gStations[1].count'), String(count), what);
      return dc.position();
    };
    // Live: the statement about to run is the write.
    const first = await write('continue', 1, 'live, the statement about to run');
    assert.strictEqual(first, `${cycleOf(atWrite)}:${stepOf(atWrite) + 1}`);
    // Back before it (history), and forward again: the same hit, at the live position.
    await dc.resumeToStop('stepBack', { threadId: 1 });
    assert.strictEqual(await dc.position(), atWrite);
    assert.strictEqual(await write('continue', 1, 'by replay, to the live position'), first);
    // And on live: the next bottle.
    const second = await write('continue', 2, 'live, the next write');
    assert.ok(cycleOf(second) > cycleOf(first));
    assert.strictEqual((await dc.timeline()).lastCycle, cycleOf(second));
  });

  ctx.it('a step begun in history that ends past the live position is finished by the live task: next over the call the task is paused in, stepOut of its frame', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    // Live, into MotorCtl: paused at its third statement.
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.motor, condition: 'stateCycles = 30' }] });
    await dc.configureToStop();
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
    const call = await dc.position();
    await dc.resumeToStop('stepIn', { threadId: 1 });
    await dc.resumeToStop('next', { threadId: 1 });
    await dc.resumeToStop('next', { threadId: 1 });
    const inside = await framesAt(dc);
    assert.deepStrictEqual(inside.slice(1), [[P, L.motor]]);
    assert.ok(inside[0][1] > L.motorEdge, JSON.stringify(inside));
    const live = await dc.position();
    // Out into history, to the call; next over it: replayed up to the live position, then executed.
    await dc.resumeToStop('scanback/stepBackOut', { threadId: 1 });
    assert.strictEqual(await dc.position(), call);
    let stopped = await dc.resumeToStop('next', { threadId: 1 });
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId], ['step', 1]);
    assert.deepStrictEqual(await framesAt(dc), [[P, L.conveyorOut]]);
    const over = await dc.position();
    assert.ok(cycleOf(over) === cycleOf(call) && earlier(live, over), `${over} after ${live}`);
    let t = await dc.timeline();
    assert.deepStrictEqual([t.lastCycle, `${t.cycle}:${t.step}`], [cycleOf(over), over], 'executed live');
    // The next cycle: paused live in MotorCtl after its second statement; one back, then stepOut.
    await dc.setBreakpointsRequest({ source: src(F), breakpoints: [{ line: L.motorEdge }] });
    await dc.resumeToStop('continue', { threadId: 1 });
    await dc.setBreakpointsRequest({ source: src(F), breakpoints: [] });
    await dc.resumeToStop('next', { threadId: 1 });
    const live2 = await dc.position();
    await dc.resumeToStop('stepBack', { threadId: 1 });
    assert.deepStrictEqual(await framesAt(dc), [[F, L.motorEdge], [P, L.motor]]);
    stopped = await dc.resumeToStop('stepOut', { threadId: 1 });
    assert.strictEqual(stopped.body.reason, 'step');
    assert.deepStrictEqual(await framesAt(dc), [[P, L.conveyorOut]]);
    const out = await dc.position();
    assert.ok(cycleOf(out) === cycleOf(live2) && earlier(live2, out), `${out} after ${live2}`);
    t = await dc.timeline();
    assert.deepStrictEqual([t.lastCycle, `${t.cycle}:${t.step}`], [cycleOf(out), out], 'executed live');
  });

  ctx.it("record: false keeps no history: a capabilities event turns stepBack off, no 'recording to' output, reverse requests fail with \"no history\"", async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch({ record: false, stopOnEntry: true }));
    const caps = dc.eventsSince('capabilities');
    assert.strictEqual(caps.length, 1);
    assert.strictEqual(caps[0].body.capabilities.supportsStepBack, false);
    assert.ok(caps[0].__index < dc.indexOfEvent('initialized'), 'before initialized');
    assert.ok(!dc.outputsSince(0).some((o) => o.startsWith('recording to')), JSON.stringify(dc.outputsSince(0)));
    const entry = await dc.configureToStop();
    assert.strictEqual(entry.body.reason, 'entry');
    await dc.resumeToStop('next', { threadId: 1 });
    const top = await dc.topFrame(1);
    const from = dc.mark();
    for (const [command, args] of [
      ['stepBack', { threadId: 1 }], ['reverseContinue', { threadId: 1 }],
      ['scanback/stepBackIn', { threadId: 1 }], ['scanback/stepBackOut', { threadId: 1 }],
      ['scanback/seek', { cycle: 0 }], ['restartFrame', { frameId: top.id }]]) {
      const r = await dc.fails(command, args);
      assert.match(r.message, /no history/, `${command}: ${r.message}`);
    }
    await dc.noEvent('stopped', from, 100);
    // Still paused where it was; forward moves work.
    assert.deepStrictEqual(frameAt(await dc.topFrame(1)), [P, L.lineFirst + 1]);
    await dc.resumeToStop('next', { threadId: 1 });
  });

  ctx.it("record: a path relative to cwd: the session's trace is complete after disconnect and a replay session opens it, ending at the last cycle that ran", async function () {
    const { dc } = ctx;
    const dir = tempDir('live-record');
    try {
      const trace = path.join(dir, 'x.trace');
      await dc.startSession(plantLaunch({ record: 'x.trace', cwd: dir, cycles: 300 }));
      assert.deepStrictEqual(dc.eventsSince('capabilities'), []);
      assert.strictEqual(recordingPath(dc), trace);
      assert.ok(!dc.outputsSince(0).some((o) => o.includes('removed at the end')), 'a named trace is kept');
      // Paused once on the way (upTicks = 20, Slow cycle 221), then on to the end of its 300 cycles.
      await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.upTicks, condition: 'upTicks = 20' }] });
      await dc.configureToStop();
      assert.strictEqual((await dc.timeline()).lastCycle, slowCycle(20));
      await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
      const from = dc.mark();
      await dc.continueRequest({ threadId: 2 });
      const exited = await dc.event('exited', from);
      assert.strictEqual(exited.body.exitCode, 0);
      await disconnect(dc);
      assert.deepStrictEqual(fs.readdirSync(dir), ['x.trace'], 'the trace, and nothing else left behind');
      // A replay of it: cycles 0 to 299, ending where the program did.
      await withAnotherSession(async (replay) => {
        await replay.startSession({ trace: 'x.trace', cwd: dir });
        await replay.configureToStop();
        const t = await replay.timeline();
        assert.deepStrictEqual([t.live, t.firstCycle, t.lastCycle, t.cycle], [false, 0, 299, 299]);
        // The recorded run is the one that ran: upTicks = 20 in Slow cycle 221.
        await replay.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.upTicks, condition: 'upTicks = 20' }] });
        await replay.resumeToStop('reverseContinue', { threadId: 2 });
        assert.strictEqual(cycleOf(await replay.position()), slowCycle(20));
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  // A trace holds whole cycles plus, when the session ends with the task paused inside one, that
  // cycle up to the paused statement (an OpenCycle block): a replay of the kept trace ends exactly
  // where the live session was, as a trace that ends in a fault ends at the faulting statement.
  ctx.it('the trace of a live session that ends while paused inside a cycle keeps that cycle up to the paused statement, as the session\'s history had it (as it keeps a faulted cycle)', async function () {
    const { dc } = ctx;
    const dir = tempDir('live-partial');
    try {
      // The cell, stopped live at its fault (cycle 3) and disconnected: its trace ends at the fault.
      let liveEnd;
      await withAnotherSession(async (cellLive) => {
        await cellLive.startSession(cellLaunch({ record: 'cell.trace', cwd: dir }));
        const fault = await cellLive.configureToStop();
        assert.strictEqual(fault.body.reason, 'exception');
        const t = await cellLive.timeline();
        liveEnd = [t.lastCycle, `${t.cycle}:${t.step}`];
        await disconnect(cellLive);
      });
      await withAnotherSession(async (replay) => {
        await replay.startSession({ trace: path.join(dir, 'cell.trace') });
        assert.strictEqual((await replay.configureToStop()).body.reason, 'exception');
        const t = await replay.timeline();
        assert.deepStrictEqual([t.lastCycle, `${t.cycle}:${t.step}`], liveEnd, 'the faulted cycle, up to the fault');
      });
      // The plant, paused live inside Slow cycle 221 and disconnected.
      await dc.startSession(plantLaunch({ record: 'p.trace', cwd: dir }));
      await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.upTicks, condition: 'upTicks = 20' }] });
      await dc.configureToStop();
      const t = await dc.timeline();
      assert.ok(t.step > 0, 'inside the cycle');
      const live = [t.lastCycle, `${t.cycle}:${t.step}`];
      assert.deepStrictEqual(live, [slowCycle(20), `${slowCycle(20)}:${t.step}`]);
      await disconnect(dc);
      await withAnotherSession(async (replay) => {
        await replay.startSession({ trace: path.join(dir, 'p.trace') });
        await replay.configureToStop();
        const r = await replay.timeline();
        assert.deepStrictEqual([r.lastCycle, `${r.cycle}:${r.step}`], live,
          'the replay of the kept trace ends where the live session was paused (the history it had)');
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  ctx.it('history is read-only: setVariable, setExpression and stReload fail with "history" after a step back, and work again once forward moves reach the live position', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.upTicks, condition: 'upTicks = 5' }] });
    await dc.configureToStop();
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
    const live = await dc.position();
    await dc.resumeToStop('stepBack', { threadId: 2 });
    assert.deepStrictEqual(await framesAt(dc, 2), [[P, L.uptime]]);
    let top = await dc.topFrame(2);
    let locals = (await dc.scopes(top.id)).byName.Instance.variablesReference;
    const from = dc.mark();
    const failures = [
      await dc.fails('setVariable', { variablesReference: locals, name: 'upTicks', value: '100' }),
      await dc.fails('setExpression', { expression: 'upTicks', value: '100', frameId: top.id }),
      await dc.fails('setExpression', { expression: 'Line.batchSize', value: '9' }),
      await dc.fails('stReload', {}),
    ];
    for (const f of failures) assert.match(f.message, /history/, `${f.command}: ${f.message}`);
    assert.deepStrictEqual(dc.eventsSince('stopped', from), []);
    assert.deepStrictEqual(dc.outputsSince(from).filter((o) => /next cycle|reloaded/.test(o)), []);
    assert.strictEqual(await value(dc, 'Monitor.upTicks'), '5');
    // Forward to the live position: writable again.
    await dc.resumeToStop('next', { threadId: 2 });
    assert.strictEqual(await dc.position(), live);
    top = await dc.topFrame(2);
    locals = (await dc.scopes(top.id)).byName.Instance.variablesReference;
    const write = await dc.ok('setVariable', { variablesReference: locals, name: 'upTicks', value: '100' });
    assert.strictEqual(write.body.value, '100');
    assert.strictEqual((await dc.ok('setExpression', { expression: 'Line.batchSize', value: '9', frameId: top.id })).body.value, '9');
    // The writes apply at once, at the paused statement (upTicks := upTicks + 1): this cycle makes
    // it 101, and the next Slow cycle begins with upTicks = 101.
    const set = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.upTicks }] });
    const stopped = await dc.resumeToStop('continue', { threadId: 2 });
    assert.deepStrictEqual([stopped.body.reason, stopped.body.hitBreakpointIds], ['breakpoint', [set.body.breakpoints[0].id]]);
    assert.strictEqual(await dc.position(), `${slowCycle(6)}:${stepOf(live)}`);
    assert.strictEqual(await value(dc, 'Monitor.upTicks'), '101');
    assert.strictEqual(await value(dc, 'Line.batchSize'), '9');
    // stReload too, at the live position (the same files: nothing to change; stopped, reason pause).
    const mark = dc.mark();
    const seq = dc.post('stReload', {});
    const paused = await dc.event('stopped', mark);
    const response = dc.messages[dc.indexOfResponse(seq)];
    assert.ok(response && response.success, `stReload at the live position failed: ${response && response.message}`);
    assert.ok(response.__index < paused.__index);
    // Back in history once more: refused again.
    await dc.resumeToStop('stepBack', { threadId: 2 });
    assert.match((await dc.fails('setExpression', { expression: 'Line.batchSize', value: '4' })).message, /history/);
    assert.strictEqual(await value(dc, 'Line.batchSize'), '9');
  });

  ctx.it('the timeline of a live session says live: true and ends where the task is paused; lastCycle grows while the program runs between pauses; the temporary trace is removed at the end', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch({ stopOnEntry: true }));
    const trace = recordingPath(dc);
    assert.ok(dc.outputsSince(0).some((o) => o.startsWith(`recording to ${trace}`) && o.includes('removed at the end')));
    assert.deepStrictEqual(dc.eventsSince('capabilities'), [], 'recording: no capabilities event');
    const caps = dc.messages.find((m) => m.type === 'response' && m.command === 'initialize').body;
    assert.strictEqual(caps.supportsStepBack, true);
    await dc.configureToStop();
    let t = await dc.timeline();
    assert.deepStrictEqual(
      [t.live, t.firstCycle, t.lastCycle, t.cycle, t.step, t.gaps, t.tasks.map((k) => [k.threadId, k.name])],
      [true, 0, 0, 0, 0, [], [[1, 'Fast'], [2, 'Slow']]]);
    const ends = [t.lastCycle];
    for (let i = 0; i < 2; ++i) {
      await dc.ok('continue', { threadId: 1 });
      await new Promise((r) => setTimeout(r, 30));
      const stopped = await dc.resumeToStop('pause', { threadId: 1 });
      assert.strictEqual(stopped.body.reason, 'pause');
      t = await dc.timeline();
      assert.strictEqual(t.live, true);
      assert.ok(t.lastCycle > ends[ends.length - 1], `lastCycle ${t.lastCycle} after ${ends.join(', ')}`);
      assert.strictEqual(t.cycle, t.lastCycle, 'at the live position');
      ends.push(t.lastCycle);
    }
    // Into history: the position moves, the end stays where the task is paused.
    const stopped = await dc.resumeToStop('scanback/seek', { cycle: 5 });
    assert.strictEqual(stopped.body.reason, 'goto');
    t = await dc.timeline();
    assert.deepStrictEqual([t.live, t.cycle, t.step, t.lastCycle], [true, 5, 0, ends[2]]);
    await disconnect(dc);
    assert.ok(!fs.existsSync(trace) && !fs.existsSync(`${trace}.partial`), `the temporary trace ${trace} is still there`);
  });

  ctx.it('restartFrame, scanback/stepBackIn, stepBackOut and seek from a live pause move into history; next comes back to the live position', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.conveyorOut, condition: 'stateCycles = 30' }] });
    await dc.configureToStop();
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
    const live = await dc.position();
    // stepBackIn: into MotorCtl, which just returned; stepBackOut: its call; next: back here.
    let stopped = await dc.resumeToStop('scanback/stepBackIn', { threadId: 1 });
    assert.strictEqual(stopped.body.reason, 'step');
    assert.deepStrictEqual(await framesAt(dc), [[F, L.motorLast], [P, L.motor]]);
    assert.strictEqual(await dc.position(), `${cycleOf(live)}:${stepOf(live) - 1}`);
    await dc.resumeToStop('scanback/stepBackOut', { threadId: 1 });
    assert.deepStrictEqual(await framesAt(dc), [[P, L.motor]]);
    await dc.resumeToStop('next', { threadId: 1 });
    assert.strictEqual(await dc.position(), live);
    // restartFrame of the program's frame: the cycle's first statement.
    const top = await dc.topFrame(1);
    stopped = await dc.resumeToStop('restartFrame', { frameId: top.id });
    assert.strictEqual(stopped.body.reason, 'restart');
    assert.strictEqual(await dc.position(), `${cycleOf(live)}:0`);
    assert.deepStrictEqual(await framesAt(dc), [[P, L.lineFirst]]);
    assert.strictEqual(await value(dc, 'Line.stateCycles'), '29');
    // seek: anywhere in history, and to the live position itself.
    stopped = await dc.resumeToStop('scanback/seek', { cycle: 2 });
    assert.strictEqual(stopped.body.reason, 'goto');
    assert.strictEqual(await dc.position(), '2:0');
    await dc.resumeToStop('scanback/seek', { cycle: cycleOf(live), step: stepOf(live) });
    assert.strictEqual(await dc.position(), live);
    assert.deepStrictEqual(await framesAt(dc), [[P, L.conveyorOut]]);
    assert.strictEqual((await dc.timeline()).lastCycle, cycleOf(live), 'the live task did not move');
    // From there, next executes live.
    await dc.resumeToStop('next', { threadId: 1 });
    assert.strictEqual(await dc.position(), `${cycleOf(live)}:${stepOf(live) + 1}`);
    assert.strictEqual((await dc.timeline()).lastCycle, cycleOf(live));
    assert.deepStrictEqual(await framesAt(dc), [[P, L.conveyorOut + 1]]);
  });
  ctx.it('nonstop: the live task is never halted; a breakpoint hit is reported from history, and the task keeps its cycle count advancing while the client steps back', async function () {
    this.timeout(20000);
    const { dc } = ctx;
    await dc.startSession(plantLaunch({ nonstop: true, realtime: true }));
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.upTicks, condition: 'upTicks = 3' }] });
    const hit = await dc.configureToStop();
    assert.deepStrictEqual([hit.body.reason, hit.body.threadId], ['breakpoint', 2]);
    assert.strictEqual(await value(dc, 'Monitor.upTicks'), '3');
    const first = await dc.timeline();
    assert.strictEqual(first.live, true);
    assert.strictEqual(first.cycle, slowCycle(3));
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
    // Step back continuously; the task scans on in real time meanwhile.
    let here = await dc.position();
    for (let i = 0; i < 30; i++) {
      const stopped = await dc.resumeToStop('stepBack', { threadId: 1 });
      assert.strictEqual(stopped.body.reason, 'step');
      const now = await dc.position();
      assert.ok(earlier(now, here), `step back ${i + 1}: ${now} is not before ${here}`);
      here = now;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const later = await dc.timeline();
    assert.ok(later.lastCycle > first.lastCycle + 10, `the recording grew: ${first.lastCycle} -> ${later.lastCycle}`);
    assert.ok(later.cycleTime.cycles > first.cycleTime.cycles, 'the live task ran cycles');
    assert.ok(later.cycleTime.p99Ns > 0 && later.cycleTime.medianNs <= later.cycleTime.p99Ns);
    // continue follows the growing recording to the next hit; pause shows the newest position.
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.upTicks, condition: 'upTicks = 8' }] });
    const next = await dc.resumeToStop('continue', { threadId: 2 });
    assert.strictEqual(next.body.reason, 'breakpoint');
    assert.strictEqual(await value(dc, 'Monitor.upTicks'), '8');
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
    await dc.request('continue', { threadId: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const from = dc.mark();
    await dc.request('pause', { threadId: 1 });
    const paused = await dc.event('stopped', from);
    assert.strictEqual(paused.body.reason, 'pause');
    assert.ok(Number(await value(dc, 'Monitor.upTicks')) >= 9, 'paused at a newer position than the hit');
    // The task is never touched: writes are refused.
    const write = await dc.request('setExpression', { expression: 'Monitor.upTicks', value: '0', frameId: (await dc.topFrame(paused.body.threadId)).id });
    assert.strictEqual(write.success, false);
  });
});
