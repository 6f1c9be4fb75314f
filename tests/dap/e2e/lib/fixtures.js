// The programs the end-to-end tests run, their launch arguments, and the per-test harness.
'use strict';

const assert = require('assert');
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { ScanbackClient, REPO, E2E_DIR, BINARY } = require('./client');

const PLANT_DIR = path.join(REPO, 'examples', 'plant');
const CELL_DIR = path.join(E2E_DIR, 'programs', 'cell');
const BROKEN_DIR = path.join(E2E_DIR, 'programs', 'broken');

const plant = {
  dir: PLANT_DIR,
  config: path.join(PLANT_DIR, 'config.st'),
  types: path.join(PLANT_DIR, 'types.st'),
  fbs: path.join(PLANT_DIR, 'fbs.st'),
  programs: path.join(PLANT_DIR, 'programs.st'),
  stimulus: path.join(PLANT_DIR, 'stimulus.csv'),
};

const cell = {
  dir: CELL_DIR,
  config: path.join(CELL_DIR, 'config.st'),
  lib: path.join(CELL_DIR, 'lib.st'),
  fbs: path.join(CELL_DIR, 'fbs.st'),
  main: path.join(CELL_DIR, 'main.st'),
};

// The bottling plant, as a VS Code launch.json would give it: every file, the stimulus, no pacing.
function plantLaunch(extra = {}) {
  return {
    program: [plant.config, plant.types, plant.fbs, plant.programs],
    inputs: plant.stimulus,
    realtime: false,
    ...extra,
  };
}

function cellLaunch(extra = {}) {
  return { program: [cell.config, cell.lib, cell.fbs, cell.main], realtime: false, ...extra };
}

// The 1-based line of the first line of `file` that contains `text` (after line `after`): tests
// name statements by their text, so that an edit of an example moves the line with it.
function lineOf(file, text, after = 0) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  for (let i = after; i < lines.length; ++i) if (lines[i].includes(text)) return i + 1;
  throw new Error(`'${text}' not found in ${file} after line ${after}`);
}

// The column (1-based) of the first non-blank character of a line.
function firstColumn(file, line) {
  const text = fs.readFileSync(file, 'utf8').split('\n')[line - 1];
  return text.search(/\S/) + 1;
}

// ---- traces (replay sessions) -------------------------------------------------------------------

const plantFiles = [plant.config, plant.types, plant.fbs, plant.programs];
const cellFiles = [cell.config, cell.lib, cell.fbs, cell.main];

// A fresh temporary directory (the caller removes it).
function tempDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `scanback-e2e-${prefix}-`));
}

// Records `cycles` cycles of `files` to `trace` with `scanback run --record` (absolute paths, so
// that the trace's sources are the files on disk). `inputs`: a stimulus CSV. `exitCode`: the
// status expected (0; 3 when the run ends in a fault, the trace is complete all the same).
function recordTrace(files, trace, { cycles, inputs, exitCode = 0 } = {}) {
  const args = ['run', ...files.map((f) => path.resolve(f)), '--cycles', String(cycles), '--record', trace, '--quiet'];
  if (inputs) args.push('--inputs', path.resolve(inputs));
  const r = childProcess.spawnSync(BINARY, args, { encoding: 'utf8', timeout: 30000 });
  assert.strictEqual(r.status, exitCode, `scanback ${args.join(' ')} exited with ${r.status}: ${r.stderr}`);
  assert.ok(fs.existsSync(trace), `no trace at ${trace}`);
  return trace;
}

// The recorded changes of `variable` up to the end of `trace`, newest first, as
// `scanback trace why` reports them: [{ cycle, step, where, from, to }] (`where` is 'FILE:LINE' of
// the writing statement, or 'scan inputs'; `to` is read up to the first blank, so use it for
// numbers, booleans and enumerations). An independent oracle for the adapter's data breakpoints.
function traceChanges(trace, variable, count = 20) {
  const r = childProcess.spawnSync(BINARY, ['trace', 'why', trace, variable, '--count', String(count)],
    { encoding: 'utf8', timeout: 30000 });
  assert.strictEqual(r.status, 0, `scanback trace why ${variable}: ${r.stderr}`);
  const changes = [];
  for (const line of r.stdout.split('\n')) {
    const m = /^\s+(\d+):(\d+)\s+(scan inputs|(\S+):(\d+):\d+)\s+(.*?) -> (\S+)/.exec(line);
    if (!m) continue;
    changes.push({ cycle: Number(m[1]), step: Number(m[2]), where: m[4] ? `${m[4]}:${m[5]}` : m[3], from: m[6], to: m[7] });
  }
  assert.ok(changes.length > 0, `no change of ${variable} in ${trace}: ${r.stdout}`);
  return changes;
}

// The per-test harness. `ctx.it(title, fn)` declares a test that gets a fresh adapter process
// (ctx.dc, started by beforeEach); when fn has run, the session is closed and every message the
// adapter sent must have satisfied the schema and the seq rule, and every request the test sent
// the schema. Those checks are part of the test (not of an afterEach hook, whose failure would make
// mocha skip the rest of the suite).
function useClient() {
  const ctx = { dc: null };
  beforeEach(async function () {
    if (!fs.existsSync(BINARY)) throw new Error(`no scanback binary at ${BINARY} (set SCANBACK_BINARY)`);
    ctx.dc = new ScanbackClient();
    await ctx.dc.start();
  });
  afterEach(async function () {
    if (ctx.dc) await ctx.dc.close();   // after a failure: the checks did not run, the process may be there
    ctx.dc = null;
  });
  const run = (fn) => async function () {
    const dc = ctx.dc;
    try {
      await fn.call(this);
    } catch (e) {
      await dc.close();
      if (process.env.E2E_VERBOSE) console.log(`${dc.messages.map((m) => JSON.stringify(m)).join('\n')}\n${dc.stderr}`);
      const problems = [...dc.schemaErrors, ...dc.seqProblems()];
      if (problems.length) e.message += `\n  (also: ${problems.join('; ')})`;
      throw e;
    }
    await dc.close();
    assert.deepStrictEqual(dc.schemaErrors, [], 'messages from the adapter that the DAP schema rejects');
    assert.deepStrictEqual(dc.requestSchemaErrors, [], 'requests of the test that the DAP schema rejects');
    assert.deepStrictEqual(dc.seqProblems(), [], 'the seq rule');
  };
  ctx.it = (title, fn) => it(title, run(fn));
  return ctx;
}

module.exports = {
  plant, cell, BROKEN_DIR, plantLaunch, cellLaunch, lineOf, firstColumn, useClient, REPO,
  plantFiles, cellFiles, tempDir, recordTrace, traceChanges,
};
