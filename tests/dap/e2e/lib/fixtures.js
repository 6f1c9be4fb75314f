// The programs the end-to-end tests run, their launch arguments, and the per-test harness.
'use strict';

const assert = require('assert');
const fs = require('fs');
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

module.exports = { plant, cell, BROKEN_DIR, plantLaunch, cellLaunch, lineOf, firstColumn, useClient, REPO };
