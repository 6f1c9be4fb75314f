'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const vscode = require('./vscode-mock');
const { languageServerCommand, languageServerDocuments } = require('../../out-test/languageServer');
const { BinaryNotFoundError } = require('../../out-test/binary');

const mock = vscode.__mock;
test.beforeEach(() => mock.reset());

// An extension folder with an executable bin/scanback, as the .vsix installs it.
function extensionWithBinary() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scanback-ext-'));
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.writeFileSync(path.join(dir, 'bin', 'scanback'), '#!/bin/sh\n', { mode: 0o755 });
  return dir;
}

test('the language server is the bundled scanback, started with lsp', () => {
  const ext = extensionWithBinary();
  assert.deepEqual(languageServerCommand(ext), { command: path.join(ext, 'bin', 'scanback'), args: ['lsp'] });
});

test('scanback.path applies to the language server as to the debugger', () => {
  const ext = extensionWithBinary();
  const other = path.join(extensionWithBinary(), 'bin', 'scanback');
  mock.state.settings['scanback.path'] = other;
  assert.equal(languageServerCommand(ext).command, other);
  mock.state.settings['scanback.path'] = '/nowhere/scanback';
  assert.throws(() => languageServerCommand(ext), (e) => e instanceof BinaryNotFoundError);
});

test('scanback.languageServer.enabled off: no server', () => {
  const ext = extensionWithBinary();
  mock.state.settings['scanback.languageServer.enabled'] = false;
  assert.equal(languageServerCommand(ext), undefined);
});

test('the server serves st documents on disk and unsaved', () => {
  assert.ok(languageServerDocuments.some((d) => d.scheme === 'file' && d.language === 'st'));
});
