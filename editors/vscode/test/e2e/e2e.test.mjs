// End to end in a real VS Code: code-server 4.100.3 (the VS Code 1.100 workbench with a Node
// extension host) in headless chromium. Installs the .vsix, opens examples/plant, sets a breakpoint,
// starts debugging with F5 (no launch.json: the extension's configuration provider makes one from the
// open .st file), waits for the stop, presses Step Back and checks the editor's current line moved
// back; the Scan Timeline shows the session. Then it replays a recording of the plant, adds a
// variable to the Scan Timeline from the Variables view's context menu and clicks an edge of its
// lane: the debugger stops at the statement that wrote the value. Screenshots go to
// build/vscode/test/.
//
//   CODE_SERVER_ENTRY  code-server's out/node/entry.js (test/e2e/setup-code-server.sh prints it)
//   SCANBACK_VSIX      the package to install (scripts/package-vscode.sh)
//   SCANBACK_BINARY    the scanback executable that records the replayed trace (default build/scanback)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../chromium.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../../..');
const plant = join(root, 'examples/plant');
const artifacts = join(root, 'build/vscode/test');
const entry = process.env.CODE_SERVER_ENTRY;
const vsix = process.env.SCANBACK_VSIX;
const binary = process.env.SCANBACK_BINARY ?? join(root, 'build/scanback');
const breakpointLine = 154; // programs.st: `conveyorOut := motor.out;`, after the call on line 153

let scratch;
let server;
let serverLog = '';
let browser;
let page;

const freePort = () =>
  new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => done(port));
    });
  });

/** Polls `predicate` until it returns a truthy value, or fails after `timeoutMs` with `what`. */
async function until(what, predicate, timeoutMs = 60000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) {
      await shot('failure');
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function shot(name, clip) {
  if (!page) return;
  try {
    await page.screenshot({ path: join(artifacts, `e2e-${name}.png`), clip });
  } catch {
    // the page may be gone
  }
}

const statusBarLine = async () => {
  const text = await page.$eval('[id="status.editor.selection"]', (e) => e.textContent).catch(() => '');
  const match = /Ln (\d+)/.exec(text);
  return match ? Number(match[1]) : undefined;
};

/** The line of the editor's current-statement marker (the top stack frame's glyph), read off the
 *  line numbers beside it. */
async function stackFrameLine() {
  return page.evaluate(() => {
    const editor = document.querySelector('.editor-instance .monaco-editor');
    const glyph = editor?.querySelector('.glyph-margin-widgets [class*="codicon-debug-stackframe"]');
    if (!glyph) return undefined;
    const top = glyph.getBoundingClientRect().top;
    for (const line of editor.querySelectorAll('.margin-view-overlays .line-numbers')) {
      const box = line.getBoundingClientRect();
      if (Math.abs(box.top - top) < box.height / 2) return Number(line.textContent);
    }
    return undefined;
  });
}

/** Runs a palette command that asks for a value in an input box, and answers it. */
async function runCommandWithInput(title, answer) {
  await runCommand(title);
  await until(`the input box of "${title}"`, () =>
    page.evaluate(() => document.activeElement?.closest('.quick-input-widget') !== null && document.activeElement?.tagName === 'INPUT'),
  );
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyA');
  await page.keyboard.up('Control');
  await page.keyboard.type(answer);
  await page.keyboard.press('Enter');
}

/** Clicks the item `label` of the open context menu (the workbench draws menus in a shadow root). */
async function clickMenuItem(label) {
  const item = await until(`the menu item "${label}"`, async () => {
    const handle = await page.evaluateHandle((wanted) => {
      const roots = [document, ...[...document.querySelectorAll('*')].filter((e) => e.shadowRoot).map((e) => e.shadowRoot)];
      for (const root of roots)
        for (const a of root.querySelectorAll('.monaco-menu .action-label')) if (a.textContent.trim() === wanted) return a;
      return null;
    }, label);
    return handle.asElement() ?? undefined;
  });
  await item.click();
}

const callStackSays = (pattern) =>
  page.evaluate((source) => new RegExp(source, 'i').test(document.querySelector('.debug-call-stack')?.textContent ?? ''), pattern.source);

async function runCommand(title) {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget .input', { visible: true });
  await page.keyboard.type(title);
  await until(`the command "${title}" in the palette`, () =>
    page.evaluate(
      (t) => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => r.textContent.includes(t)),
      title,
    ),
  );
  await page.keyboard.press('Enter');
}

before(async () => {
  assert.ok(entry, 'CODE_SERVER_ENTRY is set (test/e2e/run.sh sets it)');
  assert.ok(vsix, 'SCANBACK_VSIX is set');
  mkdirSync(artifacts, { recursive: true });
  scratch = mkdtempSync(join(root, 'build/vscode/e2e-'));
  const userData = join(scratch, 'user-data');
  const extensions = join(scratch, 'extensions');
  // Everything code-server and its extension host write stays in the scratch folder (some of it
  // goes under ~ whatever the flags say).
  const home = join(scratch, 'home');
  mkdirSync(home);
  const env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_CACHE_HOME: join(home, '.cache'),
  };
  mkdirSync(join(userData, 'User'), { recursive: true });
  writeFileSync(
    join(userData, 'User/settings.json'),
    JSON.stringify({
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.welcomePage.walkthroughs.openOnInstall': false,
      'security.workspace.trust.enabled': false,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'update.mode': 'none',
      'debug.toolBarLocation': 'floating',
      'window.commandCenter': false,
      'chat.commandCenter.enabled': false,
      'git.enabled': false,
    }),
  );
  const common = ['--user-data-dir', userData, '--extensions-dir', extensions, '--config', join(scratch, 'config.yaml')];
  execFileSync(process.execPath, [entry, ...common, '--install-extension', vsix], { env, stdio: 'pipe' });

  const port = await freePort();
  server = spawn(
    process.execPath,
    [entry, ...common, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-workspace-trust',
      '--disable-telemetry', '--disable-update-check', '--disable-getting-started-override', plant],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  server.stdout.on('data', (d) => (serverLog += d));
  server.stderr.on('data', (d) => (serverLog += d));
  await until('code-server to listen', () => /HTTP server listening/.test(serverLog), 60000);

  browser = await launchChromium(scratch, { width: 1440, height: 900 });
  page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(plant)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
});

after(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
  }
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  if (process.exitCode) console.error(`code-server log:\n${serverLog.slice(-3000)}`);
});

test('F5 on examples/plant debugs it; Step Back moves the current line back; the Scan Timeline shows it', async () => {
  // Open programs.st (Quick Open) and set a breakpoint on line 154.
  await until('the explorer to show the plant folder', () =>
    page.evaluate(() => document.querySelector('.explorer-folders-view')?.textContent.includes('programs.st')),
  );
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyP');
  await page.keyboard.up('Control');
  await page.waitForSelector('.quick-input-widget .input', { visible: true });
  await page.keyboard.type('programs.st');
  await until('programs.st in Quick Open', () =>
    page.evaluate(() => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => r.textContent.includes('programs.st'))),
  );
  await page.keyboard.press('Enter');
  await until('the programs.st editor', () =>
    page.evaluate(() => document.querySelector('.tabs-container .tab.active')?.textContent.includes('programs.st')),
  );
  await until('the ST language mode', () =>
    page.evaluate(() => document.querySelector('[id="status.editor.mode"]')?.textContent.includes('Structured Text')),
  );
  await page.click('.editor-instance .monaco-editor .view-lines');
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyG');
  await page.keyboard.up('Control');
  await page.keyboard.type(String(breakpointLine));
  await page.keyboard.press('Enter');
  await until(`the cursor on line ${breakpointLine}`, async () => (await statusBarLine()) === breakpointLine);
  await page.keyboard.press('F9');
  await until('the breakpoint glyph', () => page.$('.editor-instance .codicon-debug-breakpoint'));

  // F5: no launch.json, so the extension makes the configuration from the open .st file.
  await page.keyboard.press('F5');
  await until('the stop at the breakpoint', async () => (await stackFrameLine()) === breakpointLine, 90000);
  await until('the Call Stack to say why', () =>
    page.evaluate(() => /Paused on breakpoint/i.test(document.querySelector('.debug-call-stack')?.textContent ?? '')),
  );
  await shot('stopped');

  // The extension's toolbar buttons: Step Back Into/Out (the session can step back), Reload Runtime
  // (a live launch).
  const toolbarLabels = await page.$$eval('.debug-toolbar .action-label', (items) => items.map((i) => i.getAttribute('aria-label')));
  for (const label of ['Step Back Into', 'Step Back Out', 'Reload Runtime'])
    assert.ok(toolbarLabels.some((l) => l?.startsWith(label)), `${label} in the debug toolbar: ${JSON.stringify(toolbarLabels)}`);

  // Step Back, from the debug toolbar (shown because the adapter supports stepping back).
  const stepBack = await until('the Step Back button', () => page.$('.debug-toolbar .codicon-debug-step-back'));
  await stepBack.click();
  await until('the current line to move back', async () => {
    const line = await stackFrameLine();
    return line !== undefined && line < breakpointLine ? line : undefined;
  });
  assert.equal(await stackFrameLine(), breakpointLine - 1, 'Step Back over the motor call lands on line 153');
  await until('the Call Stack to show the step', () =>
    page.evaluate(() => /Paused on step/i.test(document.querySelector('.debug-call-stack')?.textContent ?? '')),
  );

  await shot('step-back');

  // The Scan Timeline, in the Run and Debug container, with room to show it.
  await runCommand('Focus on Scan Timeline View');
  for (const pane of ['Watch', 'Breakpoints']) {
    await page.evaluate((title) => {
      const header = [...document.querySelectorAll('.pane-header')].find((h) => h.getAttribute('aria-label')?.startsWith(title));
      if (header?.getAttribute('aria-expanded') === 'true') header.click();
    }, pane);
  }
  let timeline = await until('the Scan Timeline to show the position', () => timelineView(/^\d+:\d+ · T#/));
  assert.match(await timeline.$eval('#status', (e) => e.textContent), /Session Debug plant \(ST\) \(live\)/);
  assert.match(await timeline.$eval('#stats', (e) => e.textContent), /Fast \(10 ms\), Slow \(100 ms\)/);

  // Let the program run without the breakpoint until its history holds some seconds, pausing to look.
  await runCommand('Remove All Breakpoints');
  const lastCycle = async () =>
    Number((await (await timelineView(/./)).$eval('#last-label', (e) => e.textContent)).split(' ')[0]);
  await until('a history of 300 cycles', async () => {
    const before = await lastCycle();
    if (before >= 300) return true;
    await (await until('the Continue button', () => page.$('.debug-toolbar .codicon-debug-continue'))).click();
    await (await until('the Pause button', () => page.$('.debug-toolbar .codicon-debug-pause'))).click();
    await until('the pause', () =>
      page.evaluate(() => /Paused on pause/i.test(document.querySelector('.debug-call-stack')?.textContent ?? '')),
    );
    // The view asks for the timeline after each stop; continuing before it is answered would make
    // that request meet a running program.
    await until('the timeline after the pause', async () => (await lastCycle()) > before);
    return false;
  }, 120000);

  // A click on the timeline goes to that cycle: the stop (reason goto) moves the editor there.
  timeline = await timelineView(/./);
  const end = await lastCycle();
  const track = await timeline.$('#track');
  const box = await track.boundingBox();
  await page.mouse.click(box.x + box.width * 0.4, box.y + box.height / 2);
  await until('the stop at the clicked cycle', () =>
    page.evaluate(() => /Paused on goto/i.test(document.querySelector('.debug-call-stack')?.textContent ?? '')),
  );
  const position = await until('the timeline at the new position', async () => {
    const text = await (await timelineView(/./)).$eval('#position-label', (e) => e.textContent);
    const cycle = Number(text.split(':')[0]);
    return Math.abs(cycle - 0.4 * end) <= end * 0.02 + 1 ? text : undefined;
  });
  assert.match(position, /:0 · T#/, 'a seek from the timeline goes to the start of the cycle');
  // The adapter marks every failed request for the user (showUser); a request VS Code sends right
  // after a stop (the rest of a call stack) can meet the program continued by the loop above.
  // Say what was shown, then clear it for the picture.
  const notices = await page.$$eval('.notification-list-item-message', (items) => items.map((i) => i.textContent));
  if (notices.length > 0) console.log(`notifications shown during the session: ${JSON.stringify(notices)}`);
  await runCommand('Notifications: Clear All Notifications');
  await until('no notifications', async () => (await page.$$('.notification-toast')).length === 0);
  await shot('timeline');
});

/** The frame of the Scan Timeline webview, once its position label matches `pattern`. */
async function timelineView(pattern) {
  for (const frame of page.frames()) {
    const label = await frame.evaluate(() => document.getElementById('position-label')?.textContent).catch(() => undefined);
    if (label !== undefined && pattern.test(label)) return frame;
  }
  return undefined;
}

test('Add to Scan Timeline from the Variables view: a lane with edges; a click on an edge stops at the writing statement', async () => {
  // A recording of the plant with its stimulus: the line starts, runs, faults and runs again.
  const trace = join(scratch, 'plant.trace');
  execFileSync(binary, ['run', ...['config.st', 'fbs.st', 'programs.st', 'types.st'].map((f) => join(plant, f)),
    '--cycles', '2000', '--inputs', join(plant, 'stimulus.csv'), '--record', trace, '--quiet']);
  // conveyorOut := motor.out; (programs.st) writes the lane's variable.
  const writerLine = readFileSync(join(plant, 'programs.st'), 'utf8').split('\n').findIndex((l) => /^conveyorOut := motor\.out;/.test(l)) + 1;
  assert.ok(writerLine > 0);

  // End the live session, replay the recording (Open Trace… asks for the file), go to 400.
  await page.keyboard.down('Shift');
  await page.keyboard.press('F5');
  await page.keyboard.up('Shift');
  await until('the live session to end', async () => {
    for (const frame of page.frames()) {
      const status = await frame.evaluate(() => document.getElementById('status')?.textContent).catch(() => undefined);
      if (status && /ended\./.test(status)) return true;
    }
    return false;
  });
  await runCommandWithInput('scanback: Open Trace', trace);
  await until('the replay to stop', () => callStackSays(/Paused on entry/));
  await runCommandWithInput('scanback: Go to Cycle', '400');
  await until('the stop at cycle 400', () => callStackSays(/Paused on goto/));
  await until('the Scan Timeline at 400:0', () => timelineView(/^400:0 · /));

  // The Variables view: open the Instance scope of Line and right-click conveyorOut.
  const row = (label) =>
    page.evaluateHandle((wanted) => {
      for (const r of document.querySelectorAll('.debug-variables .monaco-list-row'))
        if (r.querySelector('.monaco-tl-contents')?.textContent.trim().startsWith(wanted)) return r;
      return null;
    }, label);
  const instance = await until('the Instance scope', async () => (await row('Instance')).asElement() ?? undefined);
  if ((await instance.evaluate((r) => r.getAttribute('aria-expanded'))) !== 'true') await instance.click();
  const variable = await until('conveyorOut in the Variables view', async () => (await row('conveyorOut')).asElement() ?? undefined);
  await variable.click({ button: 'right' });
  await clickMenuItem('Add to Scan Timeline');

  // Room for the lanes: the other panes of Run and Debug folded, the side bar wider.
  for (const pane of ['Variables', 'Watch', 'Call Stack', 'Breakpoints']) {
    await page.evaluate((title) => {
      const header = [...document.querySelectorAll('.pane-header')].find((h) => h.getAttribute('aria-label')?.startsWith(title));
      if (header?.getAttribute('aria-expanded') === 'true') header.click();
    }, pane);
  }
  const sidebar = await (await page.$('.part.sidebar')).boundingBox();
  const sash = await page.evaluateHandle((right) => {
    return [...document.querySelectorAll('.monaco-sash.vertical')].find((e) => Math.abs(e.getBoundingClientRect().left + e.getBoundingClientRect().width / 2 - right) < 6) ?? null;
  }, sidebar.x + sidebar.width);
  if (sash.asElement()) {
    const b = await sash.asElement().boundingBox();
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
    await page.mouse.down();
    await page.mouse.move(b.x + 260, b.y + b.height / 2, { steps: 10 });
    await page.mouse.up();
  }

  // Its lane: a BOOL trace with the conveyor's three edges (on at 7, off at 292, on at 365).
  const laneSelector = '#lanes .lane[data-variable="Line.conveyorOut"] .lane-trace';
  const timeline = await until('the conveyorOut lane', async () => {
    const frame = await timelineView(/./);
    return frame && (await frame.$(laneSelector)) ? frame : undefined;
  });
  const edges = await timeline.$eval(laneSelector, (e) => [...e.getAttribute('d').matchAll(/V/g)].length);
  assert.equal(edges, 3, 'three edges');
  // Two more from the command palette: the line's state and the tank level, for the picture.
  for (const path of ['Line.state', 'gTank.level']) {
    await runCommandWithInput('scanback: Add to Scan Timeline', path);
    await until(`the ${path} lane`, () => timeline.$(`#lanes .lane[data-variable="${path}"] svg`));
  }

  // Hover on the falling edge says what changed; a click stops at the statement that wrote it.
  const plot = await timeline.$('#lanes .lane[data-variable="Line.conveyorOut"] svg');
  const box = await plot.boundingBox();
  const span = await timeline.$eval('#last-label', (e) => Number(e.textContent.split(' ')[0]));
  const x = box.x + (292 / span) * box.width;
  await page.mouse.move(x, box.y + box.height / 2);
  const tip = await until('the lane hover', async () => {
    const t = await timeline.$eval('#lane-tip', (e) => (e.hidden ? '' : e.textContent));
    return /TRUE → FALSE/.test(t) ? t : undefined;
  });
  assert.match(tip, /^Line\.conveyorOut\ncycle 292: TRUE → FALSE \(at 292:\d+\)/);
  await shot('lanes-hover');
  await page.mouse.click(x, box.y + box.height / 2);
  await until(`the stop at the writing statement (line ${writerLine})`, async () => (await stackFrameLine()) === writerLine);
  const position = await until('the timeline at the writer', async () => {
    const frame = await timelineView(/^292:/);
    return frame ? frame.$eval('#position-label', (e) => e.textContent) : undefined;
  });
  assert.match(position, /^292:\d+ · T#2s/);
  const laneValue = await timeline.$eval('#lanes .lane[data-variable="Line.conveyorOut"] .lane-value', (e) => e.textContent);
  assert.equal(laneValue, 'TRUE', 'before the writing statement runs, the conveyor is still on');

  // Zoom in around the position (twice, from the keyboard): the lanes are asked for the cycles in
  // view and drawn on the zoomed axis.
  await timeline.focus('#track');
  await page.keyboard.press('+');
  await page.keyboard.press('+');
  const zoomed = await until('the lanes of the zoomed range', async () => {
    const label = await timeline.$eval('#zoom-label', (e) => (e.hidden ? '' : e.textContent));
    const range = /cycles (\d+)\.\.(\d+) of/.exec(label);
    const lanes = await timeline.$eval('#lanes', (e) => [Number(e.dataset.firstCycle), Number(e.dataset.lastCycle)]);
    return range && lanes[0] === Number(range[1]) && lanes[1] === Number(range[2]) ? lanes : undefined;
  });
  assert.ok(zoomed[1] - zoomed[0] <= 500 && zoomed[0] <= 292 && zoomed[1] >= 292, `zoomed to ${zoomed}`);
  await runCommand('Notifications: Clear All Notifications');
  await page.mouse.move(5, 5);
  await shot('lanes');
  // The Scan Timeline beside the stop, for the README (docs/images/timeline-lanes.png).
  const side = await (await page.$('.part.sidebar')).boundingBox();
  await shot('lanes-readme', { x: 0, y: 0, width: Math.round(side.x + side.width + 520), height: 500 });
});
