'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const vscode = require('./vscode-mock');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { ScanbackConfigurationProvider, configurationForFile } = require('../../out-test/configuration');
const { endpointProblem } = require('../../out-test/attach');
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
  // A replay also gets where its sources are looked for and how others are named (traceSources.ts).
  assert.deepEqual(provider.resolveDebugConfiguration(folder, replay), { ...replay, cwd: '/work/project', sourceFolders: [], sourceScheme: 'scanback-trace' });
  mock.state.workspaceFolders = [folder];
  assert.deepEqual(provider.resolveDebugConfiguration(folder, replay).sourceFolders, ['/work/project']);
  const live = { type: 'scanback', request: 'launch', name: 'P', program: 'x.st', cwd: '/elsewhere' };
  assert.deepEqual(provider.resolveDebugConfiguration(folder, live), live);
});

const attach = (fields) => provider.resolveDebugConfigurationWithSubstitutedVariables(folder, { type: 'scanback', request: 'attach', name: 'A', ...fields });

test('attach needs an endpoint; a well-formed one is passed on with cwd from the workspace folder', () => {
  assert.equal(provider.resolveDebugConfiguration(folder, { type: 'scanback', request: 'attach', name: 'A' }).cwd, '/work/project');
  assert.equal(attach({}), undefined);
  assert.match(mock.calls.error[0], /^scanback: the attach configuration "A" needs an "endpoint" \(unix:\/\/\/path\.sock or tcp:\/\/127\.0\.0\.1:PORT/);
  const ok = { type: 'scanback', request: 'attach', name: 'A', endpoint: 'tcp://127.0.0.1:4712', authToken: 's3cret' };
  const first = provider.resolveDebugConfiguration(folder, ok);
  assert.deepEqual(first, { ...ok, cwd: '/work/project' });
  assert.deepEqual(provider.resolveDebugConfigurationWithSubstitutedVariables(folder, first), { ...ok, cwd: '/work/project' });
  assert.deepEqual(attach({ endpoint: 'unix:///run/plant.sock' }), { type: 'scanback', request: 'attach', name: 'A', endpoint: 'unix:///run/plant.sock' });
  assert.equal(mock.calls.error.length, 1);
});

test('a malformed endpoint is refused before an adapter starts, saying what was expected', () => {
  const refusals = {
    'unix://tmp/plant.sock': /not a unix socket endpoint with an absolute path: write three slashes, unix:\/\/\/path/,
    [`unix:///${'x'.repeat(120)}.sock`]: /longer than a unix socket path can be \(107 bytes\)/,
    'tcp://127.0.0.1': /has no port/,
    'tcp://localhost:4712': /the host of "tcp:\/\/localhost:4712" must be an IPv4 address/,
    'tcp://127.0.0.1:http': /the port of .* must be a number from 1 to 65535/,
    'tcp://127.0.0.1:70000': /must be a number from 1 to 65535/,
    'tcp://127.0.0.1:0': /port 0 asks the runtime for a free port; attach to the port it printed/,
    '/tmp/plant.sock': /expected unix:\/\/\/absolute\/path\.sock or tcp:\/\/127\.0\.0\.1:PORT/,
  };
  for (const [endpoint, message] of Object.entries(refusals)) {
    mock.reset();
    assert.equal(attach({ endpoint }), undefined, endpoint);
    assert.equal(mock.calls.error.length, 1, endpoint);
    assert.match(mock.calls.error[0], /^scanback: the attach configuration "A": "endpoint" /);
    assert.match(mock.calls.error[0], message, endpoint);
  }
});

test('endpointProblem accepts what the runtime accepts', () => {
  for (const endpoint of ['unix:///tmp/a.sock', 'tcp://127.0.0.1:1', 'tcp://10.0.0.7:65535']) assert.equal(endpointProblem(endpoint), undefined, endpoint);
});

test('authTokenFile: the first line of the file, trimmed, becomes authToken (relative to cwd)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'scanback-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'token'), '  3f0c9e  \r\nsecond line\n', { mode: 0o600 });
  const relative = attach({ endpoint: 'unix:///tmp/a.sock', authTokenFile: 'token', cwd: dir });
  assert.deepEqual(relative, { type: 'scanback', request: 'attach', name: 'A', endpoint: 'unix:///tmp/a.sock', cwd: dir, authToken: '3f0c9e' });
  const absolute = provider.resolveDebugConfigurationWithSubstitutedVariables(
    { uri: vscode.Uri.file(dir) },
    { type: 'scanback', request: 'attach', name: 'A', endpoint: 'unix:///tmp/a.sock', authTokenFile: join(dir, 'token'), authToken: '' },
  );
  assert.equal(absolute.authToken, '3f0c9e');
  assert.equal('authTokenFile' in absolute, false, 'the adapter gets its own arguments only');
  const fromFolder = provider.resolveDebugConfigurationWithSubstitutedVariables(
    { uri: vscode.Uri.file(dir) },
    { type: 'scanback', request: 'attach', name: 'A', endpoint: 'unix:///tmp/a.sock', authTokenFile: 'token' },
  );
  assert.equal(fromFolder.authToken, '3f0c9e', 'without cwd, relative to the workspace folder');
  assert.equal(mock.calls.error.length, 0);
});

test('authTokenFile: a missing or empty file, or a token given twice, is refused with the reason', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'scanback-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'empty'), '\nsecret on the second line\n');
  writeFileSync(join(dir, 'token'), 'abc\n');
  const cases = [
    [{ authTokenFile: 'nothing-here' }, new RegExp(`cannot read the authTokenFile ${join(dir, 'nothing-here')}: there is no such file`)],
    [{ authTokenFile: 'empty' }, /the authTokenFile .*empty holds no token \(its first line is empty\)/],
    [{ authTokenFile: 'token', authToken: 'abc' }, /has both "authToken" and "authTokenFile": give the token one way/],
    [{ authTokenFile: 7 }, /"authTokenFile" must be a path/],
    [{ authToken: 42 }, /"authToken" must be a string/],
  ];
  for (const [fields, message] of cases) {
    mock.reset();
    assert.equal(attach({ endpoint: 'unix:///tmp/a.sock', cwd: dir, ...fields }), undefined, JSON.stringify(fields));
    assert.match(mock.calls.error[0], message);
  }
});

test('an empty authToken (the attribute default) means none; launches pass the second stage untouched', () => {
  const resolved = attach({ endpoint: 'unix:///tmp/a.sock', authToken: '' });
  assert.equal('authToken' in resolved, false);
  const launch = { type: 'scanback', request: 'launch', name: 'L', program: 'x.st', endpoint: 'nonsense' };
  assert.equal(provider.resolveDebugConfigurationWithSubstitutedVariables(folder, launch), launch);
});

test('configurationForFile is a launch of the folder', () => {
  assert.equal(configurationForFile('/x/y/z.st').request, 'launch');
});

const debuggerContribution = manifest.contributes.debuggers.find((d) => d.type === 'scanback');

test('the launch attributes describe every argument the server takes, each with a description and a default', () => {
  const launch = debuggerContribution.configurationAttributes.launch.properties;
  const expected = ['program', 'cwd', 'stopOnEntry', 'inputs', 'cycles', 'realtime', 'record', 'keepTrace', 'nonstop', 'trace', 'startAt', 'sourceFolders', 'sourceScheme', 'dialect'];
  assert.deepEqual(Object.keys(launch).sort(), [...expected].sort());
  for (const [name, attribute] of Object.entries(launch)) {
    assert.ok(attribute.description && attribute.description.length > 10, `${name} has a description`);
    assert.ok('default' in attribute, `${name} has a default`);
  }
  assert.equal(launch.realtime.default, true);
  assert.equal(launch.record.default, true);
  assert.equal(launch.nonstop.default, false);
});

test('the attach attributes: endpoint (required, with a pattern and its message), authToken, authTokenFile, cwd', () => {
  const attach = debuggerContribution.configurationAttributes.attach;
  assert.deepEqual(attach.required, ['endpoint']);
  assert.deepEqual(Object.keys(attach.properties).sort(), ['authToken', 'authTokenFile', 'cwd', 'endpoint']);
  for (const attribute of Object.values(attach.properties)) assert.ok(attribute.description && 'default' in attribute);
  const { endpoint } = attach.properties;
  const pattern = new RegExp(endpoint.pattern);
  for (const ok of ['unix:///tmp/a.sock', 'tcp://127.0.0.1:4712', 'unix://${workspaceFolder}/rt.sock', '${input:endpoint}'])
    assert.match(ok, pattern);
  for (const wrong of ['unix://tmp/a.sock', '/tmp/a.sock', 'localhost:4712']) assert.doesNotMatch(wrong, pattern);
  assert.match(endpoint.patternErrorMessage, /unix:\/\/\/path\.sock \(three slashes/);
  assert.match(attach.properties.authToken.description, /\$\{input:/, 'the token can come from an input variable');
});

test('the attach snippets resolve to configurations the extension accepts', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'scanback-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'token'), 'abc\n');
  const snippets = debuggerContribution.configurationSnippets.filter((s) => s.body.request === 'attach');
  assert.deepEqual(snippets.map((s) => s.body.name), ['Attach to runtime', 'Attach to runtime (token)']);
  for (const { body } of snippets) {
    // What the snippet inserts once its placeholders keep their defaults and ${workspaceFolder} is substituted.
    const inserted = JSON.parse(
      JSON.stringify(body)
        .replace(/\$\{\d+:([^}]*)\}/g, '$1')
        .replace(/\^\\"\\\\\$\{workspaceFolder\}\\"/g, dir)
        .replace('/path/to/token', join(dir, 'token')),
    );
    assert.equal(inserted.cwd, dir);
    const resolved = provider.resolveDebugConfigurationWithSubstitutedVariables(folder, inserted);
    assert.ok(resolved, `${body.name}: ${mock.calls.error.join('; ')}`);
    assert.equal(resolved.endpoint, 'unix:///tmp/scanback.sock');
    assert.equal(resolved.authToken, body.authTokenFile ? 'abc' : undefined);
  }
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
