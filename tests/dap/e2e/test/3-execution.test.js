// Running, stepping, pausing, stack traces and runtime faults, on the plant (examples/plant) and
// on tests/dap/e2e/programs/cell (Calc -> Scaler -> Ratio across main.st, fbs.st and lib.st; a
// division by zero in Ratio in its fourth cycle). Every resume checks "response before stopped".
'use strict';

const assert = require('assert');
const { plant, cell, plantLaunch, cellLaunch, lineOf, useClient } = require('../lib/fixtures');

const P = plant.programs;
const src = (p) => ({ path: p });
const L = {
  scale: lineOf(P, 'level := ScaleAnalog'),
  firstScan: lineOf(P, 'IF firstScan THEN'),
  motor: lineOf(P, 'motor(cmd := motorCmd, feedback := motorFb);'),
  stamp: lineOf(P, 'stamp := TenthsToText(upTicks);'),
  appendState: lineOf(P, "events.Append(msg := CONCAT(stamp, CONCAT(' line ', stateName)));"),
  reports: lineOf(P, 'reports := reports + 1;'),
  lineFirst: lineOf(P, 'gAckAlarms := ackAlarms;'),
  limit: lineOf(plant.fbs, 'r := LIMIT(0, raw, 27648);'),
  motorFirst: lineOf(plant.fbs, 'out := cmd AND NOT fault;'),
  append: lineOf(plant.fbs, 'FOR k := 12 TO 2 BY -1 DO'),
};
const frameAt = (f) => [f.source && f.source.path, f.line];

describe('execution', function () {
  const ctx = useClient();

  ctx.it('continue, stepIn, next and stepOut: each response comes before its stopped event; steps cross files', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.scale }] });
    await dc.configureToStop();
    // stepIn enters the function ScaleAnalog in fbs.st (resumeToStop asserts the order).
    let stopped = await dc.resumeToStop('stepIn', { threadId: 1 });
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId], ['step', 1]);
    let trace = await dc.frames(1);
    assert.deepStrictEqual(trace.stackFrames.map(frameAt), [[plant.fbs, L.limit], [P, L.scale]]);
    assert.strictEqual(trace.stackFrames[0].name, 'ScaleAnalog');
    assert.strictEqual(await dc.evaluate('raw'), '13824');
    // next: the following statement of the function, then back in the caller after the call.
    await dc.resumeToStop('next', { threadId: 1 });
    assert.deepStrictEqual(frameAt(await dc.topFrame(1)), [plant.fbs, L.limit + 1]);
    assert.strictEqual(await dc.evaluate('r'), '13824');
    await dc.resumeToStop('next', { threadId: 1 });
    trace = await dc.frames(1);
    assert.deepStrictEqual(trace.stackFrames.map(frameAt), [[P, L.firstScan]]);
    assert.strictEqual(await dc.evaluate('level'), '50');
    // stepIn on a statement without a call goes to the next statement.
    await dc.resumeToStop('stepIn', { threadId: 1 });
    assert.deepStrictEqual(frameAt(await dc.topFrame(1)), [P, L.firstScan + 1]);
    // continue: the breakpoint again, next cycle; stepIn then stepOut returns to after the call.
    stopped = await dc.resumeToStop('continue', { threadId: 1 });
    assert.strictEqual(stopped.body.reason, 'breakpoint');
    assert.deepStrictEqual(frameAt(await dc.topFrame(1)), [P, L.scale]);
    await dc.resumeToStop('stepIn', { threadId: 1 });
    assert.deepStrictEqual(frameAt(await dc.topFrame(1)), [plant.fbs, L.limit]);
    stopped = await dc.resumeToStop('stepOut', { threadId: 1 });
    assert.strictEqual(stopped.body.reason, 'step');
    trace = await dc.frames(1);
    assert.deepStrictEqual(trace.stackFrames.map(frameAt), [[P, L.firstScan]]);
    assert.strictEqual(trace.totalFrames, 1);
  });

  ctx.it('next steps over a function block call; stepIn enters it (MotorCtl in fbs.st); stepOut comes back', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.motor }] });
    await dc.configureToStop();
    await dc.resumeToStop('next', { threadId: 1 });
    assert.deepStrictEqual(frameAt(await dc.topFrame(1)), [P, L.motor + 1]);
    await dc.resumeToStop('continue', { threadId: 1 });
    await dc.resumeToStop('stepIn', { threadId: 1 });
    const trace = await dc.frames(1);
    assert.deepStrictEqual(trace.stackFrames.map(frameAt), [[plant.fbs, L.motorFirst], [P, L.motor]]);
    assert.deepStrictEqual(trace.stackFrames.map((f) => f.name), ['Line.motor (MotorCtl)', 'Line (LineControl)']);
    assert.strictEqual(await dc.evaluate('timeout'), 'T#500ms');
    await dc.resumeToStop('stepOut', { threadId: 1 });
    assert.deepStrictEqual((await dc.frames(1)).stackFrames.map(frameAt), [[P, L.motor + 1]]);
  });

  ctx.it('a step at the end of a cycle goes on to the next cycle of the same task; other tasks run meanwhile', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.reports }] });
    const stopped = await dc.configureToStop();
    assert.strictEqual(stopped.body.threadId, 2);   // Slow, global cycle 1
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
    const step = await dc.resumeToStop('next', { threadId: 2 });
    assert.deepStrictEqual([step.body.reason, step.body.threadId], ['step', 2]);
    assert.deepStrictEqual(frameAt(await dc.topFrame(2)), [P, L.stamp]);
    assert.strictEqual(await dc.evaluate('upTicks'), '1');
    // Fast ran its cycles 2..11 in between (the setpoint ramps 0.05 per Fast cycle from 50).
    assert.ok(Math.abs(Number(await dc.evaluate('gTank.setpoint')) - 50.55) < 1e-4);
    assert.strictEqual((await dc.frames(1)).totalFrames, 0, 'Fast is between cycles');
    // Stepping the other thread: its next statement, in its next cycle.
    const other = await dc.resumeToStop('next', { threadId: 1 });
    assert.deepStrictEqual([other.body.reason, other.body.threadId], ['step', 1]);
    assert.deepStrictEqual(frameAt(await dc.topFrame(1)), [P, L.lineFirst]);
    assert.strictEqual((await dc.frames(2)).totalFrames, 0, 'Slow is between cycles');
  });

  ctx.it('pause while running: the response, then stopped (reason pause) in the named task; pause while paused: no event', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch({ realtime: true }));   // paced: 10 ms / 100 ms cycles
    await dc.configurationDoneRequest();
    await new Promise((r) => setTimeout(r, 120));
    let stopped = await dc.resumeToStop('pause', { threadId: 2 });
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId, stopped.body.allThreadsStopped], ['pause', 2, true]);
    // At the next statement of the Slow task: almost always the first of its next cycle (Slow
    // runs for microseconds every 100 ms), in any case one of Monitor's.
    const slow = await dc.frames(2);
    assert.ok(slow.totalFrames >= 1);
    assert.strictEqual(slow.stackFrames[slow.totalFrames - 1].name, 'Monitor (Supervisor)');
    if (slow.totalFrames === 1) assert.ok(slow.stackFrames[0].line >= L.stamp && slow.stackFrames[0].line <= L.reports);
    assert.strictEqual((await dc.frames(1)).totalFrames, 0);
    // Already paused: success and no event.
    const from = dc.mark();
    assert.strictEqual((await dc.pauseRequest({ threadId: 1 })).success, true);
    await dc.noEvent('stopped', from, 300);
    // Resume, then pause the Fast task.
    await dc.continueRequest({ threadId: 1 });
    await new Promise((r) => setTimeout(r, 50));
    stopped = await dc.resumeToStop('pause', { threadId: 1 });
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId], ['pause', 1]);
    const fast = await dc.frames(1);
    assert.ok(fast.totalFrames >= 1);
    assert.ok([P, plant.fbs].includes(fast.stackFrames[0].source.path));
    assert.match(fast.stackFrames[fast.totalFrames - 1].name, /^(Line \(LineControl\)|Tank \(TankControl\))$/);
    assert.strictEqual((await dc.frames(2)).totalFrames, 0);
    // A pause for a task that does not exist is an error.
    await dc.fails('pause', { threadId: 9 });
  });

  ctx.it('stackTrace across files: a method in fbs.st called from programs.st; startFrame, levels, totalFrames', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    // EventLog.Append: first called by the Slow cycle that sees the line Starting (global cycle 12).
    await dc.setBreakpointsRequest({ source: src(plant.fbs), breakpoints: [{ line: L.append }] });
    const stopped = await dc.configureToStop();
    assert.strictEqual(stopped.body.threadId, 2);
    const all = await dc.frames(2);
    assert.strictEqual(all.totalFrames, 2);
    assert.deepStrictEqual(all.stackFrames.map(frameAt), [[plant.fbs, L.append], [P, L.appendState]]);
    assert.deepStrictEqual(all.stackFrames.map((f) => f.name), ['Monitor.events (EventLog.Append)', 'Monitor (Supervisor)']);
    assert.deepStrictEqual(all.stackFrames.map((f) => f.source.name), ['fbs.st', 'programs.st']);
    // Each frame evaluates in its own scope.
    assert.strictEqual(await dc.evaluate('msg', all.stackFrames[0].id), "'0.1s line START'");
    assert.strictEqual(await dc.evaluate('stateName', all.stackFrames[1].id), "'START'");
    const caller = await dc.frames(2, { startFrame: 1, levels: 1 });
    assert.deepStrictEqual(caller.stackFrames, [all.stackFrames[1]]);
    assert.strictEqual(caller.totalFrames, 2);
    const top = await dc.frames(2, { levels: 1 });
    assert.deepStrictEqual(top.stackFrames, [all.stackFrames[0]]);
    const past = await dc.frames(2, { startFrame: 5 });
    assert.deepStrictEqual([past.stackFrames, past.totalFrames], [[], 2]);
  });

  ctx.it('stackTrace of three calls in three files (cell); frames have their own scopes', async function () {
    const { dc } = ctx;
    await dc.startSession(cellLaunch());
    await dc.setBreakpointsRequest({ source: src(cell.lib), breakpoints: [{ line: lineOf(cell.lib, 'Ratio := num / den;') }] });
    await dc.configureToStop();
    const all = await dc.frames(1);
    assert.strictEqual(all.totalFrames, 3);
    assert.deepStrictEqual(all.stackFrames.map(frameAt), [
      [cell.lib, lineOf(cell.lib, 'Ratio := num / den;')],
      [cell.fbs, lineOf(cell.fbs, 'scaled := Ratio(')],
      [cell.main, lineOf(cell.main, 'scale(value := n);')]]);
    assert.deepStrictEqual(all.stackFrames.map((f) => f.name), ['Ratio', 'Calc.scale (Scaler)', 'Calc (Calculator)']);
    assert.strictEqual(new Set(all.stackFrames.map((f) => f.id)).size, 3);
    const middle = await dc.frames(1, { startFrame: 1, levels: 1 });
    assert.deepStrictEqual([middle.stackFrames, middle.totalFrames], [[all.stackFrames[1]], 3]);
    const two = await dc.frames(1, { levels: 2 });
    assert.deepStrictEqual(two.stackFrames, all.stackFrames.slice(0, 2));
    // A function frame has no Instance scope; the FB and the program frames have one.
    const names = async (id) => (await dc.scopes(id)).list.map((s) => s.name);
    assert.deepStrictEqual(await names(all.stackFrames[0].id), ['Locals', 'Globals', 'Retain', 'I/O']);
    assert.ok((await names(all.stackFrames[1].id)).includes('Instance'));
    assert.strictEqual(await dc.evaluate('num', all.stackFrames[0].id), '10');
    assert.strictEqual(await dc.evaluate('calls', all.stackFrames[1].id), '1');
    assert.strictEqual(await dc.evaluate('n', all.stackFrames[2].id), '1');
    await dc.fails('scopes', { frameId: 9 });
  });

  ctx.it('a runtime fault stops with reason exception; exceptionInfo describes it; continue: exited (3), then terminated', async function () {
    const { dc } = ctx;
    await dc.startSession(cellLaunch());
    const stopped = await dc.configureToStop();
    const faultLine = lineOf(cell.lib, 'Ratio := num / den;');
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId], ['exception', 1]);
    assert.ok(stopped.body.description.includes(`${cell.lib}:${faultLine}:1`), stopped.body.description);
    assert.match(stopped.body.description, /division by zero/);
    const trace = await dc.frames(1);
    assert.deepStrictEqual(trace.stackFrames.map(frameAt), [
      [cell.lib, faultLine], [cell.fbs, lineOf(cell.fbs, 'scaled := Ratio(')], [cell.main, lineOf(cell.main, 'scale(value := n);')]]);
    const info = (await dc.exceptionInfoRequest({ threadId: 1 })).body;
    assert.strictEqual(info.exceptionId, 'division by zero');
    assert.strictEqual(info.breakMode, 'always');
    assert.ok(info.description.includes(`${cell.lib}:${faultLine}`), info.description);
    assert.strictEqual(info.details.typeName, 'division by zero');
    // The fourth cycle: n = 4 = gLimit, so den = 0.
    assert.strictEqual(await dc.evaluate('den'), '0');
    assert.strictEqual(await dc.evaluate('n', 3), '4');
    assert.strictEqual(await dc.evaluate('gHistory[3]'), '30');
    // Continuing past the fault ends the program.
    const from = dc.mark();
    const seq = dc.post('continue', { threadId: 1 });
    const terminated = await dc.event('terminated', from);
    const exited = await dc.event('exited', from);
    assert.strictEqual(exited.body.exitCode, 3);
    const response = dc.indexOfResponse(seq);
    assert.ok(response >= 0 && response < exited.__index, 'continue response, then exited');
    assert.ok(exited.__index < terminated.__index, 'exited, then terminated');
    const fault = dc.eventsSince('output', from).find((o) => o.body.category === 'stderr');
    assert.ok(fault && fault.body.output.includes('division by zero'), 'the fault is reported on stderr');
    assert.deepStrictEqual(dc.eventsSince('stopped', from), []);
    assert.match((await dc.fails('stackTrace', { threadId: 1 })).message, /ended/);
  });

  ctx.it('with the exception filter off, a fault ends the program without stopping', async function () {
    const { dc } = ctx;
    await dc.startSession(cellLaunch());
    await dc.setExceptionBreakpointsRequest({ filters: [] });
    await dc.configurationDoneRequest();
    const terminated = await dc.event('terminated');
    const exited = await dc.event('exited');
    assert.strictEqual(exited.body.exitCode, 3);
    assert.ok(exited.__index < terminated.__index);
    assert.deepStrictEqual(dc.eventsSince('stopped'), []);
  });

  // A resume (continue/next/stepIn/stepOut) handled between the moment the target's thread reports
  // a stop and the moment it waits again must not be lost (it once was: the program silently
  // stopped running, no stopped/exited/terminated followed and pause no longer stopped it). A
  // client that answers each stop at once, from the stopped event handler, hit it within a few
  // hundred stops on a loaded machine.
  ctx.it('a resume that arrives the moment a stop is reported is never lost (1500 stops, each answered at once)', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.scale }] });
    const wanted = 1500;
    let stops = 0;
    dc.on('stopped', () => { if (++stops < wanted) dc.post('continue', { threadId: 1 }); });
    await dc.configurationDoneRequest();
    let last = -1;
    while (stops < wanted && stops !== last) {
      last = stops;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.strictEqual(stops, wanted, `the program stopped running after ${stops} stops`);
  });

  ctx.it('exceptionInfo when not stopped at a fault, and resuming a thread that does not exist, are errors', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch({ stopOnEntry: true }));
    await dc.configureToStop();
    assert.match((await dc.fails('exceptionInfo', { threadId: 1 })).message, /not stopped at a fault/);
    assert.match((await dc.fails('next', { threadId: 7 })).message, /no thread with id 7/);
    assert.match((await dc.fails('stackTrace', { threadId: 7 })).message, /no thread with id 7/);
    // Still paused where it was.
    assert.strictEqual((await dc.topFrame(1)).line, L.lineFirst);
  });
});
