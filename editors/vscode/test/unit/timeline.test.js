'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const vscode = require('./vscode-mock');
const { TimelineViewProvider, livePollMs } = require('../../out-test/timeline/provider');
const { parseViewMessage } = require('../../out-test/timeline/protocol');
const { formatVirtualTime, formatDuration } = require('../../out-test/timeline/view/format');
const { timelineHtml } = require('../../out-test/timeline/html');

const mock = vscode.__mock;
test.beforeEach(() => mock.reset());

const replayTimeline = {
  firstCycle: 0,
  lastCycle: 1999,
  firstTimeNs: 0,
  lastTimeNs: 18_180_000_000,
  cycle: 400,
  step: 50,
  timeNs: 3_630_000_000,
  tasks: [{ threadId: 1, name: 'Fast', intervalNs: 10_000_000 }],
  gaps: [],
  live: false,
};

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

function setUp(respond) {
  const provider = new TimelineViewProvider(vscode.Uri.file('/ext'));
  const view = fakeView();
  provider.resolveWebviewView(view);
  const session = mock.fakeSession({ type: 'scanback', request: 'launch', name: 'Replay', trace: '/t/plant.trace' }, respond);
  return { provider, view, session };
}

test('the page loads the bundled view script and style under a nonce CSP', () => {
  const { view } = setUp();
  assert.equal(view.webview.options.enableScripts, true);
  assert.match(view.webview.html, /script-src 'nonce-[^']+'/);
  assert.match(view.webview.html, /src="file:\/\/\/ext\/dist\/timeline-view\.js"/);
  assert.match(view.webview.html, /href="file:\/\/\/ext\/media\/timeline\.css"/);
  assert.match(view.webview.html, /id="lanes"/);
});

test('a stop asks for scanback/timeline and relays the body unchanged', async () => {
  const { provider, view, session } = setUp((command) => (command === 'scanback/timeline' ? replayTimeline : {}));
  provider.sessionStarted(session);
  await provider.stopped(session);
  assert.deepEqual(session.requests, [{ command: 'scanback/timeline', args: undefined }]);
  assert.deepEqual(view.posted, [
    { type: 'session', state: 'active', name: 'Replay', live: false },
    { type: 'timeline', timeline: replayTimeline },
  ]);
});

test('ready resends the session and the timeline (a reloaded page has nothing of its own)', async () => {
  const { provider, view, session } = setUp(() => replayTimeline);
  provider.sessionStarted(session);
  await provider.stopped(session);
  view.posted.length = 0;
  await view.receive({ type: 'ready' });
  assert.deepEqual(
    view.posted.map((m) => m.type),
    ['session', 'timeline'],
  );
});

test('a seek from the view becomes scanback/seek; a refused one is shown in the view', async () => {
  let refuse = false;
  const { provider, view, session } = setUp((command) => {
    if (command === 'scanback/seek' && refuse) throw new Error('cycle 5 is in a gap of the recording');
    return {};
  });
  provider.sessionStarted(session);
  await view.receive({ type: 'seek', cycle: 1234 });
  await view.receive({ type: 'seek', cycle: 7, step: 3 });
  assert.deepEqual(session.requests, [
    { command: 'scanback/seek', args: { cycle: 1234 } },
    { command: 'scanback/seek', args: { cycle: 7, step: 3 } },
  ]);
  refuse = true;
  await view.receive({ type: 'seek', cycle: 5 });
  assert.deepEqual(view.posted.at(-1), { type: 'error', message: 'Cannot go to cycle 5: cycle 5 is in a gap of the recording' });
});

test('malformed view messages never reach the adapter; unknown types are ignored', async () => {
  const { provider, view, session } = setUp();
  provider.sessionStarted(session);
  view.posted.length = 0;
  for (const bad of [{ type: 'seek', cycle: -1 }, { type: 'seek', cycle: '5' }, { type: 'seek', cycle: 1.5 }, { type: 'seek', cycle: 1, step: -2 }, null, 'seek', [1]])
    await view.receive(bad);
  await view.receive({ type: 'somethingNew', x: 1 });
  assert.deepEqual(session.requests, []);
  assert.equal(view.posted.length, 7);
  assert.ok(view.posted.every((m) => m.type === 'error'));
  assert.match(view.posted[0].message, /cycle must be a whole number >= 0/);
});

test('seek without a session is an error in the view', async () => {
  const { view } = setUp();
  await view.receive({ type: 'seek', cycle: 1 });
  assert.deepEqual(view.posted.at(-1).type, 'error');
});

test('a failed timeline request is shown in the view', async () => {
  const { provider, view, session } = setUp(() => {
    throw new Error('this session keeps no history (record: false)');
  });
  provider.sessionStarted(session);
  await provider.stopped(session);
  assert.deepEqual(view.posted.at(-1), { type: 'error', message: 'No timeline: this session keeps no history (record: false)' });
});

test('a live session that is not nonstop is asked at its stops only', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const { provider, session } = setUp(() => ({ ...replayTimeline, live: true }));
  session.configuration = { type: 'scanback', request: 'launch', name: 'Live', program: ['/p/*.st'] };
  provider.sessionStarted(session);
  await provider.stopped(session);
  t.mock.timers.tick(livePollMs * 3);
  await new Promise(setImmediate);
  assert.equal(session.requests.length, 1);
});

test('a stopped nonstop session is asked again every second; only changes are posted; never while it runs', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  let lastCycle = 100;
  const { provider, view, session } = setUp((command) => {
    if (command !== 'scanback/timeline') return {};
    return { ...replayTimeline, lastCycle, live: true };
  });
  session.configuration = { type: 'scanback', request: 'launch', name: 'Live', program: ['/p/*.st'], nonstop: true };
  session.name = 'Live';
  provider.sessionStarted(session);
  await provider.refresh(session);
  assert.equal(session.requests.length, 0, 'nothing is asked before the first stop');
  await provider.stopped(session);
  const timelines = () => view.posted.filter((m) => m.type === 'timeline').map((m) => m.timeline.lastCycle);
  assert.deepEqual(timelines(), [100]);
  t.mock.timers.tick(livePollMs);
  await new Promise(setImmediate);
  assert.equal(session.requests.length, 2);
  assert.deepEqual(timelines(), [100], 'an unchanged timeline is not posted again');
  lastCycle = 150; // a nonstop task scans on while the session looks at the past
  t.mock.timers.tick(livePollMs);
  await new Promise(setImmediate);
  assert.deepEqual(timelines(), [100, 150]);
  provider.resumed(session);
  const asked = session.requests.length;
  t.mock.timers.tick(livePollMs * 3);
  await new Promise(setImmediate);
  assert.equal(session.requests.length, asked, 'a running program is not asked (the adapter answers only when paused)');
  await provider.stopped(session);
  assert.equal(session.requests.length, asked + 1);
  provider.sessionEnded(session);
  assert.deepEqual(view.posted.at(-1), { type: 'session', state: 'ended', name: 'Live', live: true });
  t.mock.timers.tick(livePollMs * 3);
  await new Promise(setImmediate);
  assert.equal(session.requests.length, asked + 1, 'no polling after the session ended');
});

test('a stopped attached session is asked again every second: the runtime scans on', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  let lastCycle = 4000;
  const { provider, view, session } = setUp((command) => {
    if (command !== 'scanback/timeline') return {};
    return { ...replayTimeline, lastCycle, live: true };
  });
  session.configuration = { type: 'scanback', request: 'attach', name: 'Attach', endpoint: 'unix:///tmp/rt.sock' };
  provider.sessionStarted(session);
  await provider.stopped(session);
  lastCycle = 4100;
  t.mock.timers.tick(livePollMs);
  await new Promise(setImmediate);
  const timelines = view.posted.filter((m) => m.type === 'timeline').map((m) => m.timeline.lastCycle);
  assert.deepEqual(timelines, [4000, 4100]);
  assert.equal(view.posted.find((m) => m.type === 'session').live, true);
  provider.sessionEnded(session);
});

test('a session without history is never asked for a timeline; the view says why', async () => {
  for (const turnOff of ['record: false', 'capabilities event']) {
    const { provider, view, session } = setUp(() => replayTimeline);
    session.configuration = { type: 'scanback', request: 'launch', name: 'NoHistory', program: ['/p/*.st'] };
    if (turnOff === 'record: false') session.configuration.record = false;
    provider.sessionStarted(session);
    if (turnOff === 'capabilities event') provider.capabilitiesChanged(session, { supportsStepBack: false });
    await provider.stopped(session);
    assert.deepEqual(session.requests, [], turnOff);
    assert.match(view.posted.at(-1).message, /keeps no history/);
  }
});

test('another session’s stop switches the view to it', async () => {
  const { provider, view, session } = setUp(() => replayTimeline);
  provider.sessionStarted(session);
  const other = mock.fakeSession({ type: 'scanback', request: 'launch', name: 'Other', program: 'x.st' }, () => replayTimeline);
  await provider.stopped(other);
  assert.deepEqual(view.posted.filter((m) => m.type === 'session').at(-1), { type: 'session', state: 'active', name: 'Other', live: true });
  assert.equal(session.requests.length, 0);
  assert.equal(other.requests.length, 1);
});

test('parseViewMessage follows docs/timeline-protocol.md', () => {
  assert.deepEqual(parseViewMessage({ type: 'ready', extra: 1 }), { type: 'ready' });
  assert.deepEqual(parseViewMessage({ type: 'seek', cycle: 3, step: 0 }), { type: 'seek', cycle: 3, step: 0 });
  assert.deepEqual(parseViewMessage({ type: 'requestSignals', firstCycle: 0, lastCycle: 9, maxPoints: 500 }), {
    type: 'requestSignals',
    firstCycle: 0,
    lastCycle: 9,
    maxPoints: 500,
  });
  assert.deepEqual(parseViewMessage({ type: 'removeSignal', variable: 'Line.motor.starts' }), {
    type: 'removeSignal',
    variable: 'Line.motor.starts',
  });
  assert.ok('invalid' in parseViewMessage({ type: 'removeSignal' }));
  assert.equal(parseViewMessage({ type: 'future' }), undefined);
});

test('virtual times print as IEC literals, statistics as short durations', () => {
  assert.equal(formatVirtualTime(0), 'T#0ms');
  assert.equal(formatVirtualTime(3_630_000_000), 'T#3s630ms');
  assert.equal(formatVirtualTime(90_061_001_000_001), 'T#1d1h1m1s1ms1ns');
  assert.equal(formatVirtualTime(-2 * 60e9), 'T#-2m');
  assert.equal(formatDuration(146_000), '146 µs');
  assert.equal(formatDuration(1_250_000), '1.25 ms');
  assert.equal(formatDuration(10_000_000), '10 ms');
  assert.equal(formatDuration(850), '850 ns');
});

test('timelineHtml puts the nonce on the script', () => {
  const html = timelineHtml({ cspSource: 'file:', nonce: 'N0NCE', scriptUri: 'v.js', styleUri: 's.css' });
  assert.match(html, /<script nonce="N0NCE" src="v\.js">/);
});
