// Breakpoints on the bottling plant (examples/plant): when they apply, where they land,
// conditions, hit conditions, logpoints, clearing, data breakpoints, 0-based lines.
//
// Global cycles of the plant: 0 = Fast@0ms, 1 = Slow@0ms, 2..10 = Fast@10..90ms, 11 = Fast@100ms,
// 12 = Slow@100ms, ... The Slow task (thread 2, program Monitor : Supervisor) runs in cycles
// 1, 12, 23, 34, 45, 56, ...; `upTicks` counts its cycles.
'use strict';

const assert = require('assert');
const { plant, plantLaunch, lineOf, firstColumn, useClient } = require('../lib/fixtures');

const P = plant.programs;
const src = (p) => ({ path: p });
const L = {
  lineFirst: lineOf(P, 'gAckAlarms := ackAlarms;'),
  scale: lineOf(P, 'level := ScaleAnalog'),
  stamp: lineOf(P, 'stamp := TenthsToText(upTicks);'),
  uptime: lineOf(P, 'uptime := uptime + T#100ms;'),
  upTicks: lineOf(P, 'upTicks := upTicks + 1;'),
  availability: lineOf(P, 'availability := DINT_TO_REAL'),
  histIdx: lineOf(P, 'histIdx := (histIdx + 1) MOD 10;'),
  idleName: lineOf(P, "Idle: stateName := 'IDLE';"),
  reports: lineOf(P, 'reports := reports + 1;'),
  setpoint: lineOf(P, 'gTank.setpoint := spRamp;'),
};

describe('breakpoints', function () {
  const ctx = useClient();

  ctx.it('breakpoints set before configurationDone apply from the first statement of cycle 0 (DebugClient.hitBreakpoint)', async function () {
    const { dc } = ctx;
    // The library's own scenario: initialize + launch, setBreakpoints on `initialized`,
    // configurationDone, then a `stopped` (reason breakpoint) at the expected place.
    await dc.hitBreakpoint(plantLaunch(), { path: P, line: L.lineFirst, column: 1 });
    const stops = dc.eventsSince('stopped');
    assert.strictEqual(stops.length, 1);
    assert.strictEqual(stops[0].body.threadId, 1);
    assert.strictEqual(stops[0].body.hitBreakpointIds.length, 1);
    // The very first statement executed: TankControl has not had its first scan yet.
    assert.strictEqual(await dc.evaluate('Tank.firstScan'), 'TRUE');
    assert.strictEqual(await dc.evaluate('Line.stateCycles'), '0');
    assert.strictEqual(await dc.evaluate('Monitor.upTicks'), '0');
    // The order VS Code relies on: setBreakpoints and configurationDone answered before the stop.
    const idx = (command) => dc.messages.findIndex((m) => m.type === 'response' && m.command === command);
    assert.ok(idx('setBreakpoints') < idx('configurationDone'));
    assert.ok(idx('configurationDone') < stops[0].__index);
  });

  ctx.it('a breakpoint resolves to the first statement at or after the position; past the end it is unverified', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    const requested = [
      { line: L.stamp - 1 },                       // 0: a blank line before Supervisor's first statement
      { line: L.idleName },                        // 1: `  Idle: stateName := ...`: the label is no statement
      { line: L.idleName, column: 10 },            // 2: inside that statement: the next one (next line)
      { line: L.reports + 1 },                     // 3: END_PROGRAM of the last program of the file
      { line: 9999 },                              // 4: past the end of the file
    ];
    const r = await dc.setBreakpointsRequest({ source: src(P), breakpoints: requested });
    const b = r.body.breakpoints;
    assert.strictEqual(b.length, requested.length, 'one breakpoint per requested one, in order');
    assert.deepStrictEqual([b[0].verified, b[0].line, b[0].column], [true, L.stamp, 1]);
    assert.deepStrictEqual([b[1].verified, b[1].line, b[1].column], [true, L.idleName, 9]);
    assert.deepStrictEqual([b[2].verified, b[2].line, b[2].column], [true, L.idleName + 1, firstColumn(P, L.idleName + 1) + 10]);
    for (const k of [3, 4]) {
      assert.strictEqual(b[k].verified, false, `breakpoint ${k}`);
      assert.match(b[k].message, /no statement at or after line/);
    }
    for (const x of b) assert.strictEqual(x.source.path, P);
    assert.strictEqual(new Set(b.map((x) => x.id)).size, b.length, 'distinct ids');
    // In another file of the program (fbs.st): a declaration line snaps to ScaleAnalog's first statement.
    const f = await dc.setBreakpointsRequest({ source: src(plant.fbs), breakpoints: [{ line: lineOf(plant.fbs, 'r : INT;') }] });
    assert.deepStrictEqual([f.body.breakpoints[0].verified, f.body.breakpoints[0].line], [true, lineOf(plant.fbs, 'r := LIMIT(0, raw, 27648);')]);
    // A file that is not part of the program: unverified, with a message.
    const other = await dc.setBreakpointsRequest({ source: { path: '/tmp/not-in-the-program.st' }, breakpoints: [{ line: 3 }] });
    assert.strictEqual(other.body.breakpoints[0].verified, false);
    assert.match(other.body.breakpoints[0].message, /not a source file of the launched program/);
    // It stops where it said it landed.
    const stopped = await dc.configureToStop();
    assert.deepStrictEqual(stopped.body.hitBreakpointIds, [f.body.breakpoints[0].id]);
    const frame = await dc.topFrame(1);
    assert.deepStrictEqual([frame.source.path, frame.line, frame.column], [plant.fbs, f.body.breakpoints[0].line, 1]);
  });

  ctx.it('breakpointLocations lists the statement starts of a range', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    // AlarmLatch's body in fbs.st.
    const first = lineOf(plant.fbs, 'edge(CLK := condition);');
    const r = await dc.customRequest('breakpointLocations', { source: src(plant.fbs), line: first, endLine: first + 8 });
    const got = r.body.breakpoints.map((l) => [l.line - first, l.column]);
    // edge(..) / raised := / IF raised / active := / count := / (END_IF) / IF ack / active :=
    assert.deepStrictEqual(got, [[0, 1], [1, 1], [2, 1], [3, 3], [4, 3], [6, 1], [7, 3]]);
    // Columns narrow the first and the last line.
    const c = await dc.customRequest('breakpointLocations', { source: src(P), line: L.idleName, column: 5, endLine: L.idleName + 1, endColumn: 12 });
    assert.deepStrictEqual(c.body.breakpoints.map((l) => [l.line, l.column]), [[L.idleName, 9]]);
    // A file that is not in the program has none.
    const none = await dc.customRequest('breakpointLocations', { source: { path: '/tmp/not-in-the-program.st' }, line: 1, endLine: 100 });
    assert.deepStrictEqual(none.body.breakpoints, []);
  });

  ctx.it('a condition stops only where the ST expression holds; bad conditions are unverified; a run-time failure is reported once', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch({ cycles: 60 }));   // six Slow cycles: upTicks 0..5 at the breakpoint
    const r = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [
      { line: L.upTicks, condition: 'upTicks = 3' },
      { line: L.uptime, condition: 'upTicks = = 3' },                   // syntax error
      { line: L.stamp, condition: 'upTicks + 1' },                      // not BOOL
      { line: L.histIdx, condition: 'history[upTicks + 20] > 0' },      // index out of range at run time
    ] });
    const [good, syntax, notBool, runtime] = r.body.breakpoints;
    assert.strictEqual(good.verified, true);
    assert.strictEqual(syntax.verified, false);
    assert.match(syntax.message, /condition 'upTicks = = 3'/);
    assert.strictEqual(notBool.verified, false);
    assert.match(notBool.message, /BOOL/);
    assert.strictEqual(runtime.verified, true);
    const stopped = await dc.configureToStop();
    assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId, stopped.body.hitBreakpointIds], ['breakpoint', 2, [good.id]]);
    assert.strictEqual(await dc.evaluate('upTicks'), '3');
    const from = dc.mark();
    await dc.continueRequest({ threadId: 2 });
    const exited = await dc.event('exited', from);
    assert.strictEqual(exited.body.exitCode, 0);
    assert.strictEqual(dc.eventsSince('stopped').length, 1, 'no other stop');
    const reports = dc.eventsSince('output').filter((o) => o.body.output.includes('cannot be evaluated'));
    assert.strictEqual(reports.length, 1, 'the failing condition is reported once');
    assert.strictEqual(reports[0].body.category, 'console');
    assert.ok(reports[0].body.output.includes(`breakpoint ${runtime.id}`), reports[0].body.output);
  });

  ctx.it('hit conditions =N, %N and >N count the hits of each breakpoint', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch({ cycles: 60 }));   // Slow cycles k = 1..6 (hit k, upTicks k-1 at line 359)
    const r = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [
      { line: L.uptime, hitCondition: '=2' },
      { line: L.upTicks, hitCondition: '%2' },
      { line: L.histIdx, hitCondition: '>4' },
      { line: L.availability, hitCondition: 'often' },
    ] });
    const [eq2, mod2, gt4, bad] = r.body.breakpoints;
    assert.deepStrictEqual([eq2.verified, mod2.verified, gt4.verified, bad.verified], [true, true, true, false]);
    assert.match(bad.message, /hit condition 'often'/);
    const seen = [];
    let stopped = await dc.configureToStop();
    for (;;) {
      const frame = await dc.topFrame(2);
      seen.push([frame.line, Number(await dc.evaluate('upTicks')), stopped.body.hitBreakpointIds[0]]);
      const from = dc.mark();
      await dc.continueRequest({ threadId: 2 });
      const next = await dc.waitFor((m) => m.event === 'stopped' || m.event === 'exited', { from, what: "'stopped' or 'exited'" });
      if (next.event === 'exited') break;
      stopped = next;
    }
    assert.deepStrictEqual(seen, [
      [L.uptime, 1, eq2.id], [L.upTicks, 1, mod2.id],    // k = 2
      [L.upTicks, 3, mod2.id],                            // k = 4
      [L.histIdx, 5, gt4.id],                             // k = 5
      [L.upTicks, 5, mod2.id], [L.histIdx, 6, gt4.id],    // k = 6
    ]);
  });

  ctx.it('a logpoint prints its interpolated message as an output event and does not stop', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch({ cycles: 40 }));   // Slow cycles 1, 12, 23, 34
    const r = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [
      { line: L.availability, logMessage: 'tick {upTicks} at {stamp} of {{Monitor}}, estop ok {gEStopOk}' },
      { line: L.histIdx, logMessage: 'no such {thing}' },
    ] });
    assert.strictEqual(r.body.breakpoints[0].verified, true);
    assert.strictEqual(r.body.breakpoints[1].verified, false);
    assert.match(r.body.breakpoints[1].message, /thing/);
    await dc.configurationDoneRequest();
    await dc.event('terminated');
    const lines = dc.eventsSince('output').filter((o) => o.body.output.startsWith('tick'));
    assert.deepStrictEqual(lines.map((o) => o.body.output), [
      "tick 1 at '0.0s' of {Monitor}, estop ok TRUE\n",
      "tick 2 at '0.1s' of {Monitor}, estop ok TRUE\n",
      "tick 3 at '0.2s' of {Monitor}, estop ok TRUE\n",
      "tick 4 at '0.3s' of {Monitor}, estop ok TRUE\n",
    ]);
    for (const o of lines) assert.strictEqual(o.body.category, 'console');
    assert.deepStrictEqual(dc.eventsSince('stopped'), [], 'a logpoint never stops');
    assert.strictEqual((await dc.event('exited')).body.exitCode, 0);
  });

  ctx.it('a breakpoint on a statement that runs every cycle stops every cycle until it is cleared', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch({ cycles: 200 }));
    const r = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.scale }] });
    const id = r.body.breakpoints[0].id;
    let stopped = await dc.configureToStop();
    // LineControl counts the cycles it stays Idle (1 after cycle 0); Slow's cycle 1 does not stop.
    for (let cycle = 1; cycle <= 4; ++cycle) {
      assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId, stopped.body.hitBreakpointIds], ['breakpoint', 1, [id]]);
      assert.strictEqual((await dc.topFrame(1)).line, L.scale);
      assert.strictEqual(await dc.evaluate('Line.stateCycles'), String(cycle));
      if (cycle < 4) stopped = await dc.resumeToStop('continue', { threadId: 1 });
    }
    const cleared = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [] });
    assert.deepStrictEqual(cleared.body.breakpoints, []);
    const from = dc.mark();
    await dc.continueRequest({ threadId: 1 });
    await dc.event('terminated', from);
    assert.deepStrictEqual(dc.eventsSince('stopped', from), [], 'no stop once cleared');
    assert.strictEqual((await dc.event('exited', from)).body.exitCode, 0);
  });

  ctx.it('breakpoints cleared while the program runs: no breakpoint stop is reported after the clearing response', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    await dc.configurationDoneRequest();
    for (let i = 0; i < 15; ++i) {
      const before = dc.eventsSince('stopped').length;
      await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.scale }] });
      const seq = dc.post('setBreakpoints', { source: src(P), breakpoints: [] });
      await dc.waitFor((m) => m.type === 'response' && m.request_seq === seq);
      const after = dc.indexOfResponse(seq);
      await new Promise((res) => setTimeout(res, 5));
      const stops = dc.messages.filter((m) => m.event === 'stopped').slice(before);
      for (const s of stops) assert.ok(s.__index < after, `stop #${s.__index} after the clearing response #${after}`);
      if (stops.length) await dc.continueRequest({ threadId: 1 });
    }
    const total = dc.eventsSince('stopped').length;
    await new Promise((res) => setTimeout(res, 200));
    assert.strictEqual(dc.eventsSince('stopped').length, total);
  });

  ctx.it('a data breakpoint stops right after the statement that changed the variable', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch({ stopOnEntry: true, cycles: 100 }));
    await dc.configureToStop();
    const info = (await dc.dataBreakpointInfoRequest({ name: 'gTank.setpoint', frameId: 1 })).body;
    assert.strictEqual(typeof info.dataId, 'string');
    assert.deepStrictEqual(info.accessTypes, ['write']);
    // Through a scope's variablesReference, too; an expression that is no variable has no dataId.
    const globals = (await dc.scopes(1)).byName.Globals.variablesReference;
    const viaScope = (await dc.dataBreakpointInfoRequest({ name: 'gBottlesOut', variablesReference: globals })).body;
    assert.strictEqual(typeof viaScope.dataId, 'string');
    const value = (await dc.dataBreakpointInfoRequest({ name: '1 + 2', frameId: 1 })).body;
    assert.strictEqual(value.dataId, null);
    const set = await dc.setDataBreakpointsRequest({ breakpoints: [
      { dataId: info.dataId, accessType: 'write' }, { dataId: 'no-such-id' }, { dataId: viaScope.dataId, accessType: 'read' }] });
    const [watch, unknown, read] = set.body.breakpoints;
    assert.deepStrictEqual([watch.verified, unknown.verified, read.verified], [true, false, false]);
    // TankControl ramps its setpoint from the level (50 %) towards 60 % by 0.05 per Fast cycle.
    for (const expected of [50.05, 50.1]) {
      const stopped = await dc.resumeToStop('continue', { threadId: 1 });
      assert.deepStrictEqual([stopped.body.reason, stopped.body.threadId, stopped.body.hitBreakpointIds], ['data breakpoint', 1, [watch.id]]);
      const frame = await dc.topFrame(1);
      assert.deepStrictEqual([frame.source.path, frame.line], [P, L.setpoint + 1], 'the statement after the write');
      assert.ok(Math.abs(Number(await dc.evaluate('gTank.setpoint')) - expected) < 1e-4);
    }
    await dc.setDataBreakpointsRequest({ breakpoints: [] });
    const from = dc.mark();
    await dc.continueRequest({ threadId: 1 });
    assert.strictEqual((await dc.event('exited', from)).body.exitCode, 0);
    assert.deepStrictEqual(dc.eventsSince('stopped', from), []);
  });

  ctx.it('linesStartAt1 = false, columnsStartAt1 = false: lines and columns in and out are 0-based', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch(), { adapterID: 'scanback', linesStartAt1: false, columnsStartAt1: false, pathFormat: 'path' });
    const r = await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line: L.scale - 1 }, { line: L.idleName - 1, column: 8 }] });
    const [a, b] = r.body.breakpoints;
    assert.deepStrictEqual([a.verified, a.line, a.column], [true, L.scale - 1, 0]);
    assert.deepStrictEqual([b.verified, b.line, b.column], [true, L.idleName - 1, 8]);
    const first = lineOf(plant.fbs, 'edge(CLK := condition);') - 1;
    const locations = await dc.customRequest('breakpointLocations', { source: src(plant.fbs), line: first, endLine: first + 4 });
    assert.deepStrictEqual(locations.body.breakpoints.map((l) => [l.line - first, l.column]), [[0, 0], [1, 0], [2, 0], [3, 2], [4, 2]]);
    await dc.configureToStop();
    const frame = await dc.topFrame(1);
    assert.deepStrictEqual([frame.line, frame.column], [L.scale - 1, 0]);
    assert.strictEqual(frame.endLine, L.scale - 1);
  });
});
