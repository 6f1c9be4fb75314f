'use strict';
// Compare runs (issue 32): what the commands ask the adapter and `scanback rerun`, and how the
// divergences are listed, travelled to and marked on the Scan Timeline.
const test = require('node:test');
const assert = require('node:assert/strict');
const vscode = require('./vscode-mock');
const compare = require('../../out-test/compare/compare');

const mock = vscode.__mock;
test.beforeEach(() => {
  mock.reset();
  mock.commands.clear();
});

const replay = { type: 'scanback', request: 'launch', name: 'Replay day.trace', trace: '/work/plant/day.trace', cwd: '/work/plant' };

// As `scanback trace diff --json` prints it for the README's walk-through (docs/compare.md).
const diff = (sessionIs = 'a') => ({
  equal: false,
  a: { path: '/work/plant/day.trace', programHash: 'aaa', firstCycle: 0, lastCycle: 499, cycles: 500 },
  b: { path: '/work/plant/fix.trace', programHash: 'bbb', firstCycle: 0, lastCycle: 499, cycles: 500 },
  compared: { firstCycle: 0, lastCycle: 499, cycles: 500, notComparedInA: 0, notComparedInB: 0 },
  firstDivergence: {
    cycle: 293,
    task: 'Fast',
    startNs: 2660000000,
    step: 12,
    kind: 'pathsSplit',
    a: { statement: 88, location: 'fbs.st:167', text: 'active := TRUE;' },
    b: { statement: 90, location: 'fix/fbs.st:170', text: 'IF ack AND NOT condition THEN' },
  },
  pathsSplit: {
    cycle: 292,
    step: 51,
    cycles: 59,
    a: { statement: 70, location: 'fbs.st:135', text: 'fault := TRUE;' },
    b: { statement: 71, location: 'fix/fbs.st:138', text: 'running := out AND feedback;' },
  },
  values: [
    { name: 'gAlarms[2].count', output: false, equal: false, firstCycle: 293, lastCycle: 347, cycles: 55, first: { a: '1', b: '0' } },
    { name: 'gBottlesOut', output: false, equal: true },
  ],
  differing: 1,
  sessionIs,
});

test('The divergences list the first one first, with what A and B run there, and each value that differs', () => {
  const list = compare.divergencesOf(diff());
  assert.equal(list.length, 3);
  assert.match(list[0].label, /First divergence: the statement paths split at cycle 293, step 12/);
  assert.equal(list[0].cycle, 293);
  assert.equal(list[0].step, 12);
  assert.match(list[0].detail, /^A next: fbs\.st:167  active := TRUE;\nB next: fix\/fbs\.st:170/);
  assert.match(list[1].label, /Statement paths first split at cycle 292, step 51/);
  assert.equal(list[2].label, 'gAlarms[2].count differs from cycle 293');
  assert.match(list[2].description, /in 55 cycles \(293\.\.347\); first: A 1, B 0/);
  assert.equal(list[2].step, undefined);
  assert.deepEqual(compare.divergencesOf({ ...diff(), equal: true, firstDivergence: undefined, pathsSplit: undefined, values: [] }), []);
});

test('Where the paths split is listed also after a first divergence of a value (a changed constant differs from cycle 0 on)', () => {
  // `trace diff day.trace fix.trace` without --vars: the raised timeout differs at 0:0, the paths split at 292:51.
  const body = {
    ...diff(),
    firstDivergence: {
      cycle: 0, task: 'Fast', startNs: 0, step: 0, kind: 'value', a: null, b: null,
      values: ['Line.motor.timeout'], first: { name: 'Line.motor.timeout', a: 'T#500ms', b: 'T#1s' },
    },
  };
  const list = compare.divergencesOf(body);
  assert.match(list[0].label, /^First divergence: Line\.motor\.timeout differ at cycle 0, step 0/);
  assert.equal(list[1].label, 'Statement paths first split at cycle 292, step 51');
  assert.equal(list[1].description, 'in 59 cycles', 'not "before any compared value differs": one did');
  assert.deepEqual([list[1].cycle, list[1].step], [292, 51]);
  assert.match(list[1].detail, /^A next: fbs\.st:135  fault := TRUE;\nB next: fix\/fbs\.st:138/);
  // The same split as the first divergence is listed once.
  const once = compare.divergencesOf({ ...diff(), firstDivergence: { ...diff().firstDivergence, cycle: 292, step: 51 } });
  assert.equal(once.filter((x) => x.cycle === 292 && x.step === 51).length, 1);
});

test('The markers are the timeline\'s generic markers message, one per divergence', () => {
  const m = compare.markersOf(diff());
  assert.equal(m.type, 'markers');
  assert.equal(m.source, 'compare');
  assert.deepEqual(
    m.markers.map((x) => [x.cycle, x.step, x.kind]),
    [
      [293, 12, 'divergence'],
      [292, 51, 'divergence'],
      [293, undefined, 'divergence'],
    ],
  );
  assert.ok(!('step' in m.markers[2]), 'no step where there is no statement to go to');
});

test('A and B are named with the session\'s side wherever they could be confused', () => {
  assert.deepEqual(compare.sideNames(diff('a')), { a: 'A day.trace (this session)', b: 'B fix.trace' });
  assert.deepEqual(compare.sideNames(diff('b')), { a: 'A day.trace', b: 'B fix.trace (this session)' });
  assert.match(compare.summaryOf(diff()), /A day\.trace \(this session\) against B fix\.trace: DIFFERENT, 1 of 2 compared values, from cycle 293/);
});

test('Compare With Recording… asks scanback/compare with the picked trace as B, marks the timeline, and a pick travels there', async () => {
  const session = mock.fakeSession(replay, (command) => (command === 'scanback/compare' ? diff('a') : {}));
  mock.state.openDialogAnswer = [vscode.Uri.file('/work/plant/fix.trace')];
  mock.state.quickPickAnswer = (items) => items[0];
  const posted = [];
  const body = await compare.compareWithRecording(session, { postMarkers: (m) => posted.push(m) });
  assert.equal(body.firstDivergence.cycle, 293);
  assert.deepEqual(session.requests, [
    { command: 'scanback/compare', args: { trace: '/work/plant/fix.trace', sessionIs: 'a' } },
    { command: 'scanback/seek', args: { cycle: 293, step: 12 } },
  ]);
  assert.match(mock.calls.openDialog[0].title, /Compare A day\.trace \(this session\) with B/);
  assert.match(mock.calls.quickPick[0].options.title, /A day\.trace \(this session\) \/ B fix\.trace/);
  assert.equal(posted.length, 1);
  assert.equal(posted[0].markers.length, 3);
});

test('Compare With Recording… needs a replay session and says so; an error of the adapter is shown', async () => {
  const live = mock.fakeSession({ type: 'scanback', request: 'launch', name: 'Live', program: ['/p/*.st'] });
  assert.equal(await compare.compareWithRecording(live), undefined);
  assert.deepEqual(live.requests, []);
  assert.match(mock.calls.info[0], /replay session/);

  const failing = mock.fakeSession(replay, () => {
    throw new Error('trace B (/work/plant/x.trace): cannot open');
  });
  mock.state.openDialogAnswer = [vscode.Uri.file('/work/plant/x.trace')];
  assert.equal(await compare.compareWithRecording(failing), undefined);
  assert.match(mock.calls.error[0], /cannot compare with \/work\/plant\/x\.trace: trace B/);
});

test('What If: Rerun… runs scanback rerun with the confirmed sources, opens the result as B and compares it with A', async () => {
  const session = mock.fakeSession(replay);
  mock.state.workspaceFolders = [{ uri: vscode.Uri.file('/work/plant'), name: 'plant', index: 0 }];
  mock.state.files = ['/work/plant/fix/fbs.st', '/work/plant/fix/programs.st'];
  mock.state.quickPickAnswer = (items, options) => (options.canPickMany ? items : items[0]);
  const rerunSession = mock.fakeSession({}, (command) => (command === 'scanback/compare' ? diff('b') : {}));
  const ran = [];
  const runner = (binary, args, cwd) => (ran.push({ binary, args, cwd }), Promise.resolve({ code: 0, output: '' }));
  const started = vscode.debug.startDebugging;
  vscode.debug.startDebugging = (folder, config) => {
    rerunSession.name = config.name;
    setImmediate(() => mock.events.didStartSession.fire(rerunSession));
    return started(folder, config);
  };
  try {
    const exists = (p) => p === '/work/plant/day.rerun-1.trace';
    const body = await compare.rerunWithOpenProgram(session, '/opt/scanback', undefined, runner, exists);
    assert.equal(body.sessionIs, 'b');
  } finally {
    vscode.debug.startDebugging = started;
  }
  assert.deepEqual(ran, [
    {
      binary: '/opt/scanback',
      args: ['rerun', '/work/plant/day.trace', '/work/plant/fix/fbs.st', '/work/plant/fix/programs.st', '--record', '/work/plant/day.rerun-2.trace'],
      cwd: '/work/plant',
    },
  ]);
  const launched = mock.calls.startDebugging[0].config;
  assert.equal(launched.trace, '/work/plant/day.rerun-2.trace');
  assert.equal(launched.name, 'What if: B day.rerun-2.trace (rerun of A day.trace)');
  assert.deepEqual(rerunSession.requests[0], { command: 'scanback/compare', args: { trace: '/work/plant/day.trace', sessionIs: 'b' } });
});

test('A rerun whose program does not compile opens nothing and says why', async () => {
  const session = mock.fakeSession(replay);
  mock.state.files = ['/work/plant/programs.st'];
  mock.state.quickPickAnswer = (items) => items;
  const runner = () => Promise.resolve({ code: 1, output: 'programs.st:3:1: error: expected END_PROGRAM' });
  assert.equal(await compare.rerunWithOpenProgram(session, '/opt/scanback', undefined, runner, () => false), undefined);
  assert.equal(mock.calls.startDebugging.length, 0);
  assert.match(mock.calls.error[0], /does not compile.*\n.*expected END_PROGRAM/s);
  assert.deepEqual(compare.rerunOutcome(4), { recorded: true, what: 'stopped at the first divergence' });
});

test('The replay context key (the commands\' when clause) follows the active session', () => {
  const { activate } = require('../../out-test/extension');
  const environmentVariableCollection = { description: '', prepend() {}, clear() {} };
  activate({ subscriptions: [], extensionPath: '/ext', extensionUri: vscode.Uri.file('/ext'), environmentVariableCollection, workspaceState: { get() {}, update() {} } });
  assert.ok(mock.commands.has('scanback.compareWithRecording'));
  assert.ok(mock.commands.has('scanback.rerun'));
  const replayKey = () => mock.calls.setContext.filter((c) => c[0] === 'scanback.replay').at(-1);
  mock.state.activeDebugSession = mock.fakeSession(replay);
  mock.events.didChangeActiveSession.fire(mock.state.activeDebugSession);
  assert.deepEqual(replayKey(), ['scanback.replay', true]);
  mock.state.activeDebugSession = mock.fakeSession({ type: 'scanback', request: 'launch', name: 'L', program: ['/p/*.st'] });
  mock.events.didChangeActiveSession.fire(mock.state.activeDebugSession);
  assert.deepEqual(replayKey(), ['scanback.replay', false]);
});
