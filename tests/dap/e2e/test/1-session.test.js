// The life of a session: initialize, launch (good and bad), threads, the end of the program and
// of the session. Every message the adapter sends is schema-checked (lib/fixtures.js useClient).
'use strict';

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { itKnownBug, plant, cell, BROKEN_DIR, plantLaunch, cellLaunch, lineOf, useClient, REPO } = require('../lib/fixtures');

describe('session', function () {
  const ctx = useClient();

  it('initialize: the response comes first, then the initialized event; the capabilities are what is implemented', async function () {
    const { dc } = ctx;
    const seq = dc.post('initialize', { adapterID: 'scanback', clientID: 'e2e', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
    const initialized = await dc.event('initialized');
    const response = dc.indexOfResponse(seq);
    assert.ok(response >= 0, 'no initialize response before the initialized event');
    assert.ok(response < initialized.__index, `initialize response #${response} must precede initialized #${initialized.__index}`);
    const caps = dc.messages[response].body;
    for (const c of ['supportsConfigurationDoneRequest', 'supportsConditionalBreakpoints', 'supportsHitConditionalBreakpoints',
      'supportsLogPoints', 'supportsBreakpointLocationsRequest', 'supportsDataBreakpoints', 'supportsSetVariable',
      'supportsSetExpression', 'supportsExceptionInfoRequest', 'supportsEvaluateForHovers', 'supportsTerminateRequest'])
      assert.strictEqual(caps[c], true, c);
    assert.deepStrictEqual(caps.exceptionBreakpointFilters.map((f) => [f.filter, f.default]), [['faults', true]]);
    // Exactly one initialized event, and a second initialize is refused.
    const again = await dc.fails('initialize', { adapterID: 'scanback' });
    assert.match(again.message, /initialized already/);
    assert.strictEqual(dc.eventsSince('initialized').length, 1);
  });

  it('a request before initialize is refused, and the session goes on', async function () {
    const { dc } = ctx;
    const r = await dc.fails('threads');
    assert.match(r.message, /initialize/);
    await dc.init();
    assert.deepStrictEqual((await dc.threadsRequest()).body.threads, []);
  });

  it('launch with a compile error fails with the diagnostic in the message and in an output event', async function () {
    const { dc } = ctx;
    await dc.init();
    const bad = path.join(BROKEN_DIR, 'bad.st');
    const from = dc.mark();
    const r = await dc.fails('launch', { program: [path.join(BROKEN_DIR, 'good.st'), bad], realtime: false });
    // bad.st line 5: `x := x + missing;`, the name at column 10.
    assert.ok(r.message.includes(`${bad}:5:10`), r.message);
    assert.match(r.message, /undeclared identifier 'missing'/);
    const output = await dc.event('output', from);
    assert.strictEqual(output.body.category, 'stderr');
    assert.ok(output.body.output.includes(`${bad}:5:10`), output.body.output);
    assert.match(output.body.output, /undeclared identifier 'missing'/);
    // Nothing runs: no threads, no stop, no exit.
    assert.deepStrictEqual((await dc.threadsRequest()).body.threads, []);
    assert.deepStrictEqual(dc.messages.filter((m) => ['stopped', 'exited', 'terminated'].includes(m.event)), []);
    // A missing file and a pattern that matches nothing are errors too, and then a good program launches.
    assert.match((await dc.fails('launch', { program: path.join(BROKEN_DIR, 'nothere.st') })).message, /nothere\.st/);
    assert.match((await dc.fails('launch', { program: ['examples/plant/*.stx'], cwd: REPO })).message, /no file matches/);
    await dc.launchRequest(plantLaunch());
    assert.deepStrictEqual((await dc.threadsRequest()).body.threads, [{ id: 1, name: 'Fast' }, { id: 2, name: 'Slow' }]);
  });

  it('threads are the tasks of the configuration, with stable ids', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    const first = (await dc.threadsRequest()).body.threads;
    assert.deepStrictEqual(first, [{ id: 1, name: 'Fast' }, { id: 2, name: 'Slow' }]);
    await dc.configurationDoneRequest();
    assert.deepStrictEqual((await dc.threadsRequest()).body.threads, first, 'the threads do not change while it runs');
  });

  it('a VS Code launch.json (globs and inputs relative to cwd, stopOnEntry) stops at the first statement of cycle 0', async function () {
    const { dc } = ctx;
    await dc.startSession({ program: ['examples/plant/*.st'], inputs: 'examples/plant/stimulus.csv', cwd: REPO,
      stopOnEntry: true, realtime: false });
    const stopped = await dc.configureToStop();
    assert.strictEqual(stopped.body.reason, 'entry');
    assert.strictEqual(stopped.body.threadId, 1);
    assert.strictEqual(stopped.body.allThreadsStopped, true);
    const frame = await dc.topFrame(1);
    assert.strictEqual(frame.source.path, plant.programs);
    assert.strictEqual(frame.line, lineOf(plant.programs, 'gAckAlarms := ackAlarms;'));
    assert.strictEqual(frame.column, 1);
    assert.strictEqual(frame.name, 'Line (LineControl)');
    // The stimulus (relative to cwd) was applied to cycle 0: the E-stop chain is healthy.
    assert.strictEqual(await dc.evaluate('gEStopOk'), 'TRUE');
    assert.strictEqual(await dc.evaluate('Tank.levelRaw'), '13824');
    // The source request gives the file as it is on disk.
    const source = await dc.sourceRequest({ source: { path: plant.programs }, sourceReference: 0 });
    assert.strictEqual(source.body.content, fs.readFileSync(plant.programs, 'utf8'));
  });

  it('the cycle limit ends the program: exited (exit code 0), then terminated', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch({ cycles: 30 }));
    const seq = dc.post('configurationDone');
    const terminated = await dc.event('terminated');
    const exited = await dc.event('exited');
    assert.strictEqual(exited.body.exitCode, 0);
    assert.ok(dc.indexOfResponse(seq) < exited.__index, 'configurationDone response first');
    assert.ok(exited.__index < terminated.__index, 'exited before terminated');
    assert.ok(dc.eventsSince('output').some((o) => o.body.output.includes('ran its 30 cycles')));
    assert.deepStrictEqual(dc.eventsSince('stopped'), []);
    await new Promise((r) => setTimeout(r, 100));
    assert.strictEqual(dc.eventsSince('terminated').length, 1, 'terminated is sent once');
  });

  it('terminate: the response, then terminated; the session still answers until disconnect', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    await dc.configurationDoneRequest();
    const from = dc.mark();
    const seq = dc.post('terminate');
    const terminated = await dc.event('terminated', from);
    assert.ok(dc.indexOfResponse(seq) >= 0 && dc.indexOfResponse(seq) < terminated.__index, 'terminate response first');
    assert.ok((await dc.threadsRequest()).success);
    await dc.disconnectRequest({});
    const exit = await dc.exit;
    assert.strictEqual(exit.code, 0);
    assert.strictEqual(dc.eventsSince('terminated').length, 1, 'terminated is sent once');
  });

  it('disconnect while running ends the program (terminated) and the adapter process', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    await dc.configurationDoneRequest();
    const from = dc.mark();
    const r = await dc.disconnectRequest({ terminateDebuggee: true });
    assert.strictEqual(r.success, true);
    await dc.event('terminated', from);
    const exit = await dc.exit;
    assert.deepStrictEqual(exit, { code: 0, signal: null });
  });

  it('disconnect while paused at a breakpoint ends the program and the adapter process', async function () {
    const { dc } = ctx;
    await dc.startSession(cellLaunch());
    await dc.setBreakpointsRequest({ source: { path: cell.lib }, breakpoints: [{ line: 7 }] });
    await dc.configureToStop();
    const from = dc.mark();
    await dc.disconnectRequest({});
    await dc.event('terminated', from);
    assert.deepStrictEqual(await dc.exit, { code: 0, signal: null });
  });

  // ADAPTER BUG (reported): the adapter sends `initialized` right after the initialize response,
  // but refuses configuration requests until `launch` ("no program is running: launch one first").
  // The DAP says `initialized` means "ready to accept configuration requests"; a client may send
  // them before `launch` (the protocol does not order launch and the configuration sequence).
  itKnownBug('configuration requests sent after initialized and before launch are accepted [adapter bug: initialized too early]', async function () {
    const { dc } = ctx;
    await dc.init();
    const line = lineOf(plant.programs, 'level := ScaleAnalog');
    const bp = await dc.request('setBreakpoints', { source: { path: plant.programs }, breakpoints: [{ line }] });
    assert.strictEqual(bp.success, true, bp.message);
    assert.strictEqual((await dc.request('setExceptionBreakpoints', { filters: ['faults'] })).success, true);
    await dc.launchRequest(plantLaunch());
    const stopped = await dc.configureToStop();
    assert.strictEqual(stopped.body.reason, 'breakpoint');
    assert.strictEqual((await dc.topFrame(1)).line, line);
  });

  // ADAPTER BUG (reported): `seq` is taken (Session::seq_.fetch_add) before the message is framed
  // and written, and the session thread (responses) and the target thread (stopped, output,
  // exited, terminated events) write concurrently, so messages reach the wire out of seq order.
  // The DAP: each message's seq is the previous message's seq + 1. Logpoint output from the
  // target thread while requests are answered shows it in every run here.
  itKnownBug('adapter messages carry seq 1, 2, 3, ... in the order they are written, also under load [adapter bug: seq order]', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch({ cycles: 3000 }));
    await dc.setBreakpointsRequest({ source: { path: plant.programs },
      breakpoints: [{ line: lineOf(plant.programs, 'level := ScaleAnalog'), logMessage: 'c{Line.stateCycles}' }] });
    await dc.configurationDoneRequest();
    await Promise.all(Array.from({ length: 300 }, () => dc.threadsRequest()));
    await dc.event('terminated', 0, 20000);
    const seqs = dc.messages.map((m) => m.seq);
    const firstBad = seqs.findIndex((s, i) => s !== i + 1);
    assert.strictEqual(firstBad, -1, `message #${firstBad} has seq ${seqs[firstBad]}`);
  });
});
