// Scopes, variables, evaluate, setVariable and setExpression on the plant's globals (the struct
// array gStations, the alarm table gAlarms, the struct gTank, the I/O image) and on the cell.
'use strict';

const assert = require('assert');
const { plant, cell, plantLaunch, cellLaunch, lineOf, useClient } = require('../lib/fixtures');

const P = plant.programs;
const src = (p) => ({ path: p });
const L = {
  upTicks: lineOf(P, 'upTicks := upTicks + 1;'),
  reports: lineOf(P, 'reports := reports + 1;'),
};

// Stops in the Slow task (Monitor : Supervisor) at `upTicks := upTicks + 1;` of its first cycle.
async function stopInSupervisor(dc, line = L.upTicks) {
  await dc.startSession(plantLaunch());
  await dc.setBreakpointsRequest({ source: src(P), breakpoints: [{ line }] });
  const stopped = await dc.configureToStop();
  assert.strictEqual(stopped.body.threadId, 2);
  return (await dc.topFrame(2)).id;
}

describe('variables and evaluation', function () {
  const ctx = useClient();

  ctx.it('scopes and variables: a struct array (gStations), the alarm table (gAlarms), a struct (gTank), I/O with addresses', async function () {
    const { dc } = ctx;
    const frameId = await stopInSupervisor(dc, L.reports);
    const scopes = await dc.scopes(frameId);
    // A PROGRAM frame: its Instance first (the scope VS Code expands); no Locals, Supervisor has no
    // VAR_TEMP or inputs.
    assert.deepStrictEqual(scopes.list.map((s) => s.name), ['Instance', 'Globals', 'Retain', 'I/O']);
    const globals = await dc.variables(scopes.byName.Globals.variablesReference);
    // gStations : ARRAY[1..3] OF Station, initialised with the station names.
    const stations = globals.byName.gStations;
    assert.deepStrictEqual([stations.type, stations.indexedVariables], ['ARRAY[1..3] OF Station', 3]);
    assert.ok(stations.variablesReference > 0);
    const elements = await dc.variables(stations.variablesReference);
    assert.deepStrictEqual(elements.list.map((v) => [v.name, v.type, v.namedVariables]),
      [['[1]', 'Station', 5], ['[2]', 'Station', 5], ['[3]', 'Station', 5]]);
    const filler = await dc.variables(elements.byName['[1]'].variablesReference);
    assert.deepStrictEqual(filler.list.map((v) => v.name), ['name', 'state', 'count', 'rejects', 'busyCycles']);
    assert.deepStrictEqual([filler.byName.name.value, filler.byName.name.evaluateName], ["'Filler'", 'gStations[1].name']);
    assert.deepStrictEqual([filler.byName.state.value, filler.byName.state.type], ['Waiting', 'StationState']);
    const exit = await dc.variables(elements.byName['[3]'].variablesReference);
    assert.strictEqual(exit.byName.name.value, "'Exit'");
    // Each child's evaluateName evaluates to the value shown.
    for (const v of [...filler.list, ...exit.list])
      assert.strictEqual(await dc.evaluate(v.evaluateName, frameId), v.value, v.evaluateName);
    // gAlarms : ARRAY[1..5] OF AlarmInfo pages with start/count.
    const alarms = globals.byName.gAlarms;
    assert.strictEqual(alarms.indexedVariables, 5);
    const page = await dc.variables(alarms.variablesReference, { start: 1, count: 2 });
    assert.deepStrictEqual(page.list.map((v) => v.name), ['[2]', '[3]']);
    const motorAlarm = await dc.variables(page.byName['[2]'].variablesReference);
    assert.deepStrictEqual([motorAlarm.byName.text.value, motorAlarm.byName.active.value, motorAlarm.byName.count.type],
      ["'Conveyor motor fault'", 'FALSE', 'INT — how often it was raised']);  // its declaration's comment
    // gTank : TankData, written by TankControl in the Fast cycle 0 before this Slow cycle.
    const tank = await dc.variables(globals.byName.gTank.variablesReference);
    assert.deepStrictEqual(tank.list.map((v) => v.name), ['level', 'setpoint', 'inlet', 'high', 'low']);
    assert.strictEqual(tank.byName.setpoint.value, '50.05');
    // The same container asked for twice has the same reference.
    const again = await dc.variables(scopes.byName.Globals.variablesReference);
    assert.strictEqual(again.byName.gStations.variablesReference, stations.variablesReference);
    // I/O: located variables with their addresses, the stimulus applied.
    const io = await dc.variables(scopes.byName['I/O'].variablesReference);
    // (Each type is followed by its declaration's comment.)
    assert.deepStrictEqual([io.byName.gEStopOk.type, io.byName.gEStopOk.value],
      ['BOOL AT %IX0.2 — emergency stop chain, TRUE = healthy (NC contact)', 'TRUE']);
    assert.strictEqual(io.byName.gHorn.type, 'BOOL AT %QX0.3 — alarm horn');
    assert.deepStrictEqual([io.byName['Line.startPb'].type, io.byName['Tank.levelRaw'].type, io.byName['Tank.levelRaw'].value],
      ['BOOL AT %IX0.0 — start push button', 'INT AT %IW2 — level transmitter, 0..27648 = 0..100 %', '13824']);
    // The program's own variables, in Instance.
    const locals = await dc.variables(scopes.byName.Instance.variablesReference);
    assert.strictEqual(locals.byName.upTicks.value, '1');
    assert.strictEqual(locals.byName.events.type, 'EventLog — event log');  // the comment above it
    const events = await dc.variables(locals.byName.events.variablesReference);
    assert.deepStrictEqual([events.byName.entries.indexedVariables, events.byName.total.value], [12, '0']);
  });

  ctx.it('variable references end when the program resumes', async function () {
    const { dc } = ctx;
    const frameId = await stopInSupervisor(dc);
    const globals = (await dc.scopes(frameId)).byName.Globals.variablesReference;
    await dc.variables(globals);
    await dc.resumeToStop('continue', { threadId: 2 });
    const stale = await dc.fails('variables', { variablesReference: globals });
    assert.match(stale.message, /no variables with reference/);
  });

  ctx.it('evaluate in the hover, watch and repl contexts; calls of user functions and FBs are refused', async function () {
    const { dc } = ctx;
    const frameId = await stopInSupervisor(dc, L.reports);
    const evaluate = (expression, context) => dc.request('evaluate', { expression, frameId, context });
    const hover = await evaluate('gStations[1].name', 'hover');
    assert.deepStrictEqual([hover.success, hover.body.result, hover.body.type], [true, "'Filler'", 'STRING[16]']);
    const watch = await evaluate('gAlarms[2].text', 'watch');
    assert.strictEqual(watch.body.result, "'Conveyor motor fault'");
    const repl = await evaluate('upTicks * 10 + reports', 'repl');
    assert.deepStrictEqual([repl.body.result, repl.body.variablesReference], ['10', 0]);
    const struct = await evaluate('gTank', 'watch');
    assert.ok(struct.body.variablesReference > 0);
    assert.strictEqual(struct.body.namedVariables, 5);
    const stdFunction = await evaluate('LIMIT(0, upTicks + 5, 3)', 'watch');
    assert.strictEqual(stdFunction.body.result, '3');
    assert.strictEqual((await evaluate('gTank.level > 40.0 AND gEStopOk', 'hover')).body.result, 'TRUE');
    // Programs' variables by instance name, without a frame.
    const noFrame = await dc.request('evaluate', { expression: 'Line.fillTime', context: 'watch' });
    assert.strictEqual(noFrame.body.result, 'T#200ms');
    // A user function, an FB instance call and a method call: refused, in every context.
    for (const [expression, context] of [
      ['ScaleAnalog(raw := 100, lo := 0.0, hi := 1.0)', 'hover'],
      ['ScaleAnalog(raw := 100, lo := 0.0, hi := 1.0)', 'repl'],
      ["TenthsToText(ticks := 5)", 'watch'],
      ["events.Append(msg := 'x')", 'repl'],
      ['events()', 'repl'],
    ]) {
      const r = await evaluate(expression, context);
      assert.strictEqual(r.success, false, `${expression} (${context}) must be refused`);
      assert.match(r.message, /not allowed/, r.message);
    }
    assert.strictEqual(await dc.evaluate('events.total', frameId), '0', 'evaluating changed nothing');
    assert.match((await evaluate('nosuchname + 1', 'watch')).message, /unknown name 'nosuchname'/);
    assert.match((await evaluate('upTicks +', 'watch')).message, /expected an expression/);
  });

  ctx.it('setVariable writes at once, at the paused statement (the cycle goes on with the new value)', async function () {
    const { dc } = ctx;
    const frameId = await stopInSupervisor(dc);
    assert.strictEqual(await dc.evaluate('upTicks', frameId), '0');
    const scopes = await dc.scopes(frameId);
    const locals = scopes.byName.Instance.variablesReference;
    const from = dc.mark();
    const r = await dc.setVariableRequest({ variablesReference: locals, name: 'upTicks', value: '100' });
    assert.deepStrictEqual([r.body.value, r.body.type], ['100', 'DINT']);
    const note = dc.eventsSince('output', from).find((o) => o.body.output.includes('upTicks := 100'));
    assert.ok(note && /written now/.test(note.body.output), 'an output event says when it applies');
    assert.strictEqual(await dc.evaluate('upTicks', frameId), '100', 'written at once');
    const fresh = await dc.variables((await dc.scopes(frameId)).byName.Instance.variablesReference);
    assert.strictEqual(fresh.byName.upTicks.value, '100', 'the Variables view shows it too');
    // A struct field through its container, and an expression with setExpression.
    const globals = await dc.variables(scopes.byName.Globals.variablesReference);
    const capper = (await dc.variables(globals.byName.gStations.variablesReference)).byName['[2]'];
    const set = await dc.setVariableRequest({ variablesReference: capper.variablesReference, name: 'rejects', value: '7' });
    assert.strictEqual(set.body.value, '7');
    const expr = await dc.customRequest('setExpression', { expression: 'Line.batchSize', value: '9', frameId });
    assert.strictEqual(expr.body.value, '9');
    // Values that do not fit the type are refused.
    assert.match((await dc.fails('setVariable', { variablesReference: locals, name: 'upTicks', value: "'text'" })).message, /upTicks/);
    assert.match((await dc.fails('setVariable', { variablesReference: locals, name: 'histIdx', value: '70000' })).message, /range/);
    assert.match((await dc.fails('setVariable', { variablesReference: locals, name: 'nosuch', value: '1' })).message, /nosuch/);
    // The rest of this cycle ran with upTicks = 100: its increment made 101.
    await dc.resumeToStop('continue', { threadId: 2 });
    assert.strictEqual(await dc.evaluate('upTicks', 1), '101');
    assert.strictEqual(await dc.evaluate('gStations[2].rejects', 1), '7');
    assert.strictEqual(await dc.evaluate('Line.batchSize', 1), '9');
  });

  ctx.it("setVariable changes the program's course: the cell then faults later, in another file", async function () {
    const { dc } = ctx;
    await dc.startSession(cellLaunch());
    const first = lineOf(cell.main, 'n := n + 1;');
    await dc.setBreakpointsRequest({ source: src(cell.main), breakpoints: [{ line: first }] });
    await dc.configureToStop();
    const globals = (await dc.scopes(1)).byName.Globals.variablesReference;
    const r = await dc.setVariableRequest({ variablesReference: globals, name: 'gLimit', value: '100' });
    assert.strictEqual(r.body.value, '100');
    await dc.setBreakpointsRequest({ source: src(cell.main), breakpoints: [] });
    // No division by zero in cycle 3 any more: gHistory[5] is out of range in cycle 4 instead.
    const stopped = await dc.resumeToStop('continue', { threadId: 1 });
    assert.strictEqual(stopped.body.reason, 'exception');
    const faultLine = lineOf(cell.main, 'gHistory[n] := result;');
    assert.deepStrictEqual(frameAt(await dc.topFrame(1)), [cell.main, faultLine]);
    const info = (await dc.exceptionInfoRequest({ threadId: 1 })).body;
    assert.strictEqual(info.exceptionId, 'array index out of range');
    assert.ok(info.description.includes(`${cell.main}:${faultLine}`), info.description);
    // The write applied at once, before cycle 0's call: 10 / 99 and 20 / 98.
    assert.deepStrictEqual([await dc.evaluate('gHistory[1]'), await dc.evaluate('gHistory[2]'), await dc.evaluate('n')], ['0', '0', '5']);
  });

  ctx.it("a function's variables live in its call frame and cannot be written", async function () {
    const { dc } = ctx;
    await dc.startSession(cellLaunch());
    await dc.setBreakpointsRequest({ source: src(cell.lib), breakpoints: [{ line: lineOf(cell.lib, 'Ratio := num / den;') }] });
    await dc.configureToStop();
    const locals = (await dc.scopes(1)).byName.Locals.variablesReference;
    const vars = await dc.variables(locals);
    assert.deepStrictEqual(vars.list.map((v) => [v.name, v.value]), [['Ratio', '0'], ['num', '10'], ['den', '3']]);
    assert.match((await dc.fails('setVariable', { variablesReference: locals, name: 'den', value: '5' })).message, /call frame/);
  });

  // For an array (indexedVariables, no namedVariables) `filter: 'named'` gives no children, for a
  // struct `filter: 'indexed'` none (the filter was once ignored).
  ctx.it("variables honours filter 'named' / 'indexed'", async function () {
    const { dc } = ctx;
    const frameId = await stopInSupervisor(dc);
    const globals = await dc.variables((await dc.scopes(frameId)).byName.Globals.variablesReference);
    const named = await dc.variables(globals.byName.gAlarms.variablesReference, { filter: 'named' });
    assert.deepStrictEqual(named.list, []);
    const indexed = await dc.variables(globals.byName.gTank.variablesReference, { filter: 'indexed' });
    assert.deepStrictEqual(indexed.list, []);
    const elements = await dc.variables(globals.byName.gAlarms.variablesReference, { filter: 'indexed' });
    assert.strictEqual(elements.list.length, 5);
  });
});

function frameAt(f) { return [f.source && f.source.path, f.line]; }
