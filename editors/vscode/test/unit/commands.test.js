'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const vscode = require('./vscode-mock');
const commands = require('../../out-test/commands');
const { activate } = require('../../out-test/extension');

const mock = vscode.__mock;
test.beforeEach(() => {
  mock.reset();
  mock.commands.clear();
});

const liveLaunch = {
  type: 'scanback',
  request: 'launch',
  name: 'Plant',
  program: ['/work/plant/*.st'],
  cwd: '/work/plant',
  inputs: '/work/plant/stimulus.csv',
};
const reloaded = { programHash: 'abc', kept: 42, reset: ['Main.extra (new)'], removed: [] };
const answer = (command) => (command === 'stReload' ? reloaded : {});

test("Reload Runtime sends stReload with the launch's program, never the focused file", async () => {
  const session = mock.fakeSession(liveLaunch, answer);
  mock.state.activeDebugSession = session;
  mock.state.activeTextEditor = mock.fakeEditor('/somewhere/else/other.st');
  assert.equal(await commands.reloadRuntime(), true);
  assert.deepEqual(session.requests, [{ command: 'stReload', args: { program: ['/work/plant/*.st'] } }]);
  assert.match(mock.calls.info[0], /kept 42 values; reset Main\.extra \(new\)/);
});

test('Reload Runtime is refused for replay, nonstop and attached sessions, and without a session', async () => {
  for (const configuration of [
    { type: 'scanback', request: 'launch', name: 'R', trace: '/t/plant.trace' },
    { ...liveLaunch, nonstop: true },
    { type: 'scanback', request: 'attach', name: 'A', endpoint: 'unix:///run/plant.sock' },
  ]) {
    const session = mock.fakeSession(configuration);
    assert.equal(commands.isReloadable(session), false);
    assert.equal(await commands.reloadRuntime(session), false);
    assert.deepEqual(session.requests, []);
  }
  assert.match(mock.calls.info[1], /runs nonstop, so its program cannot change/);
  assert.match(mock.calls.info[2], /an attached session only watches the runtime and never changes it/);
  assert.equal(await commands.reloadRuntime(undefined), false);
});

test('a failed reload (a compile error) is shown, not thrown', async () => {
  const session = mock.fakeSession(liveLaunch, () => {
    throw new Error('programs.st:3:7: error: expected ;');
  });
  assert.equal(await commands.reloadRuntime(session), false);
  assert.match(mock.calls.error[0], /reload failed: programs\.st:3:7/);
});

function activateExtension() {
  const environment = { description: '', prepended: [], prepend(name, value) { this.prepended.push([name, value]); }, clear() { this.prepended = []; } };
  const store = new Map();
  const workspaceState = { get: (k) => store.get(k), update: (k, v) => (store.set(k, v), Promise.resolve()) };
  const context = { subscriptions: [], extensionUri: vscode.Uri.file('/ext'), extensionPath: '/ext', environmentVariableCollection: environment, workspaceState };
  activate(context);
  return context;
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

test('reloadOnSave is off by default: saving an .st file reloads nothing', async () => {
  activateExtension();
  const session = mock.fakeSession(liveLaunch, answer);
  mock.state.activeDebugSession = session;
  mock.events.didSave.fire({ uri: vscode.Uri.file('/work/plant/programs.st'), languageId: 'st' });
  await flush();
  assert.deepEqual(session.requests, []);
});

test('with reloadOnSave on, saving an .st file reloads the launch program; other files do not', async () => {
  activateExtension();
  mock.state.settings['scanback.reloadOnSave'] = true;
  const session = mock.fakeSession(liveLaunch, answer);
  mock.state.activeDebugSession = session;
  mock.events.didSave.fire({ uri: vscode.Uri.file('/work/plant/README.md'), languageId: 'markdown' });
  await flush();
  assert.deepEqual(session.requests, []);
  mock.events.didSave.fire({ uri: vscode.Uri.file('/work/plant/fbs.st'), languageId: 'st' });
  await flush();
  assert.deepEqual(session.requests, [{ command: 'stReload', args: { program: ['/work/plant/*.st'] } }]);
});

test('nothing but a save triggers a reload: no focus or editor listeners, an edit reloads nothing', async () => {
  activateExtension();
  mock.state.settings['scanback.reloadOnSave'] = true;
  const session = mock.fakeSession(liveLaunch, answer);
  mock.state.activeDebugSession = session;
  assert.equal(mock.events.didChangeActiveTextEditor.listeners.length, 0);
  assert.equal(mock.events.didSave.listeners.length, 1);
  // (The one edit listener drops the edited file's errors of the last launch from Problems.)
  mock.events.didChangeTextDocument.fire({ document: { uri: vscode.Uri.file('/work/plant/fbs.st') }, contentChanges: [{ text: 'x' }] });
  await flush();
  assert.deepEqual(session.requests, []);
});

test('activation registers the debugger pieces, the view and every command of the manifest', () => {
  activateExtension();
  const manifest = require('../../package.json');
  for (const { command } of manifest.contributes.commands) assert.ok(mock.commands.has(command), command);
  assert.ok(mock.calls.registered.configurationProvider.has('scanback'));
  assert.ok(mock.calls.registered.adapterFactory.has('scanback'));
  assert.ok(mock.calls.registered.trackerFactory.has('scanback'));
  assert.ok(mock.calls.registered.webviewViewProvider.has('scanback.timeline'));
  assert.deepEqual(manifest.contributes.views['scanback-panel'].map((v) => v.id), ['scanback.timeline']);
  assert.deepEqual(manifest.contributes.views.debug.map((v) => v.id), ['scanback.why', 'scanback.forced']);
  assert.ok(mock.calls.registered.treeView.has('scanback.why'));
  assert.ok(mock.calls.registered.inlineValuesProvider.has('st'));
});

test('the tracker refreshes the timeline on stops and marks resuming requests', async () => {
  activateExtension();
  const session = mock.fakeSession(liveLaunch, (command) => (command === 'scanback/timeline' ? { firstCycle: 0, lastCycle: 1, live: true } : {}));
  mock.events.didStartSession.fire(session);
  const tracker = mock.calls.registered.trackerFactory.get('scanback').createDebugAdapterTracker(session);
  tracker.onDidSendMessage({ type: 'event', event: 'output', body: {} });
  assert.deepEqual(session.requests, []);
  tracker.onDidSendMessage({ type: 'event', event: 'stopped', body: { reason: 'breakpoint' } });
  await flush();
  assert.deepEqual(session.requests.map((r) => r.command), ['scanback/timeline']);
  tracker.onWillReceiveMessage({ type: 'request', command: 'continue', seq: 9 });
  const provider = mock.calls.registered.webviewViewProvider.get('scanback.timeline');
  await provider.refresh(session);
  assert.equal(session.requests.length, 1, 'no timeline request while the program runs');
  provider.dispose();
});

test('the reloadable context key follows the active session', async () => {
  activateExtension();
  mock.state.activeDebugSession = mock.fakeSession(liveLaunch);
  mock.events.didChangeActiveSession.fire(mock.state.activeDebugSession);
  assert.deepEqual(mock.calls.setContext.at(-1), ['scanback.reloadable', true]);
  mock.state.activeDebugSession = mock.fakeSession({ type: 'scanback', request: 'launch', name: 'R', trace: 'x.trace' });
  mock.events.didChangeActiveSession.fire(mock.state.activeDebugSession);
  assert.deepEqual(mock.calls.setContext.at(-1), ['scanback.reloadable', false]);
});

test('parsePosition: CYCLE or CYCLE:STEP', () => {
  assert.deepEqual(commands.parsePosition('400'), { cycle: 400 });
  assert.deepEqual(commands.parsePosition(' 400:50 '), { cycle: 400, step: 50 });
  assert.deepEqual(commands.parsePosition('0:0'), { cycle: 0, step: 0 });
  for (const bad of ['', '-1', '4.5', '400:', ':3', 'abc', '1:2:3'])
    assert.equal(typeof commands.parsePosition(bad), 'string', bad);
  assert.match(commands.parsePosition('99999999999999999999'), /too large/);
});

test('Go to Cycle… asks for a position and sends scanback/seek with cycle and step', async () => {
  const session = mock.fakeSession(liveLaunch);
  mock.state.activeDebugSession = session;
  mock.state.inputBoxAnswer = '400:50';
  assert.deepEqual(await commands.goToCycle(), { cycle: 400, step: 50 });
  mock.state.inputBoxAnswer = '12';
  await commands.goToCycle();
  assert.deepEqual(session.requests, [
    { command: 'scanback/seek', args: { cycle: 400, step: 50 } },
    { command: 'scanback/seek', args: { cycle: 12 } },
  ]);
  assert.ok(!('step' in session.requests[1].args), 'no step is sent when none was given');
  const validate = mock.calls.inputBox[0].validateInput;
  assert.equal(validate('7:1'), undefined);
  assert.match(validate('seven'), /CYCLE:STEP/);
});

test('Go to Cycle… cancelled sends nothing; given arguments are checked', async () => {
  const session = mock.fakeSession(liveLaunch);
  mock.state.activeDebugSession = session;
  mock.state.inputBoxAnswer = undefined;
  assert.equal(await commands.goToCycle(), undefined);
  assert.deepEqual(await commands.goToCycle({ cycle: 7, step: 3 }), { cycle: 7, step: 3 });
  assert.equal(await commands.goToCycle({ cycle: -1 }), undefined);
  assert.equal(await commands.goToCycle({ cycle: '7' }), undefined);
  assert.deepEqual(session.requests, [{ command: 'scanback/seek', args: { cycle: 7, step: 3 } }]);
  assert.equal(mock.calls.error.length, 2);
});

test('the command palette entry passes its arguments through to scanback/seek', async () => {
  activateExtension();
  const session = mock.fakeSession(liveLaunch);
  mock.state.activeDebugSession = session;
  await vscode.commands.executeCommand('scanback.goToCycle', { cycle: 3 });
  assert.deepEqual(session.requests, [{ command: 'scanback/seek', args: { cycle: 3 } }]);
});

test('a refused seek is shown with the adapter message', async () => {
  const session = mock.fakeSession(liveLaunch, () => {
    throw new Error('cycle 9000 is not in the recording (0..1999)');
  });
  mock.state.activeDebugSession = session;
  assert.equal(await commands.goToCycle({ cycle: 9000 }), undefined);
  assert.match(mock.calls.error[0], /cannot go to 9000: cycle 9000 is not in the recording/);
});

test('Step Back Into / Out send the custom requests for the focused thread', async () => {
  const session = mock.fakeSession(liveLaunch);
  mock.state.activeDebugSession = session;
  mock.state.activeStackItem = { session, threadId: 2, frameId: 5 };
  await commands.stepBack('in');
  await commands.stepBack('out');
  mock.state.activeStackItem = undefined;
  await commands.stepBack('in');
  assert.deepEqual(session.requests, [
    { command: 'scanback/stepBackIn', args: { threadId: 2 } },
    { command: 'scanback/stepBackOut', args: { threadId: 2 } },
    { command: 'scanback/stepBackIn', args: { threadId: 1 } },
  ]);
});

test('the Step Back commands show only when the session supports stepping back', () => {
  const manifest = require('../../package.json');
  for (const menu of ['commandPalette', 'debug/toolBar']) {
    for (const id of ['scanback.stepBackInto', 'scanback.stepBackOut']) {
      const entry = manifest.contributes.menus[menu].find((m) => m.command === id);
      assert.match(entry.when, /\bstepBackSupported\b/, `${menu} ${id}`);
      assert.match(entry.when, /debugType == 'scanback'/);
    }
  }
});

test('Open Trace… starts a replay session on the picked file', async () => {
  mock.state.openDialogAnswer = [vscode.Uri.file('/traces/plant.trace')];
  assert.equal(await commands.openTrace(), true);
  assert.deepEqual(mock.calls.startDebugging[0].config, {
    type: 'scanback',
    request: 'launch',
    name: 'Replay plant.trace',
    trace: '/traces/plant.trace',
    cwd: '/traces',
  });
  mock.state.openDialogAnswer = undefined;
  assert.equal(await commands.openTrace(), false);
  assert.equal(mock.calls.startDebugging.length, 1);
});

test('Attach to Runtime… asks for the endpoint (checked as typed) and the token, and attaches', async () => {
  mock.state.workspaceFolders = [{ uri: vscode.Uri.file('/work/plant'), name: 'plant', index: 0 }];
  mock.state.inputBoxAnswer = [' unix:///run/plant.sock ', 's3cret'];
  assert.equal(await commands.attachToRuntime(), true);
  const [endpointBox, tokenBox] = mock.calls.inputBox;
  assert.equal(endpointBox.value, 'unix:///tmp/scanback.sock', 'the first time, the default endpoint');
  assert.match(endpointBox.validateInput(''), /Enter the runtime's control endpoint/);
  assert.match(endpointBox.validateInput('unix://run/plant.sock'), /write three slashes/);
  assert.match(endpointBox.validateInput('tcp://127.0.0.1'), /has no port/);
  assert.equal(endpointBox.validateInput('tcp://127.0.0.1:4712'), undefined);
  assert.equal(tokenBox.password, true, 'the token is not shown');
  assert.deepEqual(mock.calls.startDebugging[0], {
    folder: mock.state.workspaceFolders[0],
    config: { type: 'scanback', request: 'attach', name: 'Attach to unix:///run/plant.sock', endpoint: 'unix:///run/plant.sock', authToken: 's3cret' },
  });

  // The next time it offers the last endpoint; an empty token means none; Escape cancels.
  mock.reset();
  mock.state.inputBoxAnswer = ['tcp://127.0.0.1:4712', ''];
  assert.equal(await commands.attachToRuntime(), true);
  assert.equal(mock.calls.inputBox[0].value, 'unix:///run/plant.sock');
  assert.equal('authToken' in mock.calls.startDebugging[0].config, false);
  for (const answers of [[undefined], ['unix:///run/plant.sock', undefined]]) {
    mock.reset();
    mock.state.inputBoxAnswer = answers;
    assert.equal(await commands.attachToRuntime(), false);
    assert.equal(mock.calls.startDebugging.length, 0);
  }
});

test("a replayed trace's sources: a read-only file system of the scanback-trace scheme, whose first use activates the extension (a tab restored after a reload)", () => {
  activateExtension();
  const registered = mock.calls.registered.fileSystemProvider?.get('scanback-trace');
  assert.ok(registered, 'a file system provider for scanback-trace');
  assert.match(registered.options.isReadonly.value, /recorded in the trace/);
  assert.equal(registered.options.isCaseSensitive, true);
  const manifest = JSON.parse(require('node:fs').readFileSync(require('node:path').join(__dirname, '../../package.json'), 'utf8'));
  assert.ok(manifest.activationEvents.includes('onFileSystem:scanback-trace'), JSON.stringify(manifest.activationEvents));
});
