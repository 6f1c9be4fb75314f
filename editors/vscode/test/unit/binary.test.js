'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const vscode = require('./vscode-mock');
const { resolveScanbackBinary, isExecutableFile, bundledBinaryPath, BinaryNotFoundError } = require('../../out-test/binary');
const { ScanbackAdapterFactory } = require('../../out-test/adapter');

const mock = vscode.__mock;
test.beforeEach(() => mock.reset());

const only = (...files) => (file) => files.includes(file);

test('the scanback.path setting wins', () => {
  const binary = resolveScanbackBinary({
    configuredPath: '/opt/scanback/bin/scanback',
    extensionPath: '/ext',
    searchPath: '/usr/bin',
    isExecutableFile: only('/opt/scanback/bin/scanback', '/ext/bin/scanback', '/usr/bin/scanback'),
  });
  assert.equal(binary, '/opt/scanback/bin/scanback');
});

test('a wrong scanback.path is an error naming the setting, never replaced by another binary', () => {
  assert.throws(
    () =>
      resolveScanbackBinary({
        configuredPath: '/nowhere/scanback',
        extensionPath: '/ext',
        searchPath: '/usr/bin',
        isExecutableFile: only('/ext/bin/scanback', '/usr/bin/scanback'),
      }),
    (error) => error instanceof BinaryNotFoundError && /scanback\.path/.test(error.message) && /\/nowhere\/scanback/.test(error.message),
  );
  assert.throws(
    () => resolveScanbackBinary({ configuredPath: 'bin/scanback', extensionPath: '/ext', searchPath: '', isExecutableFile: () => true }),
    /absolute path/,
  );
});

test('without the setting: the bundled binary, then the PATH', () => {
  const bundled = resolveScanbackBinary({
    configuredPath: '',
    extensionPath: '/ext',
    searchPath: '/usr/local/bin:/usr/bin',
    isExecutableFile: only('/ext/bin/scanback', '/usr/bin/scanback'),
  });
  assert.equal(bundled, '/ext/bin/scanback');
  const onPath = resolveScanbackBinary({
    configuredPath: '  ',
    extensionPath: '/ext',
    searchPath: '/usr/local/bin:/usr/bin',
    isExecutableFile: only('/usr/bin/scanback'),
  });
  assert.equal(onPath, '/usr/bin/scanback');
});

test('no binary anywhere: a clear error that says what to do', () => {
  assert.throws(
    () => resolveScanbackBinary({ configuredPath: '', extensionPath: '/ext', searchPath: '/usr/bin', isExecutableFile: () => false }),
    (error) =>
      error instanceof BinaryNotFoundError &&
      error.message.includes('/ext/bin/scanback') &&
      /scanback\.path/.test(error.message) &&
      /PATH/.test(error.message),
  );
});

test('isExecutableFile checks the file system', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scanback-binary-'));
  try {
    const executable = path.join(dir, 'scanback');
    const plain = path.join(dir, 'plain');
    fs.writeFileSync(executable, '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(plain, 'x', { mode: 0o644 });
    assert.equal(isExecutableFile(executable), true);
    assert.equal(isExecutableFile(plain), false);
    assert.equal(isExecutableFile(dir), false);
    assert.equal(isExecutableFile(path.join(dir, 'missing')), false);
    assert.equal(bundledBinaryPath(dir), path.join(dir, 'bin', 'scanback'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the adapter factory starts `scanback dap` with the resolved binary, or fails with the error', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scanback-ext-'));
  try {
    fs.mkdirSync(path.join(dir, 'bin'));
    const bundled = path.join(dir, 'bin', 'scanback');
    fs.writeFileSync(bundled, '#!/bin/sh\n', { mode: 0o755 });
    const factory = new ScanbackAdapterFactory(dir);
    const descriptor = factory.createDebugAdapterDescriptor();
    assert.ok(descriptor instanceof vscode.DebugAdapterExecutable);
    assert.equal(descriptor.command, bundled);
    assert.deepEqual(descriptor.args, ['dap']);

    mock.state.settings['scanback.path'] = path.join(dir, 'does-not-exist');
    assert.throws(() => factory.createDebugAdapterDescriptor(), /scanback\.path/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
