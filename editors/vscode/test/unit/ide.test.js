'use strict';
// Issue 31's extension logic: errors in Problems after a failed launch and from Check Project, the
// status of where a session is, the writer of a data breakpoint stop, the Scan Timeline's markers,
// axis and kept lanes, the stimulus F5 takes, the keys and the toolbar.
const test = require('node:test');
const assert = require('node:assert/strict');
const vscode = require('./vscode-mock');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const {
  parseCheckOutput,
  diagnosticsOfResponse,
  compileFailureText,
  startFailure,
  takeOverStartFailure,
  projectFiles,
  countText,
} = require('../../out-test/problems');
const { whereabouts, writerOfDescription, sessionKind } = require('../../out-test/where');
const { validMarkers, parseViewMessage } = require('../../out-test/timeline/protocol');
const { TimelineViewProvider, lanesKey, recordingMarkers, writeMarkers } = require('../../out-test/timeline/provider');
const { ticksOf, timeAtCycle } = require('../../out-test/timeline/view/axis');
const { configurationForFile } = require('../../out-test/configuration');
const manifest = require('../../package.json');

const mock = vscode.__mock;
test.beforeEach(() => mock.reset());

const failedLaunch = {
  type: 'response',
  command: 'launch',
  success: false,
  message: "the program does not compile:\n/p/programs.st:119:5: error: expected ';'\n/p/fbs.st:3:1: error: unknown type 'Foo'\n",
  body: {
    error: { id: 1, format: 'the program does not compile: ...', showUser: true },
    diagnostics: [
      { path: '/p/programs.st', line: 119, column: 5, endLine: 119, endColumn: 6, severity: 'error', message: "expected ';'" },
      { path: '/p/fbs.st', line: 3, column: 1, endLine: 3, endColumn: 4, severity: 'error', message: "unknown type 'Foo'" },
      { path: '/p/fbs.st', line: 9, column: 1, severity: 'warning', message: 'implicit conversion' },
      { path: 7, line: 'x' },
    ],
  },
};

test('a launch that does not compile: its diagnostics, one message naming the count and the first, Problems', () => {
  const list = diagnosticsOfResponse(failedLaunch.body);
  assert.equal(list.length, 3, 'the malformed entry is left out');
  assert.equal(countText(list), '2 errors, 1 warning');
  assert.equal(
    compileFailureText(list),
    "scanback: the program does not compile (2 errors, 1 warning); see Problems. The first: programs.st:119: expected ';'.",
  );
  const f = startFailure(failedLaunch, false);
  assert.equal(f.showProblems, true);
  assert.equal(f.openLaunchJson, false, 'F5 without a launch.json: no button to open one');
  assert.equal(startFailure(failedLaunch, true).openLaunchJson, true);
});

test('a failed start is taken over: VS Code is told not to show it (showUser false), the extension says it once', () => {
  const response = JSON.parse(JSON.stringify(failedLaunch));
  takeOverStartFailure(response, false);
  assert.equal(response.body.error.showUser, false);
  assert.equal(response.body.error.format, failedLaunch.body.error.format);
  const attach = { command: 'attach', success: false, message: 'the runtime at unix:///x refused: wrong token', body: { error: { format: 'the runtime at unix:///x refused: wrong token', showUser: true } } };
  const f = takeOverStartFailure(attach, false);
  assert.equal(f.text, 'scanback: cannot attach: the runtime at unix:///x refused: wrong token');
  assert.equal(f.showProblems, false);
  assert.equal(attach.body.error.showUser, false);
  const bare = { command: 'launch', success: false, message: 'no file matches' };
  takeOverStartFailure(bare, true);
  assert.deepEqual(bare.body.error, { format: 'no file matches', showUser: false });
});

test("scanback check's output is read into diagnostics, paths with colons included, notes left out", () => {
  const out = parseCheckOutput(
    "/a b/c:d/programs.st:12:7: error: 'x' is not declared\n/a/t.st:3:1: warning: unused\nerror: no location\n/a/t.st:4:1: note: declared here\n",
  );
  assert.deepEqual(out, [
    { path: '/a b/c:d/programs.st', line: 12, column: 7, severity: 'error', message: "'x' is not declared" },
    { path: '/a/t.st', line: 3, column: 1, severity: 'warning', message: 'unused' },
  ]);
});

test('Check Project compiles the .st files of the active file\'s folder, else of the workspace folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'scanback-check-'));
  try {
    for (const name of ['b.st', 'a.ST', 'notes.md']) writeFileSync(join(dir, name), '');
    assert.deepEqual(projectFiles(join(dir, 'b.st'), '/elsewhere'), [join(dir, 'a.ST'), join(dir, 'b.st')]);
    assert.deepEqual(projectFiles(undefined, dir), [join(dir, 'a.ST'), join(dir, 'b.st')]);
    assert.deepEqual(projectFiles(undefined, undefined), []);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('F5 without a launch.json takes the folder\'s stimulus.csv when there is one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'scanback-stimulus-'));
  try {
    writeFileSync(join(dir, 'main.st'), '');
    assert.equal(configurationForFile(join(dir, 'main.st')).inputs, undefined);
    writeFileSync(join(dir, 'stimulus.csv'), 'cycle\n');
    assert.equal(configurationForFile(join(dir, 'main.st')).inputs, join(dir, 'stimulus.csv'));
  } finally {
    rmSync(dir, { recursive: true });
  }
});

const base = { firstCycle: 10, lastCycle: 500, firstTimeNs: 0, lastTimeNs: 4_900_000_000, tasks: [], gaps: [], live: true };

test('where you are: history with the runtime running, live at the newest position, replay', () => {
  const attach = sessionKind({ request: 'attach' });
  const history = whereabouts({ ...base, cycle: 120, step: 3, timeNs: 0, newest: { cycle: 500, step: 7 }, running: true }, attach);
  assert.equal(history.text, '$(history) history, cycle 120 of 500 — runtime running');
  assert.equal(history.inHistory, true);
  assert.equal(history.live, true);
  assert.match(history.tooltip, /read-only/);
  const live = whereabouts({ ...base, cycle: 500, step: 7, timeNs: 0, newest: { cycle: 500, step: 7 }, running: true }, attach);
  assert.equal(live.text, '$(pulse) live, cycle 500 — runtime running');
  assert.equal(live.inHistory, false);
  const paused = whereabouts({ ...base, cycle: 500, step: 2, timeNs: 0, newest: { cycle: 500, step: 7 } }, sessionKind({ request: 'launch' }));
  assert.equal(paused.text, '$(history) history, cycle 500 of 500', 'a step back within the newest cycle is history too');
  const replay = whereabouts({ ...base, live: false, cycle: 42, step: 0, timeNs: 0 }, sessionKind({ request: 'launch', trace: '/t.trace' }));
  assert.equal(replay.text, '$(history) replay, cycle 42 of 10..500');
  assert.equal(replay.inHistory, true);
  assert.equal(replay.live, false, 'no live edge to go to');
});

test("a data breakpoint stop's description names the writer the editor marks", () => {
  assert.deepEqual(writerOfDescription('gMotor.run: FALSE → TRUE (programs.st:119)'), {
    variable: 'gMotor.run',
    change: 'FALSE → TRUE',
    file: 'programs.st',
    line: 119,
  });
  assert.deepEqual(writerOfDescription("Line.name: 'a (b)' → 'c' (my file.st:7)")?.line, 7);
  assert.equal(writerOfDescription('Main.x: 1 → 2 (scan inputs)'), undefined);
  assert.equal(writerOfDescription('Paused on data breakpoint'), undefined);
});

test('markers: only well-formed ones, at most the limit', () => {
  const markers = validMarkers([
    { cycle: 3, kind: 'breakpoint', label: 'hit' },
    { cycle: 4, step: 2, kind: 'write', label: 'x := 1' },
    { cycle: -1, kind: 'fault', label: 'bad cycle' },
    { cycle: 5, kind: 'sparkle', label: 'unknown kind' },
    { cycle: 6, kind: 'gap' },
    'nonsense',
  ]);
  assert.deepEqual(markers, [
    { cycle: 3, kind: 'breakpoint', label: 'hit' },
    { cycle: 4, step: 2, kind: 'write', label: 'x := 1' },
  ]);
  assert.equal(validMarkers(Array.from({ length: 900 }, (_, i) => ({ cycle: i, kind: 'write', label: '' }))).length, 500);
  assert.equal(validMarkers('x').length, 0);
});

test('the timeline gives fault and gap markers; a lane its writes at the writing statements', () => {
  const t = { ...base, cycle: 0, step: 0, timeNs: 0, gaps: [{ firstCycle: 100, cycleCount: 5 }], fault: { cycle: 499, step: 3, message: 'division by zero' } };
  assert.deepEqual(recordingMarkers(t), [
    { cycle: 100, kind: 'gap', label: 'cycles 100..104 dropped by the recorder' },
    { cycle: 499, step: 3, kind: 'fault', label: 'fault: division by zero' },
  ]);
  const signals = {
    firstCycle: 0,
    lastCycle: 500,
    signals: [{ variable: 'Line.run', changes: [{ cycle: 7, step: 4, timeNs: 0, value: { text: 'TRUE' } }, { cycle: 9, step: 0, timeNs: 0, value: { text: 'FALSE' } }] }],
  };
  assert.deepEqual(writeMarkers(signals), [
    { cycle: 7, step: 3, kind: 'write', label: 'Line.run := TRUE' },
    { cycle: 9, step: 0, kind: 'write', label: 'Line.run := FALSE' },
  ]);
});

test('the time axis: round cycles inside the window, times between the known ends', () => {
  assert.deepEqual(ticksOf({ first: 0, last: 1999 }, 5), [0, 500, 1000, 1500]);
  assert.deepEqual(ticksOf({ first: 13, last: 47 }, 4), [20, 30, 40]);
  assert.deepEqual(ticksOf({ first: 5, last: 5 }), [5]);
  assert.equal(timeAtCycle(255, base), 2_450_000_000);
});

function memento(initial = {}) {
  const values = { ...initial };
  return { values, get: (k) => values[k], update: (k, v) => ((values[k] = v), Promise.resolve()) };
}

test('lanes survive a reload of the window: kept in workspaceState and shown again', async () => {
  const store = memento();
  const first = new TimelineViewProvider(vscode.Uri.file('/ext'), store);
  const session = mock.fakeSession({ request: 'launch', trace: '/t.trace' }, () => ({ firstCycle: 0, lastCycle: 0, signals: [] }));
  await first.addSignal(session, ['Line.run']);
  await first.addSignal(session, ['Tank.level']);
  first.removeSignal('Line.run');
  assert.deepEqual(store.values[lanesKey], ['Tank.level']);
  const again = new TimelineViewProvider(vscode.Uri.file('/ext'), memento({ [lanesKey]: ['Tank.level', 3, ''] }));
  assert.deepEqual(again.signalVariables, ['Tank.level']);
});

test('End in the timeline (goToLive) sends scanback/goToLive; markers are resent on ready', async () => {
  assert.deepEqual(parseViewMessage({ type: 'goToLive' }), { type: 'goToLive' });
  const provider = new TimelineViewProvider(vscode.Uri.file('/ext'));
  const session = mock.fakeSession({ request: 'attach' }, () => ({}));
  provider.sessionStarted(session);
  await provider.receive({ type: 'goToLive' });
  assert.deepEqual(session.requests.map((r) => r.command), ['scanback/goToLive']);
  const posted = [];
  provider.resolveWebviewView({
    webview: { options: undefined, html: '', cspSource: 'x', asWebviewUri: (u) => u, postMessage: (m) => (posted.push(m), Promise.resolve(true)), onDidReceiveMessage: () => ({ dispose() {} }) },
    onDidDispose: () => ({ dispose() {} }),
  });
  provider.setMarkers('divergences', [{ cycle: 9, kind: 'divergence', label: 'first divergence' }]);
  posted.length = 0;
  await provider.receive({ type: 'ready' });
  assert.deepEqual(posted.filter((m) => m.type === 'markers'), [
    { type: 'markers', source: 'divergences', markers: [{ cycle: 9, kind: 'divergence', label: 'first divergence' }] },
  ]);
});

test('the Scan Timeline is a view of its own container in the bottom panel', () => {
  const panel = manifest.contributes.viewsContainers.panel.find((c) => c.id === 'scanback-panel');
  assert.ok(panel);
  assert.deepEqual(manifest.contributes.views['scanback-panel'].map((v) => v.id), ['scanback.timeline']);
  // Run and Debug keeps the Why? view (issue 33), not the timeline.
  assert.deepEqual(manifest.contributes.views.debug.map((v) => v.id), ['scanback.why', 'scanback.forced']);
});

test('the back buttons sit right after their forward twins, with icons of their own; Go to Live only in history', () => {
  const toolbar = manifest.contributes.menus['debug/toolBar'];
  const order = (command) => Number(toolbar.find((i) => i.command === command).group.split('@')[1]);
  // VS Code's own: Step Into 30, Step Out 40, Step Back 50, Reverse Continue 55, Restart 60, Stop 70.
  assert.equal(order('scanback.stepBackInto'), 31);
  assert.equal(order('scanback.stepBackOut'), 41);
  assert.ok(order('scanback.reloadRuntime') > 60 && order('scanback.reloadRuntime') < 70);
  assert.match(toolbar.find((i) => i.command === 'scanback.goToLive').when, /scanback\.inHistory && scanback\.live/);
  const icon = (command) => manifest.contributes.commands.find((c) => c.command === command).icon;
  assert.notDeepEqual(icon('scanback.stepBackInto'), icon('scanback.stepBackOut'));
  assert.notEqual(icon('scanback.reloadRuntime'), '$(debug-restart)');
  for (const command of ['scanback.stepBackInto', 'scanback.stepBackOut'])
    for (const theme of ['light', 'dark']) assert.ok(require('node:fs').existsSync(join(__dirname, '../..', icon(command)[theme])));
});

test('a scanback-trace URI names the trace (hex) and the recorded path; anything else names none', () => {
  const { parseTraceUri, traceUri } = require('../../out-test/traceSources');
  const uri = traceUri('/tmp/my plant.trace', '/home/ci/plant/programs.st');
  assert.equal(uri, `scanback-trace://${Buffer.from('/tmp/my plant.trace').toString('hex')}/home/ci/plant/programs.st`);
  const [authority, ...rest] = uri.slice('scanback-trace://'.length).split('/');
  assert.deepEqual(parseTraceUri({ authority, path: '/' + rest.join('/') }), { trace: '/tmp/my plant.trace', file: '/home/ci/plant/programs.st' });
  assert.equal(parseTraceUri({ authority: 'zz', path: '/x.st' }), undefined);
  assert.equal(parseTraceUri({ authority: Buffer.from('relative.trace').toString('hex'), path: '/x.st' }), undefined);
  assert.equal(parseTraceUri({ authority: Buffer.from('/t.trace').toString('hex'), path: 'x.st' }), undefined);
});

test('the scanback-trace file system reads a source out of its trace (by recorded path, else by name), read-only; what it cannot read is FileNotFound', async () => {
  const { TraceSourceFileSystem, traceUri } = require('../../out-test/traceSources');
  const { chmodSync, readFileSync } = require('node:fs');
  const dir = mkdtempSync(join(tmpdir(), 'scanback-trace-fs-'));
  try {
    // A stand-in for `scanback trace dump TRACE --source FILE`: this trace recorded programs.st by
    // a relative path, so only its name is found; each call is logged.
    const log = join(dir, 'calls');
    const binary = join(dir, 'scanback');
    writeFileSync(binary, `#!/bin/sh\necho "$*" >> '${log}'\nif [ "$5" = programs.st ]; then printf 'PROGRAM P\\nEND_PROGRAM\\n'; exit 0; fi\necho "no source $5 in $3" >&2; exit 2\n`);
    chmodSync(binary, 0o755);
    const trace = join(dir, 'plant.trace');
    writeFileSync(trace, 'a trace');
    const files = new TraceSourceFileSystem(() => binary);
    const uriOf = (file) => {
      const text = traceUri(trace, file);
      const rest = text.slice('scanback-trace://'.length);
      return { authority: rest.slice(0, rest.indexOf('/')), path: rest.slice(rest.indexOf('/')), toString: () => text };
    };
    const programs = uriOf('/elsewhere/examples/plant/programs.st');
    assert.equal(Buffer.from(await files.readFile(programs)).toString(), 'PROGRAM P\nEND_PROGRAM\n');
    const stat = await files.stat(programs);
    assert.deepEqual({ type: stat.type, size: stat.size, permissions: stat.permissions }, { type: 1, size: 22, permissions: 1 });
    // Read once: the recorded path, then the name.
    assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n'), [
      `trace dump ${trace} --source /elsewhere/examples/plant/programs.st`,
      `trace dump ${trace} --source programs.st`,
    ]);
    await assert.rejects(files.readFile(uriOf('/elsewhere/other.st')), (e) => e.code === 'FileNotFound' && /no source other\.st in/.test(e.message));
    await assert.rejects(files.stat({ authority: 'zz', path: '/x.st', toString: () => 'scanback-trace://zz/x.st' }), (e) => e.code === 'FileNotFound' && /names no trace/.test(e.message));
    rmSync(trace);
    await assert.rejects(files.readFile(programs), (e) => e.code === 'FileNotFound' && /is not there any more/.test(e.message));
    for (const write of [() => files.writeFile(programs), () => files.delete(programs), () => files.rename(programs), () => files.createDirectory(programs)])
      assert.throws(write, (e) => e.code === 'NoPermissions');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
