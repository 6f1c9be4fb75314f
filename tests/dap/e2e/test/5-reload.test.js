// The stReload custom request on a copy of the cell program (tests/dap/e2e/programs/cell), edited
// between launch and reload as a user edits the files in the editor.
'use strict';

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { cell, lineOf, useClient } = require('../lib/fixtures');

// A fresh copy of the cell's files; returns their paths and a launch for them.
function copyCell() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scanback-e2e-reload-'));
  const files = {};
  for (const name of ['config', 'lib', 'fbs', 'main']) {
    files[name] = path.join(dir, `${name}.st`);
    fs.copyFileSync(cell[name], files[name]);
  }
  const launch = { program: [files.config, files.lib, files.fbs, files.main], realtime: false };
  return { dir, files, launch };
}

function edit(file, from, to) {
  const text = fs.readFileSync(file, 'utf8');
  assert.ok(text.includes(from), `'${from}' not in ${file}`);
  fs.writeFileSync(file, text.replace(from, to));
}

describe('stReload', function () {
  const ctx = useClient();
  let copy;
  beforeEach(function () { copy = copyCell(); });
  afterEach(function () { fs.rmSync(copy.dir, { recursive: true, force: true }); });

  ctx.it('paused: values kept, breakpoints moved by a breakpoint event, stopped (pause) after the response at the same frame; the next cycle runs the new code', async function () {
    const { dc } = ctx;
    const main = copy.files.main;
    const countLine = lineOf(main, 'gCount := gCount + 1;');
    await dc.startSession(copy.launch);
    const set = await dc.setBreakpointsRequest({ source: { path: main }, breakpoints: [{ line: countLine }] });
    const id = set.body.breakpoints[0].id;
    await dc.configureToStop();
    assert.strictEqual(await dc.evaluate('gCount'), '0');
    // The user adds a variable, a blank line before `gCount := ...` and a statement after it.
    edit(main, '  result : INT;', '  result : INT; extra : INT := 5;');
    edit(main, 'gCount := gCount + 1;', '\ngCount := gCount + 1;\nextra := extra + 1;');
    const from = dc.mark();
    const seq = dc.post('stReload', {});
    const stopped = await dc.event('stopped', from);
    const response = dc.messages[dc.indexOfResponse(seq)];
    assert.ok(response && response.success, `stReload failed: ${response && response.message}`);
    assert.ok(response.__index < stopped.__index, 'the response comes before the stopped event');
    assert.deepStrictEqual(response.body.reset, ['Calc.extra (new)']);
    assert.strictEqual(stopped.body.reason, 'pause');
    const moved = dc.eventsSince('breakpoint', from);
    assert.strictEqual(moved.length, 1);
    assert.deepStrictEqual([moved[0].body.reason, moved[0].body.breakpoint.id, moved[0].body.breakpoint.line],
      ['changed', id, countLine + 1]);
    assert.ok(moved[0].__index < stopped.__index);
    // Still where it was: the cycle under way finishes on the code it began with.
    assert.strictEqual((await dc.topFrame()).line, countLine);
    const next = await dc.resumeToStop('continue', { threadId: 1 });
    assert.deepStrictEqual([next.body.reason, next.body.hitBreakpointIds], ['breakpoint', [id]]);
    assert.strictEqual((await dc.topFrame()).line, countLine + 1);
    assert.strictEqual(await dc.evaluate('gCount'), '1');
    assert.strictEqual(await dc.evaluate('extra'), '5');
    await dc.resumeToStop('next', { threadId: 1 });
    await dc.resumeToStop('next', { threadId: 1 });
    assert.strictEqual(await dc.evaluate('extra'), '6');
    assert.strictEqual(await dc.evaluate('n'), '2');
  });

  ctx.it('a compile error or a changed task fails the request with the reason; the old version runs on', async function () {
    const { dc } = ctx;
    await dc.startSession({ ...copy.launch, stopOnEntry: true });
    await dc.configureToStop();
    edit(copy.files.main, 'n := n + 1;', 'n := n + ;');
    const broken = await dc.fails('stReload', {});
    assert.match(broken.message, /main\.st:\d+:\d+: error/);
    edit(copy.files.main, 'n := n + ;', 'n := n + 1;');
    edit(copy.files.config, 'INTERVAL := T#10ms', 'INTERVAL := T#5ms');
    const tasks = await dc.fails('stReload', {});
    assert.match(tasks.message, /the interval of task Main changed/);
    const step = await dc.resumeToStop('next', { threadId: 1 });
    assert.strictEqual(step.body.reason, 'step');
    assert.strictEqual(await dc.evaluate('n'), '1');
  });
});
