// The life of a session: initialize, launch (good and bad), threads, the end of the program and
// of the session. Every message the adapter sends is schema-checked (lib/fixtures.js useClient).
'use strict';

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { plant, cell, BROKEN_DIR, plantLaunch, cellLaunch, lineOf, useClient, REPO } = require('../lib/fixtures');

describe('session', function () {
  const ctx = useClient();

  ctx.it('initialize, then launch, then the initialized event; the capabilities are what is implemented', async function () {
    const { dc } = ctx;
    const init = dc.post('initialize', { adapterID: 'scanback', clientID: 'e2e', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
    await dc.waitFor((m) => m.type === 'response' && m.request_seq === init);
    const caps = dc.messages[dc.indexOfResponse(init)].body;
    for (const c of ['supportsConfigurationDoneRequest', 'supportsConditionalBreakpoints', 'supportsHitConditionalBreakpoints',
      'supportsLogPoints', 'supportsBreakpointLocationsRequest', 'supportsDataBreakpoints', 'supportsSetVariable',
      'supportsSetExpression', 'supportsExceptionInfoRequest', 'supportsEvaluateForHovers', 'supportsTerminateRequest'])
      assert.strictEqual(caps[c], true, c);
    assert.deepStrictEqual(caps.exceptionBreakpointFilters.map((f) => [f.filter, f.default]), [['faults', true]]);
    // Not ready for configuration before a program is launched: no initialized event yet.
    await dc.noEvent('initialized', 0, 200);
    const launch = dc.post('launch', plantLaunch());
    const initialized = await dc.event('initialized');
    assert.ok(dc.indexOfResponse(init) < initialized.__index, 'the initialize response before initialized');
    const launchResponse = dc.indexOfResponse(launch);
    assert.ok(launchResponse >= 0 && launchResponse < initialized.__index, 'the launch response before initialized');
    // Configuration requests now work, then the program starts.
    const bp = await dc.setBreakpointsRequest({ source: { path: plant.programs }, breakpoints: [{ line: lineOf(plant.programs, 'level := ScaleAnalog') }] });
    assert.strictEqual(bp.body.breakpoints[0].verified, true);
    await dc.setExceptionBreakpointsRequest({ filters: ['faults'] });
    const stopped = await dc.configureToStop();
    assert.deepStrictEqual(stopped.body.hitBreakpointIds, [bp.body.breakpoints[0].id]);
    // A second initialize is refused; initialized came once.
    const again = await dc.fails('initialize', { adapterID: 'scanback' });
    assert.match(again.message, /initialized already/);
    assert.strictEqual(dc.eventsSince('initialized').length, 1);
  });

  ctx.it('a request before initialize is refused, and the session goes on', async function () {
    const { dc } = ctx;
    const r = await dc.fails('threads');
    assert.match(r.message, /initialize/);
    await dc.init();
    assert.deepStrictEqual((await dc.threadsRequest()).body.threads, []);
  });

  ctx.it('an unknown request and malformed input on stdin get an error (response or stderr line); the session goes on', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    const unknown = await dc.fails('frobnicate', { x: 1 });
    assert.match(unknown.message, /unknown request 'frobnicate'/);
    // Framing the adapter must reject, written straight to its stdin: a body that is not JSON, a
    // header without Content-Length, a Content-Length too large to honour.
    const raw = (text) => dc._adapterProcess.stdin.write(text);
    raw('Content-Length: 12\r\n\r\nnot json!!!!');
    raw('Content-Type: nothing\r\n\r\n');
    raw('Content-Length: 99999999999999999999\r\n\r\n');
    assert.deepStrictEqual((await dc.threadsRequest()).body.threads, [{ id: 1, name: 'Fast' }, { id: 2, name: 'Slow' }]);
    // Those have no seq to answer: the adapter logs them on stderr (a pipe of its own, read apart).
    for (let t = 0; !/malformed/.test(dc.stderr) && t < 40; ++t) await new Promise((r) => setTimeout(r, 50));
    assert.match(dc.stderr, /rejected a malformed message/);
    // A request with a seq but a body that is not valid for its command: an error response.
    const bad = await dc.fails('stackTrace', { threadId: 'one' }, { invalid: true });
    assert.match(bad.message, /stackTrace/);
    await dc.configurationDoneRequest();
    assert.strictEqual((await dc.threadsRequest()).success, true);
  });

  ctx.it('launch with a compile error fails with the diagnostic in the message and in an output event', async function () {
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
    assert.deepStrictEqual(dc.eventsSince('initialized'), [], 'no initialized event after a failed launch');
    const good = dc.mark();
    await dc.launchRequest(plantLaunch());
    await dc.event('initialized', good);
    assert.deepStrictEqual((await dc.threadsRequest()).body.threads, [{ id: 1, name: 'Fast' }, { id: 2, name: 'Slow' }]);
  });

  ctx.it('threads are the tasks of the configuration, with stable ids', async function () {
    const { dc } = ctx;
    await dc.startSession(plantLaunch());
    const first = (await dc.threadsRequest()).body.threads;
    assert.deepStrictEqual(first, [{ id: 1, name: 'Fast' }, { id: 2, name: 'Slow' }]);
    await dc.configurationDoneRequest();
    assert.deepStrictEqual((await dc.threadsRequest()).body.threads, first, 'the threads do not change while it runs');
  });

  ctx.it('a VS Code launch.json (globs and inputs relative to cwd, stopOnEntry) stops at the first statement of cycle 0', async function () {
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

  ctx.it('the cycle limit ends the program: exited (exit code 0), then terminated', async function () {
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

  ctx.it('terminate: the response, then terminated; the session still answers until disconnect', async function () {
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

  ctx.it('disconnect while running ends the program (terminated) and the adapter process', async function () {
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

  ctx.it('disconnect while paused at a breakpoint ends the program and the adapter process', async function () {
    const { dc } = ctx;
    await dc.startSession(cellLaunch());
    await dc.setBreakpointsRequest({ source: { path: cell.lib }, breakpoints: [{ line: lineOf(cell.lib, 'Ratio := num / den;') }] });
    await dc.configureToStop();
    const from = dc.mark();
    await dc.disconnectRequest({});
    await dc.event('terminated', from);
    assert.deepStrictEqual(await dc.exit, { code: 0, signal: null });
  });

  // Responses come from the session's thread, events (stopped, output, exited, terminated) also
  // from the target's: the seq must still follow the order on the wire. Logpoint output while
  // requests are answered once showed messages written out of seq order.
  ctx.it('adapter messages carry seq 1, 2, 3, ... in the order they are written, also while both threads write', async function () {
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
