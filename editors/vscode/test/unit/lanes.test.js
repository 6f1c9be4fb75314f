'use strict';
// Waveform lanes, the extension's side: Add to Scan Timeline turns a Variables/Watch context-menu
// argument (or a typed path) into scanback/signals requests over the range the view shows, keeps
// one request in flight, and turns failures into lanes that say what went wrong. The lane geometry
// the page draws from (lane-model, axis) is checked here too.
const test = require('node:test');
const assert = require('node:assert/strict');
const vscode = require('./vscode-mock');
const { TimelineViewProvider, defaultMaxPoints } = require('../../out-test/timeline/provider');
const { addToScanTimeline, candidatePaths, frameInstance, variableOfMenu } = require('../../out-test/commands');
const model = require('../../out-test/timeline/view/lane-model');
const axis = require('../../out-test/timeline/view/axis');

const mock = vscode.__mock;
test.beforeEach(() => mock.reset());

const timeline = {
  firstCycle: 0,
  lastCycle: 1999,
  firstTimeNs: 0,
  lastTimeNs: 18_170_000_000,
  cycle: 400,
  step: 50,
  timeNs: 3_630_000_000,
  tasks: [{ threadId: 1, name: 'Fast', intervalNs: 10_000_000 }],
  gaps: [],
  live: false,
};

/** Variables the fake adapter knows (as scanback/signals resolves full paths). */
const known = new Set(['Line.conveyorOut', 'Line.motor.out', 'gTank.level', '%IX0.1']);
const signalOf = (variable) =>
  known.has(variable)
    ? { variable, type: 'BOOL', kind: 'bool', initial: { text: 'FALSE', number: 0 }, changes: [], complete: true }
    : { variable, error: `unknown name '${variable}'` };

function adapter({ frames = [{ id: 1, name: 'Line (LineControl)' }], fail } = {}) {
  return (command, args) => {
    if (command === 'scanback/timeline') return timeline;
    if (command === 'stackTrace') return { stackFrames: frames, totalFrames: frames.length };
    if (command === 'scanback/signals') {
      if (fail) throw new Error(fail);
      return { firstCycle: args.firstCycle ?? 0, lastCycle: args.lastCycle ?? 1999, signals: args.variables.map(signalOf) };
    }
    return {};
  };
}

function fakeView() {
  const posted = [];
  const listeners = [];
  return {
    posted,
    receive: (message) => Promise.all(listeners.map((l) => l(message))),
    webview: {
      options: undefined,
      html: '',
      cspSource: 'vscode-resource:',
      asWebviewUri: (uri) => uri,
      postMessage: (message) => (posted.push(message), Promise.resolve(true)),
      onDidReceiveMessage: (listener) => (listeners.push(listener), { dispose() {} }),
    },
    onDidDispose: () => ({ dispose() {} }),
  };
}

async function setUp(options) {
  const provider = new TimelineViewProvider(vscode.Uri.file('/ext'));
  const view = fakeView();
  provider.resolveWebviewView(view);
  const session = mock.fakeSession({ type: 'scanback', request: 'launch', name: 'Replay', trace: '/t/plant.trace' }, adapter(options));
  mock.state.activeDebugSession = session;
  provider.sessionStarted(session);
  await provider.stopped(session);
  session.requests.length = 0;
  return { provider, view, session };
}

const signalsRequests = (session) => session.requests.filter((r) => r.command === 'scanback/signals').map((r) => r.args);
const lastSignals = (view) => view.posted.filter((m) => m.type === 'signals').at(-1)?.signals;

// What VS Code passes to a debug/variables/context command: the scope (or the parent variable) and
// the variable (Variable.toJSON in the workbench's debugModel).
const fromInstanceScope = (name) => ({
  sessionId: 's',
  container: { name: 'Instance', variablesReference: 3, expensive: false },
  variable: { name, evaluateName: name, value: 'TRUE', type: 'BOOL', variablesReference: 0 },
});

test('Add to Scan Timeline on a frame variable: qualified with the frame instance, asked over the view range', async () => {
  const { provider, view, session } = await setUp();
  // The view says what it shows: cycles 100..900 on a lane 380 pixels wide.
  await view.receive({ type: 'requestSignals', firstCycle: 100, lastCycle: 900, maxPoints: 380 });
  assert.deepEqual(signalsRequests(session), [], 'no lanes yet: nothing is asked');
  const added = await addToScanTimeline(provider, fromInstanceScope('conveyorOut'));
  assert.equal(added, 'Line.conveyorOut');
  assert.deepEqual(
    session.requests.map((r) => r.command),
    ['stackTrace', 'scanback/signals', 'scanback/signals'],
  );
  // The first request only finds out which path the adapter knows, over one cycle.
  assert.deepEqual(signalsRequests(session)[0], {
    variables: ['Line.conveyorOut', 'conveyorOut'],
    firstCycle: 400,
    lastCycle: 400,
    maxPoints: 3,
  });
  assert.deepEqual(signalsRequests(session)[1], { variables: ['Line.conveyorOut'], firstCycle: 100, lastCycle: 900, maxPoints: 380 });
  assert.deepEqual(lastSignals(view).signals.map((s) => [s.variable, s.kind]), [['Line.conveyorOut', 'bool']]);
  assert.deepEqual(provider.signalVariables, ['Line.conveyorOut']);
});

test('the focused frame decides the instance: an FB frame qualifies with its instance path', async () => {
  const { provider, session } = await setUp({
    frames: [
      { id: 1, name: 'Line.motor (MotorCtl)' },
      { id: 2, name: 'Line (LineControl)' },
    ],
  });
  mock.state.activeStackItem = { session, threadId: 1, frameId: 1 };
  assert.equal(await addToScanTimeline(provider, fromInstanceScope('out')), 'Line.motor.out');
  mock.state.activeStackItem = { session, threadId: 1, frameId: 2 };
  assert.equal(await addToScanTimeline(provider, fromInstanceScope('conveyorOut')), 'Line.conveyorOut');
  assert.deepEqual(session.requests.filter((r) => r.command === 'stackTrace').map((r) => r.args), [{ threadId: 1 }, { threadId: 1 }]);
});

test('a global from the Globals scope or a watch expression naming a global is taken as written', async () => {
  const { provider, session } = await setUp();
  const global = {
    sessionId: 's',
    container: { name: 'Globals', variablesReference: 5, expensive: false },
    variable: { name: 'level', evaluateName: 'gTank.level', value: '50', variablesReference: 0 },
  };
  assert.equal(await addToScanTimeline(provider, global), 'gTank.level');
  assert.equal(session.requests.some((r) => r.command === 'stackTrace'), false, 'a global scope needs no frame');
  // A watch expression (Expression.toJSON: no container) is relative to the frame; the adapter
  // does not know Line.gTank.level, so the path as written is taken.
  session.requests.length = 0;
  const watch = { sessionId: 's', variable: { name: 'gTank.level', evaluateName: 'gTank.level', value: '50', variablesReference: 0 } };
  assert.equal(await addToScanTimeline(provider, watch), 'gTank.level');
  assert.deepEqual(signalsRequests(session)[0].variables, ['Line.gTank.level', 'gTank.level']);
  assert.deepEqual(provider.signalVariables, ['gTank.level'], 'a lane is added once');
});

test('from the command palette it asks for a path; cancelling adds nothing', async () => {
  const { provider, session } = await setUp();
  mock.state.inputBoxAnswer = undefined;
  assert.equal(await addToScanTimeline(provider), undefined);
  assert.deepEqual(signalsRequests(session), []);
  mock.state.inputBoxAnswer = '  Line.motor.out ';
  assert.equal(await addToScanTimeline(provider), 'Line.motor.out');
  assert.equal(mock.calls.inputBox.length, 2);
  assert.equal(mock.calls.inputBox[0].validateInput(''), 'Enter a variable path.');
  // Before the view has said what it shows, the whole history is asked for, at a default width.
  assert.deepEqual(signalsRequests(session).at(-1), { variables: ['Line.motor.out'], maxPoints: defaultMaxPoints });
});

test('without a scanback session the command says so and asks nothing', async () => {
  const provider = new TimelineViewProvider(vscode.Uri.file('/ext'));
  assert.equal(await addToScanTimeline(provider, fromInstanceScope('x'), undefined), undefined);
  assert.match(mock.calls.info[0], /needs a scanback debug session/);
});

test('an unknown variable gets a lane that says why; a failed request puts its message in every lane', async () => {
  const { provider, view } = await setUp();
  assert.equal(await addToScanTimeline(provider, fromInstanceScope('nope')), 'Line.nope');
  assert.deepEqual(lastSignals(view).signals, [{ variable: 'Line.nope', error: "unknown name 'Line.nope'" }]);

  const failing = await setUp({ fail: 'the recording holds no cycle yet' });
  mock.state.inputBoxAnswer = 'gTank.level';
  assert.equal(await addToScanTimeline(failing.provider), 'gTank.level');
  assert.deepEqual(lastSignals(failing.view).signals, [{ variable: 'gTank.level', error: 'the recording holds no cycle yet' }]);
});

test('zooms and scrolls ask again; one request is in flight, and the asks meanwhile become one', async () => {
  const { provider, view, session } = await setUp();
  mock.state.inputBoxAnswer = 'gTank.level';
  await addToScanTimeline(provider);
  // Hold the adapter's answers so requests pile up.
  const answers = [];
  const respond = session.customRequest;
  session.customRequest = function (command, args) {
    this.requests.push({ command, args });
    return new Promise((resolve) => answers.push(() => resolve(adapter()(command, args))));
  };
  session.requests.length = 0;
  const first = view.receive({ type: 'requestSignals', firstCycle: 0, lastCycle: 999, maxPoints: 400 });
  const second = view.receive({ type: 'requestSignals', firstCycle: 0, lastCycle: 499, maxPoints: 400 });
  const third = view.receive({ type: 'requestSignals', firstCycle: 250, lastCycle: 749, maxPoints: 400 });
  await new Promise(setImmediate);
  assert.equal(signalsRequests(session).length, 1, 'one request in flight');
  const posted = view.posted.length;
  answers.shift()();
  await new Promise(setImmediate);
  assert.equal(view.posted.length, posted, 'a stale answer is not posted: a newer one is coming');
  assert.deepEqual(
    signalsRequests(session).map((a) => [a.firstCycle, a.lastCycle]),
    [
      [0, 999],
      [250, 749],
    ],
    'the asks made meanwhile became one request, for the newest range',
  );
  answers.shift()();
  await Promise.all([first, second, third]);
  assert.deepEqual([lastSignals(view).firstCycle, lastSignals(view).lastCycle], [250, 749]);
  session.customRequest = respond;
});

test('remove drops the lane without asking the adapter; ready resends the lanes; a new session keeps them', async () => {
  const { provider, view, session } = await setUp();
  mock.state.inputBoxAnswer = 'gTank.level';
  await addToScanTimeline(provider);
  mock.state.inputBoxAnswer = '%IX0.1';
  await addToScanTimeline(provider);
  const asked = session.requests.length;
  await view.receive({ type: 'removeSignal', variable: 'gTank.level' });
  assert.equal(session.requests.length, asked);
  assert.deepEqual(lastSignals(view).signals.map((s) => s.variable), ['%IX0.1']);
  view.posted.length = 0;
  await view.receive({ type: 'ready' });
  assert.deepEqual(view.posted.map((m) => m.type).filter((t) => t !== 'markers'), ['session', 'timeline', 'signals']);
  // The writes of the lane still shown are its markers; the removed lane's are gone.
  for (const m of view.posted.filter((p) => p.type === 'markers').flatMap((p) => p.markers))
    assert.ok(m.kind === 'write' && m.label.startsWith('%IX0.1 := '), JSON.stringify(m));
  // A restarted session: the lanes stay, waiting for the new history's data.
  const again = mock.fakeSession({ type: 'scanback', request: 'launch', name: 'Replay', trace: '/t/plant.trace' }, adapter());
  provider.sessionStarted(again);
  assert.deepEqual(lastSignals(view).signals, [{ variable: '%IX0.1' }]);
  await view.receive({ type: 'requestSignals', firstCycle: 0, lastCycle: 10, maxPoints: 100 });
  assert.deepEqual(signalsRequests(again), [{ variables: ['%IX0.1'], firstCycle: 0, lastCycle: 10, maxPoints: 100 }]);
});

test('while comparing, each lane asks the other recording too and the view gets both; another session drops it', async () => {
  const { provider, view, session } = await setUp();
  mock.state.inputBoxAnswer = 'Line.conveyorOut';
  await addToScanTimeline(provider);
  await view.receive({ type: 'requestSignals', firstCycle: 0, lastCycle: 500, maxPoints: 200 });
  assert.equal(lastSignals(view).signals.length, 1);
  assert.equal(view.posted.filter((m) => m.type === 'signals').at(-1).compared, undefined, 'no compare: nothing else');
  session.requests.length = 0;
  // Compare With Recording… (the session is A) on the same lanes and range.
  await provider.setComparison(session, { trace: '/t/fixed.trace', sessionIs: 'a' });
  assert.deepEqual(signalsRequests(session), [
    { variables: ['Line.conveyorOut'], firstCycle: 0, lastCycle: 500, maxPoints: 200 },
    { variables: ['Line.conveyorOut'], firstCycle: 0, lastCycle: 500, maxPoints: 200, trace: '/t/fixed.trace' },
  ]);
  const message = view.posted.filter((m) => m.type === 'signals').at(-1);
  assert.equal(message.compared.side, 'B');
  assert.equal(message.compared.trace, '/t/fixed.trace');
  assert.deepEqual(message.compared.signals.signals.map((s) => [s.variable, s.kind]), [['Line.conveyorOut', 'bool']]);
  // A rerun opened as B: the other recording is A. Its failure is the other side's lane error only.
  const failing = mock.fakeSession({ type: 'scanback', request: 'launch', name: 'Rerun', trace: '/t/rerun.trace' }, (command, args) =>
    command === 'scanback/signals' && args.trace ? (() => { throw new Error('not a scanback trace'); })() : adapter()(command, args),
  );
  await provider.setComparison(failing, { trace: '/t/plant.trace', sessionIs: 'b' });
  const rerun = view.posted.filter((m) => m.type === 'signals').at(-1);
  assert.equal(rerun.compared.side, 'A');
  assert.equal(rerun.signals.signals[0].kind, 'bool', "the session's own lane is drawn");
  assert.match(rerun.compared.signals.signals[0].error, /plant\.trace: not a scanback trace/);
  // Another session: no compare.
  const other = mock.fakeSession({ type: 'scanback', request: 'launch', name: 'Replay', trace: '/t/plant.trace' }, adapter());
  provider.sessionStarted(other);
  await provider.requestSignals();
  assert.equal(view.posted.filter((m) => m.type === 'signals').at(-1).compared, undefined);
  assert.equal(signalsRequests(other).filter((a) => a.trace).length, 0);
});

test('context-menu arguments, frame names and candidate paths', () => {
  assert.deepEqual(variableOfMenu(fromInstanceScope('state')), { expression: 'state', global: false });
  assert.deepEqual(variableOfMenu({ container: { name: 'I/O', variablesReference: 9 }, variable: { name: 'Line.startPb', evaluateName: 'Line.startPb' } }), {
    expression: 'Line.startPb',
    global: true,
  });
  // A variable inside an expanded structure: its container is that variable, not a scope.
  assert.deepEqual(variableOfMenu({ container: { name: 'Globals', evaluateName: 'Globals' }, variable: { name: 'x', evaluateName: 'Globals.x' } }).global, false);
  assert.equal(variableOfMenu(undefined), undefined);
  assert.equal(variableOfMenu({ variable: {} }), undefined);
  assert.equal(frameInstance('Line (LineControl)'), 'Line');
  assert.equal(frameInstance('Line.alm[2] (AlarmLatch)'), 'Line.alm[2]');
  assert.equal(frameInstance('Monitor (Supervisor): end of cycle'), 'Monitor');
  assert.equal(frameInstance('Clamp'), 'Clamp');
  assert.deepEqual(candidatePaths('motor.out', 'Line'), ['Line.motor.out', 'motor.out']);
  assert.deepEqual(candidatePaths('Line.state', 'Line'), ['Line.state']);
  assert.deepEqual(candidatePaths('%QX0.1', 'Line'), ['%QX0.1']);
  assert.deepEqual(candidatePaths('gTank.level', undefined), ['gTank.level']);
});

const state = {
  variable: 'Line.state',
  kind: 'enum',
  initial: { text: 'Idle', number: 0 },
  changes: [
    { cycle: 6, step: 45, timeNs: 50e6, value: { text: 'Starting', number: 1 } },
    { cycle: 18, step: 45, timeNs: 160e6, value: { text: 'Running', number: 2 } },
    { cycle: 18, step: 60, timeNs: 160e6, value: { text: 'Faulted', number: 4 } },
  ],
  complete: true,
};

test('lane model: segments, the value at a position, the nearest edge, where a click goes', () => {
  assert.deepEqual(
    model.segmentsOf(state, 0, 99).map((s) => [s.from, s.to, s.value.text]),
    [
      [0, 6, 'Idle'],
      [6, 18, 'Starting'],
      [18, 18, 'Running'],
      [18, 99, 'Faulted'],
    ],
  );
  assert.equal(model.valueAt(state, 5).text, 'Idle');
  assert.equal(model.valueAt(state, 6, 44).text, 'Idle');
  assert.equal(model.valueAt(state, 6, 45).text, 'Starting');
  assert.equal(model.valueAt(state, 18, 50).text, 'Running');
  assert.equal(model.valueAt(state, 18).text, 'Faulted', 'the default is the end of the cycle');
  const xOf = (cycle) => cycle * 4; // 4 pixels a cycle
  assert.equal(model.nearestEdge(state, 26, xOf, 5).cycle, 6);
  assert.equal(model.nearestEdge(state, 72, xOf, 5).value.text, 'Faulted', 'of one cycle, its last change');
  assert.equal(model.nearestEdge(state, 40, xOf, 5), undefined);
  // A change is seen right after its statement: the statement is one step earlier.
  assert.deepEqual(model.writerPosition(state.changes[0]), { cycle: 6, step: 44 });
  assert.deepEqual(model.writerPosition({ cycle: 3, step: 0 }), { cycle: 3, step: 0 }, 'the scan inputs: step 0');
  assert.deepEqual(model.numberRange(state.changes.map((c) => c.value)), { min: { text: 'Starting', number: 1 }, max: { text: 'Faulted', number: 4 } });
});

test('axis: zoom around a cycle, scroll, clamp to the history', () => {
  const whole = { first: 0, last: 1999 };
  assert.equal(axis.fractionOf(500, whole), 500 / 1999);
  assert.equal(axis.fractionOf(7, { first: 7, last: 7 }), 1);
  const zoomed = axis.zoomWindow(whole, whole, 0.5, 1000);
  assert.equal(zoomed.last - zoomed.first, 1000);
  assert.ok(Math.abs(axis.fractionOf(1000, zoomed) - axis.fractionOf(1000, whole)) < 0.001, 'the anchor stays put');
  assert.equal(axis.zoomWindow(zoomed, whole, 2, 1000), undefined, 'zoomed out to everything: follow the history');
  assert.equal(axis.zoomWindow(whole, whole, 1e-6, 50).last - axis.zoomWindow(whole, whole, 1e-6, 50).first, axis.minimumSpan);
  assert.deepEqual(axis.scrollWindow({ first: 100, last: 200 }, whole, -500), { first: 0, last: 100 });
  assert.deepEqual(axis.scrollWindow({ first: 1800, last: 1900 }, whole, 500), { first: 1899, last: 1999 });
});
