'use strict';
// The explain features (src/explain, issue 33) against the vscode mock: the Why? tree and its
// travel, inline values from one scanback/values request, flow decorations, Log Over History's
// parsing. Expected values are derived by hand from the inputs.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const vscode = require('./vscode-mock');
const why = require('../../out-test/explain/why');
const { namesIn, ScanbackInlineValues } = require('../../out-test/explain/inlineValues');
const { FlowDecorations, linesOf } = require('../../out-test/explain/flow');
const log = require('../../out-test/explain/log');
const { parseLogOutput, traceOf } = log;

const mock = vscode.__mock;
test.beforeEach(() => mock.reset());

const chain = {
  value: '24',
  variable: 'S.y',
  cycle: 7,
  step: 5,
  file: '/p/plant.st',
  line: 29,
  text: 'y := fb.out;',
  origin: 'statement',
  reads: [
    { value: '7', variable: 'F.sensor', cycle: 3, step: 0, origin: 'stimulus', author: 'stimulus', reads: [] },
    { value: '3', variable: 'S.i', cycle: 7, step: 0, file: '/p/plant.st', line: 25, text: 'i := i + 1;', origin: 'statement', reads: [], repeated: true },
    { value: '2', variable: 'k', cycle: 7, step: 1, origin: 'constant', reads: [] },
  ],
};

test('a why node reads as value, statement and position, and travels there on a click', async () => {
  const root = why.whyItem(chain);
  assert.equal(root.label, 'S.y = 24');
  assert.equal(root.description, 'y := fb.out; · 7:5');
  assert.equal(root.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);
  assert.deepEqual(root.command.arguments, [chain]);
  assert.match(root.accessibilityInformation.label, /^S\.y = 24, from y := fb\.out; · 7:5$/);
  const stimulus = why.whyItem(chain.reads[0]);
  assert.equal(stimulus.description, 'external write at the cycle start (stimulus) · 3:0');
  assert.equal(stimulus.collapsibleState, vscode.TreeItemCollapsibleState.None);
  assert.equal(why.whyItem(chain.reads[1]).description, 'i := i + 1; · 7:0 · repeated (followed above)');
  // Who made an external write, or changed %I bytes, as the trace says; a trace recorded before
  // writes said it names both possibilities.
  const node = (origin, author) => ({ value: '1', variable: 'v', cycle: 2, step: 0, origin, author, reads: [] });
  assert.equal(why.whyItem(node('stimulus', 'debugger')).description, 'external write at the cycle start (debugger) · 2:0');
  assert.equal(
    why.whyItem(node('stimulus', 'force')).description,
    'external write at the cycle start (a force of the rerun recording) · 2:0',
  );
  assert.equal(
    why.whyItem(node('stimulus', undefined)).description,
    'external write at the cycle start (stimulus or a write between cycles) · 2:0',
  );
  assert.equal(why.whyItem(node('input', 'modbusPeer')).description, 'scan input (%I, Modbus peer) · 2:0');
  assert.equal(why.whyItem(node('input', undefined)).description, 'scan input (%I) · 2:0');
  // A constant has no position to travel to.
  assert.equal(why.whyItem(chain.reads[2]).command, undefined);

  const session = mock.fakeSession({ type: 'scanback', request: 'launch', trace: '/p/plant.trace' });
  assert.equal(await why.travelTo(chain.reads[0], session), true);
  assert.deepEqual(session.requests, [{ command: 'scanback/seek', args: { cycle: 3, step: 0 } }]);
});

test('Why Does It Have This Value? asks for the variable of the Variables row and shows the chain', async () => {
  const session = mock.fakeSession({ type: 'scanback', request: 'launch', trace: '/t' }, (command) =>
    command === 'scanback/why' ? { root: chain } : {},
  );
  const provider = new why.WhyTreeProvider();
  let changes = 0;
  provider.onDidChangeTreeData(() => ++changes);
  const shown = await why.explainValue(provider, { variable: { name: 'y', evaluateName: 'y' } }, session);
  assert.equal(shown, chain);
  assert.deepEqual(session.requests, [{ command: 'scanback/why', args: { variable: 'y', depth: why.whyDepth } }]);
  assert.equal(changes, 1);
  assert.deepEqual(provider.getChildren(), [chain]);
  assert.equal(provider.getChildren(chain).length, 3);
  // An error of the adapter is shown, not thrown.
  const failing = mock.fakeSession({ type: 'scanback' }, () => {
    throw new Error('unknown variable nosuch');
  });
  assert.equal(await why.explainValue(provider, { variable: { name: 'nosuch' } }, failing), undefined);
  assert.match(mock.calls.error[0], /why nosuch: unknown variable nosuch/);
});

test('inline values: the names used on a line, comments and strings left out', () => {
  const uses = namesIn("x := motor.out + a[3] * 2; (* old y *)\nIF b THEN s := 'text z'; // c\nEND_IF", 10);
  assert.deepEqual(
    uses.map((u) => [u.line, u.start, u.expression]),
    [
      [10, 0, 'x'],
      [10, 5, 'motor.out'],
      [10, 17, 'a[3]'],
      [11, 3, 'b'],
      [11, 10, 's'],
    ],
  );
});

test('inline values come from one scanback/values request, null ones and enumeration values (Idle = Idle) left out', async () => {
  const session = mock.fakeSession({ type: 'scanback' }, (command, args) => ({
    values: args.expressions.map((e) => (e === 'nosuch' ? null : e === 'Idle' ? 'Idle' : `<${e}>`)),
  }));
  session.type = 'scanback';
  mock.state.activeDebugSession = session;
  const text = ['x := y + nosuch;', 'y := x + Idle;', 'z := 1;'];
  const document = { getText: () => text.slice(0, 2).join('\n'), lineAt: (l) => ({ text: text[l] }) };
  const values = await new ScanbackInlineValues().provideInlineValues(
    document,
    new vscode.Range(0, 0, 2, 0),
    { frameId: 4, stoppedLocation: new vscode.Range(1, 0, 1, 7) },
  );
  assert.deepEqual(session.requests, [{ command: 'scanback/values', args: { frameId: 4, expressions: ['x', 'y', 'nosuch', 'Idle'] } }]);
  assert.deepEqual(
    values.map((v) => [v.range.start.line, v.range.start.character, v.text]),
    [
      [0, 0, 'x = <x>'],
      [0, 5, 'y = <y>'],
      [1, 0, 'y = <y>'],
      [1, 5, 'x = <x>'],
    ],
  );
  mock.state.settings['scanback.inlineValues.enabled'] = false;
  assert.deepEqual(await new ScanbackInlineValues().provideInlineValues(document, new vscode.Range(0, 0, 2, 0), { frameId: 4, stoppedLocation: new vscode.Range(1, 0, 1, 7) }), []);
});

test('flow: ran lines are marked and the others dimmed, in the editor of their file only', async () => {
  const flow = { cycle: 9, ran: [{ file: '/p/main.st', line: 3 }, { file: '/p/main.st', line: 5 }], notRan: [{ file: '/p/main.st', line: 7 }, { file: '/p/lib.st', line: 2 }] };
  assert.deepEqual(linesOf(flow, '/p/main.st'), { ran: [2, 4], notRan: [6] });
  const set = [];
  const editor = (file) => ({ document: { uri: vscode.Uri.file(file) }, setDecorations: (type, ranges) => set.push([file, type.options.opacity ? 'dim' : 'ran', ranges.map((r) => r.start.line)]) });
  vscode.window.visibleTextEditors = [editor('/p/main.st')];
  const decorations = new FlowDecorations();
  const session = mock.fakeSession({ type: 'scanback' }, () => flow);
  await decorations.refresh(session, 1);
  assert.deepEqual(session.requests, [{ command: 'scanback/flow', args: { frameId: 1 } }]);
  assert.deepEqual(set, [
    ['/p/main.st', 'ran', [2, 4]],
    ['/p/main.st', 'dim', [6]],
  ]);
  // Turned off: no request, and the decorations are removed.
  set.length = 0;
  mock.state.settings['scanback.flow.enabled'] = false;
  await decorations.refresh(session, 1);
  assert.equal(session.requests.length, 1);
  assert.deepEqual(set, [
    ['/p/main.st', 'ran', []],
    ['/p/main.st', 'dim', []],
  ]);
  vscode.window.visibleTextEditors = [];
});

test("Log Over History reads the command's lines and the session's trace", () => {
  assert.deepEqual(parseLogOutput('1:1  a[1] gets 6\n4:1  a[2] gets 10\nnoise\n'), [
    { cycle: 1, step: 1, message: 'a[1] gets 6' },
    { cycle: 4, step: 1, message: 'a[2] gets 10' },
  ]);
  assert.equal(traceOf({ trace: 'run.trace', cwd: '/p' }), '/p/run.trace');
  assert.equal(traceOf({ trace: '/abs/run.trace', cwd: '/p' }), '/abs/run.trace');
  assert.equal(traceOf({ program: ['/p/*.st'] }), undefined);
});

test('Log Over History: each Debug Console line has its position and a link to the statement; Go to a Logged Position… travels', async () => {
  // A stand-in for `scanback trace log` that prints two messages (and says what it was asked).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scanback-log-'));
  const fake = path.join(dir, 'scanback');
  fs.writeFileSync(fake, `#!/bin/sh\necho "$@" > ${dir}/args\nprintf '3:1  x = 4\\n9:1  x = 10\\n'\n`, { mode: 0o755 });
  try {
    mock.state.settings['scanback.path'] = fake;
    mock.state.workspaceFolders = [{ uri: vscode.Uri.file('/p'), name: 'p', index: 0 }];
    mock.state.activeTextEditor = { ...mock.fakeEditor('/p/src/main.st'), selection: { active: { line: 11 } } };
    mock.state.inputBoxAnswer = 'x = {x}';
    mock.state.quickPickAnswer = (items) => items[1];
    const session = mock.fakeSession({ type: 'scanback', request: 'launch', trace: 'run.trace', cwd: '/p' });
    const lines = await log.logOverHistory('/ext', session);
    assert.deepEqual(lines, [
      { cycle: 3, step: 1, message: 'x = 4' },
      { cycle: 9, step: 1, message: 'x = 10' },
    ]);
    assert.equal(fs.readFileSync(path.join(dir, 'args'), 'utf8').trim(), 'trace log /p/run.trace /p/src/main.st:12 x = {x} --limit 10000');
    // The location is relative to the workspace folder, as the Debug Console links it.
    assert.deepEqual(mock.calls.console, [
      'Log Over History, main.st:12: 2 message(s); Go to a Logged Position… travels to one',
      '3:1  x = 4  (./src/main.st:12)',
      '9:1  x = 10  (./src/main.st:12)',
    ]);
    assert.deepEqual(session.requests, [{ command: 'scanback/seek', args: { cycle: 9, step: 1 } }]);
    // The list again, later: the first message this time.
    mock.state.quickPickAnswer = (items) => items[0];
    assert.deepEqual(await log.goToLoggedPosition(session), { cycle: 3, step: 1, message: 'x = 4' });
    assert.deepEqual(session.requests.at(-1), { command: 'scanback/seek', args: { cycle: 3, step: 1 } });
    assert.equal(mock.calls.quickPick.at(-1).options.title, 'Go to a logged position: main.st:12');
    // Another session has no messages of its own.
    const other = mock.fakeSession({ type: 'scanback', request: 'launch', trace: 'b.trace' });
    assert.equal(await log.goToLoggedPosition(other), undefined);
    assert.match(mock.calls.info.at(-1), /no Log Over History of this session yet/);
    assert.equal(other.requests.length, 0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a logged statement outside the workspace is linked by its absolute path', () => {
  assert.equal(log.locationText('/p/a.st', 4, 'a.st'), './a.st:4');
  assert.equal(log.locationText('/elsewhere/b.st', 7, '/elsewhere/b.st'), '/elsewhere/b.st:7');
  assert.equal(log.locationText('/elsewhere/b.st', 7, '../elsewhere/b.st'), '/elsewhere/b.st:7');
  assert.equal(log.consoleLine({ cycle: 5, step: 2, message: 'm' }, './a.st:4'), '5:2  m  (./a.st:4)');
});
