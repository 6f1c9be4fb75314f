'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const vscode = require('./vscode-mock');
const { ScanbackConfigurationProvider, configurationForFile } = require('../../out-test/configuration');
const manifest = require('../../package.json');

const mock = vscode.__mock;
const folder = { uri: vscode.Uri.file('/work/project'), name: 'project', index: 0 };
const provider = new ScanbackConfigurationProvider();

test.beforeEach(() => mock.reset());

test('F5 without launch.json on an open .st file debugs the .st files of its folder', () => {
  mock.state.activeTextEditor = mock.fakeEditor('/work/project/examples/plant/programs.st');
  const config = provider.resolveDebugConfiguration(folder, {});
  assert.deepEqual(config, {
    type: 'scanback',
    request: 'launch',
    name: 'Debug plant (ST)',
    program: ['/work/project/examples/plant/*.st'],
    cwd: '/work/project/examples/plant',
  });
});

test('F5 without launch.json and without an .st file cancels with a hint', () => {
  assert.equal(provider.resolveDebugConfiguration(folder, {}), undefined);
  mock.state.activeTextEditor = mock.fakeEditor('/work/project/notes.md', 'markdown');
  assert.equal(provider.resolveDebugConfiguration(folder, {}), undefined);
  assert.equal(mock.calls.info.length, 2);
  assert.match(mock.calls.info[0], /open a Structured Text \(\.st\) file/);
});

test('a launch without program or trace takes them from the open .st file and keeps its name', () => {
  mock.state.activeTextEditor = mock.fakeEditor('/a/b/main.st');
  const config = provider.resolveDebugConfiguration(folder, { type: 'scanback', request: 'launch', name: 'Mine', stopOnEntry: true });
  assert.equal(config.name, 'Mine');
  assert.deepEqual(config.program, ['/a/b/*.st']);
  assert.equal(config.cwd, '/a/b');
  assert.equal(config.stopOnEntry, true);
});

test('a launch without program or trace and no .st file open is refused with the reason', () => {
  const config = provider.resolveDebugConfiguration(folder, { type: 'scanback', request: 'launch', name: 'Mine' });
  assert.equal(config, undefined);
  assert.match(mock.calls.error[0], /neither "program" nor "trace"/);
});

test('a complete configuration is kept; cwd defaults to the workspace folder', () => {
  const replay = { type: 'scanback', request: 'launch', name: 'Post-mortem', trace: '/t/plant.trace' };
  assert.deepEqual(provider.resolveDebugConfiguration(folder, replay), { ...replay, cwd: '/work/project' });
  const live = { type: 'scanback', request: 'launch', name: 'P', program: 'x.st', cwd: '/elsewhere' };
  assert.deepEqual(provider.resolveDebugConfiguration(folder, live), live);
});

test('attach needs an endpoint', () => {
  const missing = provider.resolveDebugConfiguration(folder, { type: 'scanback', request: 'attach', name: 'A' });
  assert.equal(missing, undefined);
  assert.match(mock.calls.error[0], /needs an "endpoint"/);
  const ok = { type: 'scanback', request: 'attach', name: 'A', endpoint: 'tcp://127.0.0.1:4712', authToken: 's3cret' };
  assert.deepEqual(provider.resolveDebugConfiguration(folder, ok), { ...ok, cwd: '/work/project' });
});

test('configurationForFile is a launch of the folder', () => {
  assert.equal(configurationForFile('/x/y/z.st').request, 'launch');
});

const debuggerContribution = manifest.contributes.debuggers.find((d) => d.type === 'scanback');

test('the launch attributes describe every argument the server takes, each with a description and a default', () => {
  const launch = debuggerContribution.configurationAttributes.launch.properties;
  const expected = ['program', 'cwd', 'stopOnEntry', 'inputs', 'cycles', 'realtime', 'record', 'keepTrace', 'nonstop', 'trace', 'startAt'];
  assert.deepEqual(Object.keys(launch).sort(), [...expected].sort());
  for (const [name, attribute] of Object.entries(launch)) {
    assert.ok(attribute.description && attribute.description.length > 10, `${name} has a description`);
    assert.ok('default' in attribute, `${name} has a default`);
  }
  assert.equal(launch.realtime.default, true);
  assert.equal(launch.record.default, true);
  assert.equal(launch.nonstop.default, false);
});

test('the attach attributes: endpoint (required), authToken, cwd', () => {
  const attach = debuggerContribution.configurationAttributes.attach;
  assert.deepEqual(attach.required, ['endpoint']);
  assert.deepEqual(Object.keys(attach.properties).sort(), ['authToken', 'cwd', 'endpoint']);
  for (const attribute of Object.values(attach.properties)) assert.ok(attribute.description && 'default' in attribute);
});

test('snippets: an ST project, a trace replay, attach, nonstop; initial configuration is a launch', () => {
  const bodies = debuggerContribution.configurationSnippets.map((s) => s.body);
  assert.ok(bodies.some((b) => b.request === 'launch' && Array.isArray(b.program) && !b.nonstop));
  assert.ok(bodies.some((b) => b.request === 'launch' && typeof b.trace === 'string'));
  assert.ok(bodies.some((b) => b.request === 'attach' && typeof b.endpoint === 'string'));
  assert.ok(bodies.some((b) => b.request === 'launch' && b.nonstop === true));
  assert.equal(debuggerContribution.initialConfigurations[0].type, 'scanback');
  for (const b of bodies) assert.equal(b.type, 'scanback');
});

test('settings: scanback.path and scanback.reloadOnSave (off by default)', () => {
  const properties = manifest.contributes.configuration.properties;
  assert.equal(properties['scanback.path'].default, '');
  assert.equal(properties['scanback.reloadOnSave'].default, false);
});
