// End to end in a real VS Code: code-server 4.100.3 (the VS Code 1.100 workbench with a Node
// extension host) in headless chromium. Installs the .vsix, opens examples/plant, sets a breakpoint,
// starts debugging with F5 (no launch.json: the extension's configuration provider makes one from the
// open .st file), waits for the stop, presses Step Back and checks the editor's current line moved
// back; the Scan Timeline shows the session. At a live stop of the same session: inline values, the
// branch not taken dimmed, and Why Does It Have This Value? from the Variables view, whose tree's
// row travels on a click (issue 33). Then it replays a recording of the plant, adds a
// variable to the Scan Timeline from the Variables view's context menu and clicks an edge of its
// lane: the debugger stops at the statement that wrote the value. Last, a runtime started with
// `scanback run --control` on a copy of the plant: the extension's attach snippet in a launch.json,
// started from the Run and Debug view, a breakpoint from the gutter, Step Back, disconnect, while
// `scanback ctl status` shows the runtime's cycles growing; and an attach with a wrong token. After
// them the language server (Problems, F12, completion), forcing, comparing recordings, and a trace
// replayed away from its sources (shown from the trace, also after a reload of the window).
// Screenshots go to build/vscode/test/.
//
//   CODE_SERVER_ENTRY  code-server's out/node/entry.js (test/e2e/setup-code-server.sh prints it)
//   SCANBACK_VSIX      the package to install (scripts/package-vscode.sh)
//   SCANBACK_BINARY    the scanback executable that records the replayed trace (default build/scanback)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
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
const runtimes = [];
let socketDir;

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
  const open = async () => {
    await page.keyboard.press('F1');
    await page.waitForSelector('.quick-input-widget .input', { visible: true });
    await page.keyboard.type(title);
  };
  await open();
  // The palette lists the commands known when it opened: one an extension contributes is missing
  // while the workbench is still reading the installed extensions (a window just opened), so the
  // palette is opened again every 2 s until it lists the command.
  let polls = 0;
  await until(`the command "${title}" in the palette`, async () => {
    const listed = await page.evaluate(
      (t) => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => r.textContent.includes(t)),
      title,
    );
    if (!listed && ++polls % 10 === 0) {
      await page.keyboard.press('Escape');
      await open();
    }
    return listed;
  });
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
      // code-server saves a second after each edit by default: a keystroke that went astray on a
      // loaded machine (into examples/plant itself) would be written to the checkout.
      'files.autoSave': 'off',
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
  for (const runtime of runtimes) if (runtime.exitCode === null && runtime.signalCode === null) runtime.kill('SIGTERM');
  await browser?.close();
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
  }
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  if (socketDir) rmSync(socketDir, { recursive: true, force: true });
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

  // Where you are: the status bar says history, and Go to Live (in the toolbar) goes back to where
  // the live task is paused, the breakpoint.
  const whereText = () => page.evaluate(() => document.querySelector('[id="scanback.scanback.where"], [id$="scanback.where"]')?.textContent ?? '');
  await until('the status bar to say history', async () => /history, cycle \d+ of \d+/.test(await whereText()));
  // In history the Variables view offers no Set Value: the variables are read-only.
  await clickWhenReady('the Go to Live button', '.debug-toolbar .codicon-broadcast');
  await until('the stop at the live position', async () => (await stackFrameLine()) === breakpointLine);
  await until('the Call Stack to say goto', () => callStackSays(/Paused on goto/));
  await until('the status bar to say live', async () => /live, cycle \d+/.test(await whereText()));
  assert.equal(await page.$('.debug-toolbar .codicon-broadcast'), null, 'no Go to Live at the live position');

  // The Scan Timeline, in the bottom panel (its own container there).
  await runCommand('Focus on Scan Timeline View');
  let timeline = await until('the Scan Timeline to show the position', () => timelineView(/^\d+:\d+ · T#/));
  // (Webviews are drawn over the part that holds them: the view's frame lies inside the panel.)
  const panelBox = await (await page.$('.part.panel')).boundingBox();
  let frameBox;
  for (const element of await page.$$('iframe')) {
    const outer = await element.contentFrame();
    if (outer && (outer === timeline || outer.childFrames().includes(timeline))) frameBox = await element.boundingBox();
  }
  assert.ok(panelBox && frameBox, 'the panel and the view');
  assert.ok(frameBox.y >= panelBox.y - 1 && frameBox.y + frameBox.height <= panelBox.y + panelBox.height + 1,
    `the Scan Timeline is in the bottom panel: ${JSON.stringify({ panelBox, frameBox })}`);
  // (The axis and the markers are drawn when the view has its width and the timeline its markers.)
  // (At the first stop the history is one cycle: one tick.)
  await until('a time axis with ticks', async () => (await timeline.$$('#ticks .tick')).length >= 1);
  await until('the breakpoint hit as a marker', async () => (await timeline.$$('#markers .marker[data-kind="breakpoint"]')).length >= 1);
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

// ---- Explaining a value (issue 33, docs/explain.md) ----------------------------------------------

/** What the editor draws on `line` of the visible editor: its text as shown (with the inline values
 *  VS Code injects after the code) and the lowest opacity of its text (a dimmed line: below 1);
 *  undefined while the line is not drawn (scrolled away). */
const editorLine = (line) =>
  page.evaluate((wanted) => {
    const editor = document.querySelector('.editor-instance .monaco-editor');
    const number = [...(editor?.querySelectorAll('.margin-view-overlays .line-numbers') ?? [])].find((e) => e.textContent.trim() === String(wanted));
    if (!number) return undefined;
    const top = number.getBoundingClientRect().top;
    const view = [...editor.querySelectorAll('.view-lines .view-line')].find((v) => Math.abs(v.getBoundingClientRect().top - top) < 2);
    if (!view) return undefined;
    const spans = [...view.querySelectorAll('span span')].filter((s) => s.textContent.trim() !== '');
    const opacity = Math.min(1, ...spans.map((s) => Number(getComputedStyle(s).opacity)));
    return { text: view.textContent.replace(/\u00a0/g, ' '), opacity };
  }, line);

/** The cycle the status bar says the session is at ("live, cycle N" or "history, cycle N of M"). */
const statusBarCycle = () =>
  page.evaluate(() => {
    const text = document.querySelector('[id="scanback.scanback.where"], [id$="scanback.where"]')?.textContent ?? '';
    const match = /cycle (\d+)/.exec(text);
    return match ? Number(match[1]) : undefined;
  });

/** The rows of the Why? view in Run and Debug: label, description, depth, expanded. */
const whyRows = () =>
  page.evaluate(() => {
    const header = [...document.querySelectorAll('.pane-header')].find((h) => /^Why\?/.test(h.getAttribute('aria-label') ?? h.textContent));
    const pane = header?.closest('.pane');
    if (!pane) return [];
    return [...pane.querySelectorAll('.pane-body .monaco-list-row')].map((r) => ({
      label: r.querySelector('.label-name')?.textContent.trim() ?? '',
      description: r.querySelector('.label-description')?.textContent.trim() ?? '',
      level: Number(r.getAttribute('aria-level')),
      expanded: r.getAttribute('aria-expanded'),
      accessible: r.getAttribute('aria-label') ?? '',
    }));
  });

/** Clicks a part of the Why? view's row `index` (its label, or its twistie). */
const clickWhyRow = (index, part = '.monaco-tl-contents') =>
  page.evaluate(
    (i, selector) => {
      const header = [...document.querySelectorAll('.pane-header')].find((h) => /^Why\?/.test(h.getAttribute('aria-label') ?? h.textContent));
      const row = header?.closest('.pane')?.querySelectorAll('.pane-body .monaco-list-row')[i];
      const target = row?.querySelector(selector);
      if (!target) return false;
      const box = target.getBoundingClientRect();
      return { x: box.left + Math.min(box.width / 2, 20), y: box.top + box.height / 2 };
    },
    index,
    part,
  ).then(async (spot) => {
    if (!spot) return false;
    await page.mouse.click(spot.x, spot.y);
    return true;
  });

test('explain a value: inline values and the flow of the cycle in the editor; Why? from Variables, a tree whose click travels', async () => {
  // The plant's line state machine (programs.st): `IF state <> prevState THEN` (108) runs its THEN
  // branch (109, 110) in the cycle the state changed and its ELSE branch (112,
  // `stateCycles := stateCycles + 1`) in every other.
  const programs = readFileSync(join(plant, 'programs.st'), 'utf8').split('\n');
  const lineOf = (pattern) => programs.findIndex((l) => pattern.test(l)) + 1;
  const thenLine = lineOf(/^\s*stateCycles := 0;/);
  const elseLine = lineOf(/^\s*stateCycles := stateCycles \+ 1;/);
  assert.ok(thenLine > 0 && elseLine === thenLine + 2, `the IF of stateCycles: ${thenLine}, ${elseLine}`);

  // The live session of the first test, paused in its history: Go to Live, a breakpoint on line
  // 154 and Continue stop there, live, in the Line program's frame: the cycle under way, which the
  // trace file does not hold yet (the adapter adds it for the explain requests).
  await openFile('programs.st');
  await clickWhenReady('the Go to Live button', '.debug-toolbar .codicon-broadcast');
  await until('the Call Stack to say goto', () => callStackSays(/Paused on goto/));
  // The stop's reveal moves the editor's cursor to its line; only then is line 154 ours to go to.
  await until('the editor to show the stop', async () => {
    const frame = await stackFrameLine();
    return frame !== undefined && (await statusBarLine()) === frame;
  });
  await clickGutter(breakpointLine);
  await clickWhenReady('the Continue button', '.debug-toolbar .codicon-debug-continue');
  await until('the stop at the breakpoint', async () => (await stackFrameLine()) === breakpointLine && callStackSays(/Paused on breakpoint/), 60000);
  const whereText = () => page.evaluate(() => document.querySelector('[id="scanback.scanback.where"], [id$="scanback.where"]')?.textContent ?? '');
  // Inline values: the lines up to the stop show the values there, here around the IF (Go to Line
  // shows it: each stop reveals line 154).
  const showTheIf = async () => {
    await page.click('.editor-instance .monaco-editor .view-lines');
    await page.keyboard.down('Control');
    await page.keyboard.press('KeyG');
    await page.keyboard.up('Control');
    // (Typed only into Go to Line's box, never into the file.)
    await until('the Go to Line box', () =>
      page.evaluate(() => document.activeElement?.closest('.quick-input-widget') !== null && document.activeElement?.tagName === 'INPUT'),
    );
    await page.keyboard.type(String(thenLine));
    await page.keyboard.press('Enter');
  };
  const stateCyclesShown = (unlike) =>
    until('the inline value of stateCycles on its line', async () => {
      const l = await editorLine(elseLine);
      const m = l && /stateCycles = (\d+)/.exec(l.text);
      return m && Number(m[1]) !== unlike ? Number(m[1]) : undefined;
    });
  await showTheIf();
  let stateCycles = await stateCyclesShown();
  // The why-chain below follows stateCycles back over three cycles: on to a stop where the state
  // has held that long (the plant's stimulus changes it now and then). stateCycles differs at each
  // stop (one more, or 0), so a value unlike the last one is the new stop's.
  while (stateCycles < 3) {
    await clickWhenReady('the Continue button', '.debug-toolbar .codicon-debug-continue');
    await until('the next stop at the breakpoint', async () => (await stackFrameLine()) === breakpointLine && callStackSays(/Paused on breakpoint/), 60000);
    await showTheIf();
    stateCycles = await stateCyclesShown(stateCycles);
  }
  await runCommand('Remove All Breakpoints');
  await until('the status bar to say live', async () => /live, cycle \d+/.test(await whereText()));
  const stopCycle = await until('the status bar cycle', statusBarCycle);
  // The IF line shows both values, equal: the state did not change, the ELSE branch ran.
  const [, state, prevState] = /state = (\w+), prevState = (\w+)/.exec((await editorLine(thenLine - 2)).text) ?? [];
  assert.ok(state && state === prevState, `the IF line shows state and prevState, equal: ${state}, ${prevState}`);
  // The flow of the cycle: the THEN branch did not run (dimmed), the ELSE branch did (not dimmed).
  const flow = await until('the THEN branch dimmed', async () => {
    const [then, other] = [await editorLine(thenLine), await editorLine(elseLine)];
    return then && other && then.opacity < 0.9 ? { then, other } : undefined;
  });
  assert.ok(Math.abs(flow.then.opacity - 0.45) < 0.01, `the branch not taken is dimmed: ${JSON.stringify(flow.then)}`);
  assert.equal((await editorLine(thenLine - 1)).opacity < 0.9, true, 'prevState := state did not run either');
  assert.equal(flow.other.opacity, 1, `the branch taken is not dimmed: ${JSON.stringify(flow.other)}`);
  assert.equal((await editorLine(thenLine - 2)).opacity, 1, 'the IF itself ran');
  await page.mouse.move(5, 5);
  await shot('flow-inline-values');

  // Why? from the Variables view: stateCycles of the Line program's instance.
  const variable = await instanceVariableRow('stateCycles');
  await variable.click({ button: 'right' });
  await clickMenuItem('Why Does It Have This Value?');

  // The chain: stateCycles = N from the ELSE branch in this cycle; it read stateCycles = N - 1, made
  // by the same statement in the Line program's cycle before, and so on (the view asks for 4 levels).
  const rows = await until('the why-chain in the Why? view', async () => {
    const r = await whyRows();
    return r.length >= 4 ? r : undefined;
  });
  const position = (r) => {
    const m = /· (\d+):(\d+)/.exec(r.description);
    return m ? { cycle: Number(m[1]), step: Number(m[2]) } : undefined;
  };
  assert.equal(rows[0].label, `Line.stateCycles = ${stateCycles}`);
  assert.match(rows[0].description, /^stateCycles := stateCycles \+ 1 · \d+:\d+$/);
  assert.equal(position(rows[0]).cycle, stopCycle, 'the last change was in this cycle');
  assert.equal(rows[1].label, `Line.stateCycles = ${stateCycles - 1}`);
  assert.equal(rows[1].level, 2);
  assert.match(rows[1].description, /^stateCycles := stateCycles \+ 1 · \d+:\d+$/);
  const earlier = position(rows[1]);
  assert.ok(earlier.cycle < stopCycle, `the value read came from an earlier cycle: ${JSON.stringify(rows.slice(0, 2))}`);
  assert.match(rows[0].accessible, new RegExp(`^Line\\.stateCycles = ${stateCycles}, from stateCycles := stateCycles \\+ 1 · `));
  // Collapse the root from its twistie: its reads go; expand it again: they are back.
  assert.ok(await clickWhyRow(0, '.monaco-tl-twistie'));
  await until('the root collapsed', async () => {
    const r = await whyRows();
    return r.length === 1 && r[0].expanded === 'false';
  });
  assert.ok(await clickWhyRow(0, '.monaco-tl-twistie'));
  await until('the root expanded again', async () => {
    const r = await whyRows();
    return r.length === rows.length && r[0].expanded === 'true' ? r : undefined;
  });

  // A click on the second node travels to where its value was made: the ELSE branch, in that cycle.
  assert.ok(await clickWhyRow(1));
  await until(`the stop at line ${elseLine}`, async () => (await stackFrameLine()) === elseLine && callStackSays(/Paused on goto/));
  await until(`the status bar at cycle ${earlier.cycle}`, async () => (await statusBarCycle()) === earlier.cycle);
  // There, about to run, the statement sees the value before it: one less again.
  await until('the inline value before the statement', async () => {
    const l = await editorLine(elseLine);
    return l && l.text.includes(`stateCycles = ${stateCycles - 2}`);
  });
  // (Variables scrolled back to its top, as the tests after this one find it.)
  const variablesList = await (await page.$('.debug-variables .monaco-list')).boundingBox();
  await page.mouse.move(variablesList.x + variablesList.width / 2, variablesList.y + variablesList.height / 2);
  await page.mouse.wheel({ deltaY: -5000 });
  await until('the Variables view at its top', () => findVariablesRow('Instance'));
  // The picture (docs/images/why-view.png): the Why? view with room — the side bar wider — then
  // the layout as it was for the tests after this one.
  await dragSidebarEdge(300);
  await page.mouse.move(5, 5);
  await shot('why-view');
  await dragSidebarEdge(-300);
  // The Why? view folded again (it opened with the chain), leaving Variables its room.
  await page.evaluate(() => {
    const header = [...document.querySelectorAll('.pane-header')].find((h) => /^Why\?/.test(h.getAttribute('aria-label') ?? h.textContent));
    if (header?.getAttribute('aria-expanded') === 'true') header.click();
  });
});

/** Drags the side bar's right edge by `dx` pixels. */
async function dragSidebarEdge(dx) {
  const sidebar = await (await page.$('.part.sidebar')).boundingBox();
  const sash = await page.evaluateHandle((right) => {
    return [...document.querySelectorAll('.monaco-sash.vertical')].find((e) => Math.abs(e.getBoundingClientRect().left + e.getBoundingClientRect().width / 2 - right) < 6) ?? null;
  }, sidebar.x + sidebar.width);
  if (!sash.asElement()) return;
  const b = await sash.asElement().boundingBox();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2 + dx, b.y + b.height / 2, { steps: 10 });
  await page.mouse.up();
}

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
  await runCommand('scanback: Open Trace');
  await answerFileDialogWithPath(/^Open a scanback trace/, trace);
  await until('the replay to stop', () => callStackSays(/Paused on entry/));
  await runCommandWithInput('scanback: Go to Cycle', '400');
  await until('the stop at cycle 400', () => callStackSays(/Paused on goto/));
  await until('the Scan Timeline at 400:0', () => timelineView(/^400:0 · /));

  // The Variables view: open the Instance scope of Line and right-click conveyorOut.
  const variable = await instanceVariableRow('conveyorOut');
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
  // The Scan Timeline in the panel under the stop, for the README (docs/images/timeline-lanes.png).
  const panel = await (await page.$('.part.panel')).boundingBox();
  const top = Math.max(0, Math.round(panel.y - 260));
  await shot('lanes-readme', { x: 0, y: top, width: 1440, height: Math.round(panel.y + panel.height - top) });
});

// ---- Attaching to a running runtime -------------------------------------------------------------

const plantFiles = ['config.st', 'fbs.st', 'programs.st', 'types.st'];

/** Starts `scanback run` on `files` with a control endpoint, as on a line; resolves once it listens. */
async function startRuntime(files, endpoint, extra = []) {
  const runtime = spawn(binary, ['run', ...files, '--realtime', '--control', endpoint, ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  runtimes.push(runtime);
  let log = '';
  runtime.stderr.on('data', (d) => (log += d));
  runtime.log = () => log;
  await until(`the runtime to listen on ${endpoint}`, () => {
    if (runtime.exitCode !== null) throw new Error(`the runtime exited (${runtime.exitCode}): ${log}`);
    return log.includes(`control endpoint ${endpoint}`);
  }, 30000);
  return runtime;
}

/** `scanback ctl ENDPOINT …`: its stdout, or a failure with the command's stderr. */
const ctl = (endpoint, ...args) => execFileSync(binary, ['ctl', endpoint, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const runtimeStatus = (endpoint, ...auth) => JSON.parse(ctl(endpoint, ...auth, 'status', '--json'));

/** Waits until the runtime's cycle count passes `cycles`: its task scans on. */
const cyclesPass = (endpoint, cycles, ...auth) =>
  until(`the runtime's cycles to grow past ${cycles}`, () => {
    const status = runtimeStatus(endpoint, ...auth);
    return status.state === 'running' && status.cycles > cycles ? status : undefined;
  }, 20000);

/** The attach configuration that the snippet "scanback: Attach to a running runtime" inserts, with
 *  the endpoint typed into its placeholder. */
function attachSnippet(endpoint) {
  const manifest = JSON.parse(readFileSync(resolve(here, '../../package.json'), 'utf8'));
  const snippet = manifest.contributes.debuggers[0].configurationSnippets.find((s) => s.label === 'scanback: Attach to a running runtime');
  const text = JSON.stringify(snippet.body)
    .replace(/\$\{1:[^}]*\}/, endpoint)
    .replaceAll('^\\"\\\\${workspaceFolder}\\"', '${workspaceFolder}');
  const body = JSON.parse(text);
  assert.deepEqual(Object.keys(body), ['type', 'request', 'name', 'endpoint', 'cwd']);
  assert.equal(body.cwd, '${workspaceFolder}');
  return body;
}

/** Opens `folder` in a new workbench page (the old page, and its extension host, go). */
async function openWorkbench(folder) {
  const url = new URL(page.url());
  await page.close();
  page = await browser.newPage();
  await page.goto(`${url.origin}/?folder=${encodeURIComponent(folder)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
}

/**
 * A copy of the plant that the attach tests can give a .vscode/launch.json (the runtimes run the
 * copy), open in the workbench with programs.st in the editor; and a short directory for the
 * runtimes' sockets (a unix socket path has at most 107 bytes, the checkout's path may be long).
 */
async function attachWorkspace() {
  const workspace = join(scratch, 'attach-plant');
  socketDir ??= mkdtempSync(join(tmpdir(), 'scanback-e2e-'));
  if (new URL(page.url()).searchParams.get('folder') === workspace) return workspace;
  mkdirSync(join(workspace, '.vscode'), { recursive: true });
  for (const file of plantFiles) copyFileSync(join(plant, file), join(workspace, file));
  await openWorkbench(workspace);
  await until('the explorer to show the plant copy', () =>
    page.evaluate(() => document.querySelector('.explorer-folders-view')?.textContent.includes('programs.st')),
  );
  await openFile('programs.st');
  return workspace;
}

/** Opens `name` from Quick Open and waits for its editor, in ST mode. */
async function openFile(name) {
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyP');
  await page.keyboard.up('Control');
  await page.waitForSelector('.quick-input-widget .input', { visible: true });
  await page.keyboard.type(name);
  await until(`${name} in Quick Open`, () =>
    page.evaluate((n) => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => r.textContent.includes(n)), name),
  );
  await page.keyboard.press('Enter');
  await until(`the ${name} editor`, () =>
    page.evaluate((n) => document.querySelector('.tabs-container .tab.active')?.textContent.includes(n), name),
  );
  await until('the ST language mode', () =>
    page.evaluate(() => document.querySelector('[id="status.editor.mode"]')?.textContent.includes('Structured Text')),
  );
}

/** Whether the focus is in the quick input's box (Go to Line, the palette). */
const quickInputFocused = () =>
  page.evaluate(() => document.activeElement?.closest('.quick-input-widget') !== null && document.activeElement?.tagName === 'INPUT');

/**
 * Go to Line (Ctrl+G) `line`, each key typed only while its box has the focus, and Enter only when
 * the box holds the line: a stop's reveal can take the focus back to the editor at any moment, and
 * keys typed there would edit the file (which code-server saves a second later: a digit once
 * replaced the statement the stop had selected in examples/plant/programs.st). Returns whether the
 * line was entered; if not, the box is closed and the caller tries again.
 */
async function typeIntoGoToLine(line) {
  await page.click('.editor-instance .monaco-editor .view-lines');
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyG');
  await page.keyboard.up('Control');
  for (const deadline = Date.now() + 10000; !(await quickInputFocused()); await new Promise((r) => setTimeout(r, 100)))
    if (Date.now() > deadline) return false;
  for (const key of String(line)) {
    if (!(await quickInputFocused())) return false;
    await page.keyboard.press(key);
  }
  const value = await page.evaluate(() => (document.activeElement?.closest('.quick-input-widget') ? document.activeElement.value : undefined));
  if (value !== `:${line}`) {
    if (value !== undefined) await page.keyboard.press('Escape');
    return false;
  }
  await page.keyboard.press('Enter');
  return true;
}

/** Reveals `line` (Go to Line) and clicks the editor's gutter beside it, as a user sets a breakpoint. */
async function clickGutter(line) {
  // (Go to Line again every 2 s until the cursor is there: a stop's reveal may move it back.)
  const goToLine = async () => {
    let polls = 0;
    await until(`the cursor on line ${line}`, async () => {
      if ((await statusBarLine()) === line) return true;
      if (polls++ % 10 === 0) await typeIntoGoToLine(line);
      return false;
    });
  };
  const gutter = () =>
    page.evaluate((wanted) => {
      const editor = document.querySelector('.editor-instance .monaco-editor');
      const margin = editor?.querySelector('.glyph-margin')?.getBoundingClientRect();
      const number = [...(editor?.querySelectorAll('.margin-view-overlays .line-numbers') ?? [])].find((e) => e.textContent.trim() === String(wanted));
      if (!margin || !number) return undefined;
      const box = number.getBoundingClientRect();
      return { x: margin.left + margin.width / 2, y: box.top + box.height / 2 };
    }, line);
  await goToLine();
  // A stop reported just before (a goto, a step) may reveal its own line after the cursor went to
  // this one, scrolling it away: go there again until its gutter is on screen.
  let tries = 0;
  const spot = await until(`the gutter of line ${line}`, async () => {
    const found = await gutter();
    if (!found && ++tries % 5 === 0) await goToLine();
    return found;
  });
  await page.mouse.move(spot.x, spot.y);
  await page.mouse.click(spot.x, spot.y);
  await until(`the breakpoint glyph on line ${line}`, async () => {
    const glyphLine = await page.evaluate(() => {
      const editor = document.querySelector('.editor-instance .monaco-editor');
      const glyph = editor?.querySelector('.glyph-margin-widgets .codicon-debug-breakpoint, .glyph-margin-widgets .codicon-debug-breakpoint-unverified');
      if (!glyph) return undefined;
      const top = glyph.getBoundingClientRect().top;
      for (const n of editor.querySelectorAll('.margin-view-overlays .line-numbers')) {
        const box = n.getBoundingClientRect();
        if (Math.abs(box.top - top) < box.height / 2) return Number(n.textContent);
      }
      return undefined;
    });
    return glyphLine === line;
  });
}

/** Clicks `selector` once it is there; the workbench redraws toolbars, so a click that meets a
 *  replaced element is tried again. */
const clickWhenReady = (what, selector) =>
  until(what, () => page.click(selector).then(() => true, () => false));

/** Types `answer` into the open input box whose title ends with `step`, and presses Enter. */
async function answerInputBox(step, answer) {
  await until(`the input box ${step}`, () =>
    page.evaluate((wanted) => {
      const title = document.querySelector('.quick-input-widget .quick-input-title')?.textContent ?? '';
      return title.endsWith(wanted) && document.activeElement?.closest('.quick-input-widget') !== null && document.activeElement?.tagName === 'INPUT';
    }, step),
  );
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyA');
  await page.keyboard.up('Control');
  await page.keyboard.type(answer);
  await page.keyboard.press('Enter');
}

/** Debug: Select and Start Debugging, and the configuration `name` from launch.json. */
async function selectAndStartDebugging(name) {
  await runCommand('Debug: Select and Start Debugging');
  await until(`"${name}" in the picker`, () =>
    page.evaluate((n) => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => r.textContent.includes(n)), name),
  );
  await page.keyboard.type(name);
  await page.keyboard.press('Enter');
}

/** The workbench has no debug session: no debug toolbar, nothing in the Call Stack. */
const noSession = () =>
  page.evaluate(() => {
    const toolbar = document.querySelector('.debug-toolbar');
    const shown = toolbar && toolbar.getBoundingClientRect().height > 0 && getComputedStyle(toolbar).display !== 'none';
    return !shown && document.querySelectorAll('.debug-call-stack .monaco-list-row').length === 0;
  });

test('attach from the Run and Debug view to a running plant: breakpoint, Step Back, disconnect; the runtime never halts', async () => {
  const workspace = await attachWorkspace();
  const endpoint = `unix://${join(socketDir, 'rt.sock')}`;
  const runtime = await startRuntime(plantFiles.map((f) => join(workspace, f)), endpoint);
  const started = runtimeStatus(endpoint);
  assert.equal(started.debugEnabled, true);
  writeFileSync(join(workspace, '.vscode/launch.json'), JSON.stringify({ version: '0.2.0', configurations: [attachSnippet(endpoint)] }, null, 2));

  // Run and Debug: the configuration from launch.json is selected; its start button attaches.
  await page.keyboard.down('Control');
  await page.keyboard.down('Shift');
  await page.keyboard.press('KeyD');
  await page.keyboard.up('Shift');
  await page.keyboard.up('Control');
  await until('"Attach to runtime" selected in Run and Debug', () =>
    page.evaluate(() => /Attach to runtime/.test(document.querySelector('.debug-view-content .start-debug-action-item, .part.sidebar .start-debug-action-item')?.textContent ?? '')),
  );
  await clickWhenReady('the start button of Run and Debug', '.part.sidebar .start-debug-action-item .codicon-debug-start');
  await until('the attached session, running', () =>
    page.evaluate(() => /Running/i.test(document.querySelector('.debug-call-stack')?.textContent ?? '')),
  );
  assert.ok(
    await until('the Disconnect button (an attached session)', () => page.$('.debug-toolbar .codicon-debug-disconnect')),
    'attach sessions disconnect rather than stop',
  );

  // A breakpoint from the gutter on `conveyorOut := motor.out;`, which the Fast task runs every
  // cycle: the session stops there as the streamed history reaches it.
  await clickGutter(breakpointLine);
  await until('the stop at the breakpoint', async () => (await stackFrameLine()) === breakpointLine, 60000);
  await until('the Call Stack to say why', () => callStackSays(/Paused on breakpoint/));
  // The Variables view: LineControl's instance variables, with their values at the stop.
  const instance = await until('the Instance scope', () =>
    page.evaluateHandle(() => [...document.querySelectorAll('.debug-variables .monaco-list-row')].find((r) => r.textContent.trim() === 'Instance') ?? null)
      .then((h) => h.asElement() ?? undefined),
  );
  if ((await instance.evaluate((r) => r.getAttribute('aria-expanded'))) !== 'true') await instance.click();
  const variables = await until('the Variables view with values', async () => {
    const rows = await page.$$eval('.debug-variables .monaco-list-row', (items) => items.map((r) => r.textContent.trim()));
    return rows.some((r) => /^conveyorOut\s*=\s*(TRUE|FALSE)$/.test(r)) ? rows : undefined;
  });
  const withValues = variables.filter((r) => /^\w+\s*=\s*\S/.test(r));
  assert.ok(withValues.length >= 5, `the instance's variables with values: ${JSON.stringify(variables)}`);
  await page.mouse.move(5, 5);
  await shot('attach-stopped');

  // The session is stopped; the runtime's task is not.
  const whileStopped = runtimeStatus(endpoint);
  await cyclesPass(endpoint, whileStopped.cycles + 50);
  assert.ok(await callStackSays(/Paused on breakpoint/), 'the session is still stopped while the runtime scans');

  await clickWhenReady('the Step Back button', '.debug-toolbar .codicon-debug-step-back');
  await until('the current line to move back', async () => {
    const line = await stackFrameLine();
    return line !== undefined && line < breakpointLine;
  });
  assert.equal(await stackFrameLine(), breakpointLine - 1, 'Step Back over the motor call lands on line 153');
  await until('the Call Stack to show the step', () => callStackSays(/Paused on step/));
  const afterStepBack = runtimeStatus(endpoint);
  await cyclesPass(endpoint, afterStepBack.cycles + 20);

  // The Scan Timeline of the stopped session follows the runtime's history as it grows.
  await runCommand('Focus on Scan Timeline View');
  const lastCycle = async () => {
    const frame = await timelineView(/^\d+:\d+ · T#/);
    return frame ? Number((await frame.$eval('#last-label', (e) => e.textContent)).split(' ')[0]) : undefined;
  };
  const firstSeen = await until('the Scan Timeline of the attached session', lastCycle);
  await until('the Scan Timeline to grow while the session is stopped', async () => (await lastCycle()) > firstSeen + 20, 20000);
  assert.ok(await callStackSays(/Paused on step/));
  await page.mouse.move(5, 5);
  await shot('attach-timeline');

  // Disconnect: the session ends, the runtime runs on.
  await clickWhenReady('the Disconnect button', '.debug-toolbar .codicon-debug-disconnect');
  await until('the session to end', noSession);
  const disconnected = runtimeStatus(endpoint);
  await cyclesPass(endpoint, disconnected.cycles + 20);
  assert.equal(runtime.exitCode, null, 'the runtime still runs after the debugger left');

  assert.match(ctl(endpoint, 'stop'), /stop requested/);
  const exitCode = await new Promise((done) => (runtime.exitCode !== null ? done(runtime.exitCode) : runtime.once('exit', done)));
  assert.equal(exitCode, 0, runtime.log());
});

test('Attach to Runtime… with a wrong token: the adapter\'s refusal is shown and no session remains; authTokenFile attaches', async () => {
  const workspace = await attachWorkspace();
  const tokenFile = join(scratch, 'runtime-token');
  writeFileSync(tokenFile, 'the-right-token-of-this-runtime\n', { mode: 0o600 });
  const endpoint = `unix://${join(socketDir, 'rt-token.sock')}`;
  const runtime = await startRuntime(plantFiles.map((f) => join(workspace, f)), endpoint, ['--auth-token-file', tokenFile]);
  // Attach to Runtime… from the palette: the endpoint, then a wrong token.
  await runCommand('scanback: Attach to Runtime');
  await answerInputBox('(1/2)', endpoint);
  await answerInputBox('(2/2)', 'not-the-token');
  const shown = await until('the refusal shown to the user', () =>
    page.evaluate(() => {
      // The extension says it in one notification; VS Code's own dialog (with "Open 'launch.json'")
      // must not appear.
      const texts = [...document.querySelectorAll('.notification-list-item-message, .monaco-dialog-box .dialog-message-detail')].map((e) => e.textContent);
      return texts.find((t) => /wrong token/.test(t));
    }),
  );
  assert.match(shown, /^scanback: cannot attach: the runtime at unix:\/\/.*rt-token\.sock refused: wrong token: it is not the token this runtime was started with$/);
  assert.equal(await page.$('.monaco-dialog-box'), null, 'no dialog');
  const buttons = await page.$$eval('.notification-list-item .monaco-button', (items) => items.map((b) => b.textContent));
  assert.ok(!buttons.some((b) => /launch\.json/.test(b)), `no launch.json button after Attach to Runtime…: ${JSON.stringify(buttons)}`);
  await shot('attach-wrong-token');
  await until('no debug session', noSession, 10000);
  await runCommand('Notifications: Clear All Notifications');
  const status = runtimeStatus(endpoint, '--auth-token-file', tokenFile);
  assert.equal(status.state, 'running', 'the refused attach left the runtime alone');

  // The same runtime, with the token read from its --auth-token-file (relative to cwd, the
  // workspace folder): attached, then disconnected.
  const fromFile = { ...attachSnippet(endpoint), name: 'Attach with the token file', authTokenFile: '../runtime-token' };
  writeFileSync(join(workspace, '.vscode/launch.json'), JSON.stringify({ version: '0.2.0', configurations: [fromFile] }, null, 2));
  await selectAndStartDebugging('Attach with the token file');
  // Running, or stopped already at the breakpoint the first test left on line 154.
  await until('the attached session', () => callStackSays(/Running|Paused on breakpoint/));
  await clickWhenReady('the Disconnect button', '.debug-toolbar .codicon-debug-disconnect');
  await until('the session to end', noSession);
  await cyclesPass(endpoint, runtimeStatus(endpoint, '--auth-token-file', tokenFile).cycles + 20, '--auth-token-file', tokenFile);
  assert.match(ctl(endpoint, '--auth-token-file', tokenFile, 'stop'), /stop requested/);
  await new Promise((done) => (runtime.exitCode !== null ? done() : runtime.once('exit', done)));
});

test('the language server: an error of the plant is in Problems and under a squiggle while the file is open; F12 jumps to a definition', async () => {
  // A copy of the plant whose programs.st lost a ';' (line 75, where it is missing, reports it).
  const workspace = join(scratch, 'lsp-plant');
  mkdirSync(workspace, { recursive: true });
  for (const file of plantFiles) copyFileSync(join(plant, file), join(workspace, file));
  const programs = readFileSync(join(workspace, 'programs.st'), 'utf8');
  writeFileSync(join(workspace, 'programs.st'), programs.replace('hornLatch := FALSE;', 'hornLatch := FALSE'));
  await openWorkbench(workspace);
  await until('the explorer to show the copy', () =>
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
  // The status bar's problem count: one error, from `scanback lsp` (no debug session ran here).
  await until('one error in the status bar', () =>
    page.evaluate(() => /(^|\D)1(\D|$)/.test(document.querySelector('[id="status.problems"]')?.textContent ?? '') &&
      document.querySelector('[id="status.problems"] .codicon-error') !== null),
  );
  await page.click('.editor-instance .monaco-editor .view-lines');
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyG');
  await page.keyboard.up('Control');
  await page.keyboard.type('75');
  await page.keyboard.press('Enter');
  await until('the squiggle under the error', () => page.$('.editor-instance .monaco-editor .squiggly-error'));
  await shot('lsp-problems');
  // F12 on `motor` of `motor.Reset();` (line 72): its declaration on line 56 of the same file.
  const motorLine = programs.split('\n').findIndex((l) => l.includes('motor.Reset();')) + 1;
  const declLine = programs.split('\n').findIndex((l) => l.includes('motor : MotorCtl')) + 1;
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyG');
  await page.keyboard.up('Control');
  await page.keyboard.type(`${motorLine}:4`);
  await page.keyboard.press('Enter');
  await until(`the cursor on line ${motorLine}`, async () => (await statusBarLine()) === motorLine);
  await page.keyboard.press('F12');
  await until(`the definition on line ${declLine}`, async () => (await statusBarLine()) === declLine, 20000);

  // F5 on the file with the missing ';' (no launch.json): one message saying it does not compile,
  // pointing to Problems, without VS Code's dialog or a launch.json button; the error is in Problems
  // (once: the language server shows it already).
  await runCommand('Notifications: Clear All Notifications');
  await page.keyboard.press('F5');
  const failed = await until('the launch failure shown', () =>
    page.evaluate(() => [...document.querySelectorAll('.notification-list-item-message')].map((e) => e.textContent).find((t) => /does not compile/.test(t))),
  );
  assert.match(failed, /^scanback: the program does not compile \(1 error\); see Problems\. The first: programs\.st:75: /);
  assert.equal(await page.$('.monaco-dialog-box'), null, 'no dialog');
  const failureButtons = await page.$$eval('.notification-list-item .monaco-button', (items) => items.map((b) => b.textContent));
  assert.deepEqual(failureButtons, ['Show Problems'], 'Show Problems, and no launch.json button (there is none)');
  await until('no debug session', noSession, 10000);
  await (await page.$('.notification-list-item .monaco-button')).click();
  const problems = await until('the error in the Problems view', () =>
    page.evaluate(() => {
      const rows = [...document.querySelectorAll('.markers-panel .monaco-list-row')].map((r) => r.textContent);
      return rows.some((r) => /Ln 75/.test(r) || /\[Ln 75,/.test(r)) ? rows : undefined;
    }),
  );
  assert.equal(problems.filter((r) => /Ln 75/.test(r)).length, 1, `the error once: ${JSON.stringify(problems)}`);
  await page.mouse.move(5, 5);
  await shot('problems');
  // Check Project says the same without a session.
  await runCommand('Notifications: Clear All Notifications');
  await runCommand('scanback: Check Project');
  await until('Check Project to report', () =>
    page.evaluate(() => [...document.querySelectorAll('.notification-list-item-message')].some((e) => /lsp-plant: 1 error in 4 files; see Problems\./.test(e.textContent))),
  );
  await runCommand('Notifications: Clear All Notifications');
});

test('the keys of Step Back and Reverse Continue are free in VS Code\'s default keymap', async () => {
  const manifest = JSON.parse(readFileSync(join(here, '../../package.json'), 'utf8'));
  const keys = manifest.contributes.keybindings.map((k) => k.key);
  assert.deepEqual(manifest.contributes.keybindings.map((k) => k.command).sort(), ['workbench.action.debug.reverseContinue', 'workbench.action.debug.stepBack']);
  await runCommand('Preferences: Open Default Keyboard Shortcuts (JSON)');
  await until('the default keybindings', () =>
    page.evaluate(() => /keybindings/i.test(document.querySelector('.tabs-container .tab.active')?.textContent ?? '')),
  );
  // The find widget counts the matches of `"key": "<key>"` in the whole default keymap.
  const count = async (text) => {
    await page.click('.editor-instance .monaco-editor .view-lines');
    await page.keyboard.down('Control');
    await page.keyboard.press('KeyF');
    await page.keyboard.up('Control');
    await page.waitForSelector('.find-widget.visible .input', { visible: true });
    await page.keyboard.down('Control');
    await page.keyboard.press('KeyA');
    await page.keyboard.up('Control');
    await page.keyboard.type(text);
    return until(`the count of ${text}`, async () => {
      const label = await page.$eval('.find-widget .matchesCount', (e) => e.textContent).catch(() => '');
      if (/No results/i.test(label)) return 'none';
      const match = /of (\d+)/.exec(label);
      return match ? match[1] : undefined;
    }, 10000);
  };
  // The check sees a bound key: VS Code binds Shift+F10 (the editor's context menu) and
  // Ctrl+Shift+F5 (Restart), the keys first proposed.
  assert.notEqual(await count('"key": "shift+f10"'), 'none');
  assert.notEqual(await count('"key": "ctrl+shift+f5"'), 'none');
  // The default keymap lists the installed extensions' bindings too: each key once, scanback's.
  for (const key of keys) assert.equal(await count(`"key": "${key}"`), '1', `${key} is bound by scanback alone in the default keymap`);
  await page.keyboard.press('Escape');
  await runCommand('View: Close Editor');
});

// ---- Forcing (issue 31) and comparing recordings (issue 32) -------------------------------------

/** A copy of the plant with its stimulus in `name` (F5 applies the folder's stimulus.csv), opened
 *  in the workbench with programs.st in the editor. */
async function plantCopy(name) {
  const workspace = join(scratch, name);
  mkdirSync(workspace, { recursive: true });
  for (const file of [...plantFiles, 'stimulus.csv']) copyFileSync(join(plant, file), join(workspace, file));
  await openWorkbench(workspace);
  await until(`the explorer to show ${name}`, () =>
    page.evaluate(() => document.querySelector('.explorer-folders-view')?.textContent.includes('programs.st')),
  );
  await openFile('programs.st');
  return workspace;
}

/** The row of the Variables view in sight whose name is `name` (its text up to " ="), as an
 *  element; undefined when there is none. */
const findVariablesRow = async (name) =>
  (await page.evaluateHandle((wanted) => {
    for (const r of document.querySelectorAll('.debug-variables .monaco-list-row')) {
      const text = r.querySelector('.monaco-tl-contents')?.textContent.trim() ?? '';
      if (text === wanted || text.startsWith(`${wanted} =`) || text.startsWith(`${wanted}:`)) return r;
    }
    return null;
  }, name)).asElement() ?? undefined;

/** The row of the Variables view whose name is `name`, once it is there. */
const variablesRow = (name) => until(`${name} in the Variables view`, () => findVariablesRow(name));

/** `name`'s row in the Instance scope, opened; the view draws only the rows in sight, so it is
 *  scrolled down until the row is drawn (a small pane). */
async function instanceVariableRow(name) {
  const instance = await variablesRow('Instance');
  if ((await instance.evaluate((r) => r.getAttribute('aria-expanded'))) !== 'true') await instance.click();
  return until(`${name} in the Variables view`, async () => {
    const found = await findVariablesRow(name);
    if (found) return found;
    const list = await (await page.$('.debug-variables .monaco-list')).boundingBox();
    await page.mouse.move(list.x + list.width / 2, list.y + list.height / 2);
    await page.mouse.wheel({ deltaY: 60 });
    return undefined;
  });
}

/** What the Variables view shows for `name`: "TRUE (forced)", "FALSE", … */
const variableValue = (name) =>
  page.evaluate((wanted) => {
    for (const r of document.querySelectorAll('.debug-variables .monaco-list-row')) {
      const text = r.querySelector('.monaco-tl-contents')?.textContent.trim() ?? '';
      if (text.startsWith(`${wanted} =`)) return text.slice(wanted.length + 2).trim();
    }
    return undefined;
  }, name);

/** The cycle the status bar says the session is at ("live, cycle N", "history, cycle N of M",
 *  "replay, cycle N of A..B"). */
const whereCycle = () =>
  page.evaluate(() => {
    const text = document.querySelector('[id$="scanback.where"]')?.textContent ?? '';
    const match = /cycle (\d+)/.exec(text);
    return match ? Number(match[1]) : undefined;
  });

/** The rows of the Forced Values view (its pane in Run and Debug), once it shows. */
const forcedRows = () =>
  page.evaluate(() => {
    const pane = [...document.querySelectorAll('.pane')].find((p) => p.querySelector('.pane-header')?.getAttribute('aria-label')?.startsWith('Forced Values'));
    if (!pane) return undefined;
    return [...pane.querySelectorAll('.pane-body .monaco-list-row')].map((r) => r.textContent.trim());
  });

/** Expands the panes of the side bar titled `open` and folds those titled `closed`. */
async function foldPanes(open, closed) {
  for (const [titles, expanded] of [[closed, 'false'], [open, 'true']])
    for (const title of titles)
      await until(`the ${title} pane ${expanded === 'true' ? 'expanded' : 'folded'}`, () =>
        page.evaluate((wanted, state) => {
          const header = [...document.querySelectorAll('.pane-header')].find((h) => h.getAttribute('aria-label')?.startsWith(wanted));
          if (!header) return false;
          if (header.getAttribute('aria-expanded') !== state) header.click();
          return header.getAttribute('aria-expanded') === state;
        }, title, expanded),
      );
}

/** The enabled items of the open context menu (drawn in a shadow root). */
const menuLabels = () =>
  page.evaluate(() =>
    [document, ...[...document.querySelectorAll('*')].filter((e) => e.shadowRoot).map((e) => e.shadowRoot)]
      .flatMap((root) => [...root.querySelectorAll('.monaco-menu .action-item:not(.disabled) .action-label')].map((a) => a.textContent.trim())));

/** Right-clicks the Variables row `name` until its context menu opens (a row redrawn under the
 *  click opens none); returns the menu's items. */
async function openMenuOf(name) {
  for (let attempt = 0; ; ++attempt) {
    await (await variablesRow(name)).click({ button: 'right' }).catch(() => undefined);
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline) {
      const labels = await menuLabels();
      if (labels.includes('Force Value…')) return labels;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (attempt === 4) {
      await shot('failure');
      throw new Error(`no context menu for ${name} in the Variables view`);
    }
  }
}

/** Answers VS Code's file dialog (its own in the browser: a path box that completes what is typed,
 *  so a name is typed after the folder it opens in, rather than a whole path over it). */
async function answerFileDialog(title, folder, name) {
  const inputValue = () => page.evaluate(() => document.querySelector('.quick-input-widget .quick-input-box input')?.value);
  await until(`the file dialog "${title.source}" in ${folder}`, async () =>
    (await page.evaluate((t) => new RegExp(t).test(document.querySelector('.quick-input-widget .quick-input-title')?.textContent ?? '') &&
      document.activeElement?.tagName === 'INPUT', title.source)) && (await inputValue()) === `${folder}/`,
  );
  await page.keyboard.press('End');
  await page.keyboard.type(name);
  await acceptInFileDialog(title, join(folder, name));
}

/** Answers the file dialog titled `title` with the whole `path`, wherever the dialog opened. */
async function answerFileDialogWithPath(title, path) {
  await until(`the file dialog "${title.source}"`, () =>
    page.evaluate((t) => new RegExp(t).test(document.querySelector('.quick-input-widget .quick-input-title')?.textContent ?? '') &&
      document.activeElement?.tagName === 'INPUT', title.source),
  );
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyA');
  await page.keyboard.up('Control');
  await page.keyboard.type(path);
  await acceptInFileDialog(title, path);
}

/** Enter in the file dialog titled `title` once it holds `path` and lists that file, not another,
 *  as the row Enter would take; again (a busy dialog drops it) until the dialog has closed. */
async function acceptInFileDialog(title, path) {
  const inputValue = () => page.evaluate(() => document.querySelector('.quick-input-widget .quick-input-box input')?.value);
  await until(`${path} typed in`, async () => (await inputValue()) === path);
  // Enter accepts the list's active row, when one is active, not the typed path: the row follows
  // the typed name only once the dialog has listed the folder and filtered it (on a loaded
  // machine, after the name is in the box), and until then another file, or a folder Enter would
  // open, can be the active one. With no active row, Enter takes the typed path.
  const name = path.slice(path.lastIndexOf('/') + 1);
  const ready = () =>
    page.evaluate((n) => {
      const rows = [...document.querySelectorAll('.quick-input-list .monaco-list-row')];
      const active = rows.find((r) => r.classList.contains('focused'));
      return rows.some((r) => r.textContent.includes(n)) && (!active || active.textContent.includes(n));
    }, name);
  const open = () => page.evaluate((t) => {
    const widget = document.querySelector('.quick-input-widget');
    return !!widget && widget.style.display !== 'none' && new RegExp(t).test(widget.querySelector('.quick-input-title')?.textContent ?? '');
  }, title.source);
  let pressedAt = 0;
  await until(`the file dialog to take ${name}`, async () => {
    if (!(await open())) return true;
    if (Date.now() - pressedAt > 3000 && (await inputValue()) === path && (await ready())) {
      await page.keyboard.press('Enter');
      pressedAt = Date.now();
    }
    return false;
  });
}

/** Drags the side bar's right edge `by` pixels to the right. */
async function widenSidebar(by) {
  const sidebar = await (await page.$('.part.sidebar')).boundingBox();
  const sash = await page.evaluateHandle((right) =>
    [...document.querySelectorAll('.monaco-sash.vertical')].find((e) => Math.abs(e.getBoundingClientRect().left + e.getBoundingClientRect().width / 2 - right) < 6) ?? null,
  sidebar.x + sidebar.width);
  if (!sash.asElement()) return;
  const b = await sash.asElement().boundingBox();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
  await page.mouse.down();
  await page.mouse.move(b.x + by, b.y + b.height / 2, { steps: 10 });
  await page.mouse.up();
}

/** Presses Continue and waits for the next stop, at a later cycle; returns that cycle. */
async function continueToNextStop() {
  const before = await whereCycle();
  await clickWhenReady('the Continue button', '.debug-toolbar .codicon-debug-continue');
  return until('the next stop', async () => {
    const cycle = await whereCycle();
    return cycle !== undefined && cycle > before && (await callStackSays(/Paused on breakpoint/)) ? cycle : undefined;
  }, 20000);
}

test('force then release: Force Value… from Variables holds an input against the stimulus; Release in Forced Values hands it back to the stimulus', async () => {
  // The stimulus writes fillerSensor (%IX0.3) FALSE in its rows of cycles 0, 6, 11 and 17, and TRUE from 33 on.
  await plantCopy('force-plant');
  await clickGutter(breakpointLine);
  await page.keyboard.press('F5');
  await until('the stop at the breakpoint', async () => (await stackFrameLine()) === breakpointLine, 60000);
  await instanceVariableRow('fillerSensor');
  await until('fillerSensor = FALSE at the first stop', async () => (await variableValue('fillerSensor')) === 'FALSE');
  await foldPanes(['Forced Values'], ['Watch', 'Breakpoints', 'Why?']);

  // Force Value… from the Variables view's context menu, TRUE.
  await openMenuOf('fillerSensor');
  // (A click while the menu still fades in is lost: the item is clicked until the box opens.)
  await until('the value box of Force Value…', async () => {
    const open = await page.evaluate(() => /^Force .*fillerSensor/.test(document.querySelector('.quick-input-widget .quick-input-title')?.textContent ?? '') &&
      document.activeElement?.tagName === 'INPUT');
    if (open) return true;
    const item = await page.evaluateHandle(() => {
      const roots = [document, ...[...document.querySelectorAll('*')].filter((e) => e.shadowRoot).map((e) => e.shadowRoot)];
      for (const root of roots) for (const a of root.querySelectorAll('.monaco-menu .action-label')) if (a.textContent.trim() === 'Force Value…') return a;
      return null;
    });
    await item.asElement()?.click().catch(() => undefined);
    return false;
  });
  await page.keyboard.type('TRUE');
  await page.keyboard.press('Enter');
  const forcedAt = await whereCycle();
  const listed = await until('the force in the Forced Values view', async () => {
    const rows = await forcedRows();
    return rows?.length === 1 ? rows[0] : undefined;
  });
  assert.match(listed, /^Line\.fillerSensor = TRUE\s*BOOL · since cycle \d+/);

  // Held at every cycle start, against the stimulus rows of cycles 6 and 11.
  let cycle = forcedAt;
  while (cycle <= 12) {
    cycle = await continueToNextStop();
    // (The view redraws its rows after the stop: the value is waited for, and a wrong one fails.)
    await until(`fillerSensor = TRUE (forced) at cycle ${cycle}`, async () => (await variableValue('fillerSensor')) === 'TRUE (forced)', 10000);
  }
  assert.deepEqual((await forcedRows()).length, 1, 'still listed');
  // Set Value is not offered for a forced value: the force would undo the write at the next cycle start.
  const menu = await openMenuOf('fillerSensor');
  assert.ok(menu.includes('Copy Value'), `the menu of a variable: ${JSON.stringify(menu)}`);
  assert.ok(!menu.includes('Set Value'), `no Set Value on a forced value: ${JSON.stringify(menu)}`);
  await page.keyboard.press('Escape');
  // No request failed in the user's face along the way (the adapter's errors are "scanback/…: …";
  // the editor's flow marks asked at a live stop inside an unrecorded cycle once were).
  const notices = await page.$$eval('.notification-list-item-message', (items) => items.map((i) => i.textContent));
  assert.deepEqual(notices.filter((n) => /^scanback\//.test(n)), [], 'no failed request shown');
  await page.mouse.move(5, 5);
  await shot('forced');
  // Run and Debug with Variables and Forced Values, wider, for docs/images/forced-values.png.
  await foldPanes([], ['Call Stack']);
  await widenSidebar(200);
  await page.mouse.move(5, 5);
  await shot('forced-values');
  await foldPanes(['Call Stack'], []);

  // Release, from the row of the Forced Values view: the view empties, and from the next cycle start
  // the input is latched from the field again, which the stimulus holds FALSE (its rows of 11, 17).
  await until('the Release action of the row, clicked', async () => {
    const row = (await page.evaluateHandle(() => {
      const pane = [...document.querySelectorAll('.pane')].find((p) => p.querySelector('.pane-header')?.getAttribute('aria-label')?.startsWith('Forced Values'));
      return pane?.querySelector('.pane-body .monaco-list-row') ?? null;
    })).asElement();
    if (!row) return false;
    await row.hover().catch(() => undefined);
    const release = await row.$('.action-label[aria-label="Release"]');
    return release ? release.click().then(() => true, () => false) : false;
  });
  await until('the Forced Values view to be empty', async () => (await forcedRows())?.length === 0);
  const releasedAt = cycle;
  cycle = await continueToNextStop();
  // (The last stop showed "TRUE (forced)": another value is this stop's.)
  await until(`fillerSensor = FALSE, without the mark, at cycle ${cycle}`, async () => (await variableValue('fillerSensor')) === 'FALSE', 10000);
  assert.ok(cycle <= releasedAt + 2, `the next cycle of the task: ${releasedAt} → ${cycle}`);
  await page.keyboard.down('Shift');
  await page.keyboard.press('F5');
  await page.keyboard.up('Shift');
  await until('the session to end', noSession);
});

test('Compare With Recording…: a replayed recording (A) against its rerun with a fix (B); a divergence picked travels there; the Scan Timeline marks them and overlays B on the lanes', async () => {
  // README, "Would my fix have helped?": the plant's recording with its motor fault (A), and its
  // rerun with the feedback timeout raised to 1 s (B).
  const workspace = join(scratch, 'compare-plant');
  const fix = join(scratch, 'compare-fix');
  mkdirSync(workspace, { recursive: true });
  mkdirSync(fix, { recursive: true });
  for (const file of [...plantFiles, 'stimulus.csv']) copyFileSync(join(plant, file), join(workspace, file));
  for (const file of plantFiles) copyFileSync(join(plant, file), join(fix, file));
  const programs = readFileSync(join(fix, 'programs.st'), 'utf8');
  const fixed = programs.replace('motor : MotorCtl := (timeout := T#500ms);', 'motor : MotorCtl := (timeout := T#1s);');
  assert.notEqual(fixed, programs);
  writeFileSync(join(fix, 'programs.st'), fixed);
  const day = join(workspace, 'day.trace');
  const fixTrace = join(workspace, 'fix.trace');
  execFileSync(binary, ['run', ...plantFiles.map((f) => join(workspace, f)), '--cycles', '500', '--inputs', join(workspace, 'stimulus.csv'), '--record', day, '--quiet']);
  execFileSync(binary, ['rerun', day, ...plantFiles.map((f) => join(fix, f)), '--record', fixTrace], { stdio: 'pipe' });
  // A's statement where the paths split (the motor block faults in A, not in B).
  const faultLine = readFileSync(join(plant, 'fbs.st'), 'utf8').split('\n').findIndex((l) => /^\s*fault := TRUE;/.test(l)) + 1;
  assert.ok(faultLine > 0);

  await openWorkbench(workspace);
  await until('the explorer to show the compare folder', () =>
    page.evaluate(() => document.querySelector('.explorer-folders-view')?.textContent.includes('day.trace')),
  );
  await openFile('fbs.st'); // (and the extension's commands are known once its language is)
  await runCommand('scanback: Open Trace');
  await answerFileDialog(/^Open a scanback trace/, workspace, 'day.trace');
  await until('the replay to stop', () => callStackSays(/Paused on entry/));

  // Compare With Recording…: B is picked in the file dialog, which opens in A's folder.
  await runCommand('scanback: Compare With Recording');
  await answerFileDialog(/^Compare A day\.trace \(this session\) with B/, workspace, 'fix.trace');

  // The divergences, in a list titled with both sides.
  const title = await until('the divergences', () =>
    page.evaluate(() => {
      const t = document.querySelector('.quick-input-widget .quick-input-title')?.textContent ?? '';
      return /^Divergences: /.test(t) && document.querySelectorAll('.quick-input-list .monaco-list-row').length > 2 ? t : undefined;
    }),
  );
  assert.equal(title, 'Divergences: A day.trace (this session) / B fix.trace');
  const rows = await page.$$eval('.quick-input-list .monaco-list-row', (items) => items.map((r) => r.textContent));
  assert.ok(rows.some((r) => /^First divergence: Line\.motor\.timeout.* differ at cycle 0, step 0/.test(r)), `the first divergence: ${JSON.stringify(rows)}`);
  assert.ok(rows.some((r) => /^Statement paths first split at cycle 292, step 51/.test(r)), `the paths' split: ${JSON.stringify(rows)}`);
  assert.ok(rows.some((r) => /^Line\.conveyorOut \(%QX0\.0\) differs from cycle 292.*first: A FALSE, B TRUE/.test(r)), `a value's difference: ${JSON.stringify(rows)}`);
  await shot('compare-list');
  // Picking the split travels there: A's next statement, the motor block's fault.
  await page.keyboard.type('Statement paths');
  await until('the split alone in the list', () =>
    page.evaluate(() => {
      const shown = [...document.querySelectorAll('.quick-input-list .monaco-list-row')];
      return shown.length === 1 && /^Statement paths first split/.test(shown[0].textContent);
    }),
  );
  await page.keyboard.press('Enter');
  await until('the stop at the split', () => callStackSays(/Paused on goto/));
  await until('the status bar at cycle 292', async () => (await whereCycle()) === 292);
  await until(`A's next statement: fbs.st, line ${faultLine}`, async () =>
    (await stackFrameLine()) === faultLine &&
    (await page.evaluate(() => document.querySelector('.tabs-container .tab.active')?.textContent.includes('fbs.st'))),
  );

  // The Scan Timeline marks the divergences; its position is the split.
  await runCommand('Focus on Scan Timeline View');
  const timeline = await until('the Scan Timeline at 292:51', () => timelineView(/^292:51 · /));
  const markers = await until('the divergences on the Scan Timeline', async () => {
    const labels = await timeline.$$eval('#markers .marker[data-kind="divergence"]', (items) => items.map((m) => m.getAttribute('aria-label')));
    return labels.length >= 3 ? labels : undefined;
  });
  assert.ok(markers.some((l) => /^Statement paths first split at cycle 292, step 51 \(292:51\)/.test(l)), JSON.stringify(markers));
  assert.ok(markers.some((l) => /^Line\.conveyorOut \(%QX0\.0\) differs from cycle 292 \(cycle 292\)/.test(l)), JSON.stringify(markers));
  // A's conveyor and the motor block's fault as lanes, for the picture
  // (docs/images/compare-divergences.png): each overlaid with B's values, dashed, with an A/B
  // legend. A's motor faults at 292, B's (the fix) never does.
  await runCommandWithInput('scanback: Add to Scan Timeline', 'Line.conveyorOut');
  await until('the Line.conveyorOut lane', () => timeline.$('#lanes .lane[data-variable="Line.conveyorOut"] .lane-trace'));
  await runCommandWithInput('scanback: Add to Scan Timeline', 'Line.motor.fault');
  const fault = '#lanes .lane[data-variable="Line.motor.fault"]';
  const overlay = await until("B's fault over A's", () =>
    timeline.$eval(fault, (lane) => {
      const own = lane.querySelector('.lane-trace:not(.lane-compared)');
      const other = lane.querySelector('path.lane-compared');
      if (!own || !other) return undefined;
      return {
        own: own.getAttribute('d'),
        other: other.getAttribute('d'),
        dash: getComputedStyle(other).strokeDasharray,
        legend: [...lane.querySelectorAll('.lane-legend > span')].map((e) => e.textContent),
        legendTitle: lane.querySelector('.lane-legend-other').title,
      };
    }).catch(() => undefined),
  );
  assert.deepEqual(overlay.legend, ['A', 'B']);
  assert.match(overlay.legendTitle, /fix\.trace \(dashed\)/);
  assert.notEqual(overlay.dash, 'none');
  // A's motor faults at the split (cycle 292); B's (the timeout raised) not there: the two lines'
  // first rises are at different cycles.
  const firstRise = (d) => Number(/H([\d.]+)V2(?!\d)/.exec(d)?.[1] ?? NaN);
  assert.ok(Number.isFinite(firstRise(overlay.own)), `A's fault rises: ${overlay.own}`);
  assert.notEqual(firstRise(overlay.other), firstRise(overlay.own), `A ${overlay.own}, B ${overlay.other}`);
  assert.ok(await timeline.$('#lanes .lane[data-variable="Line.conveyorOut"] path.lane-compared'), "B's conveyor over A's");
  await runCommand('Notifications: Clear All Notifications');
  await page.mouse.move(5, 5);
  await shot('compare');
  const panel = await (await page.$('.part.panel')).boundingBox();
  const top = Math.max(0, Math.round(panel.y - 300));
  await shot('compare-readme', { x: 0, y: top, width: 1440, height: Math.round(panel.y + panel.height - top) });
});

// ---- Completion and a replayed trace's own sources (issue 31) -----------------------------------

/** The rows of the editor's suggest widget while it shows: label and whether it is the focused one. */
const suggestRows = () =>
  page.evaluate(() => {
    const widget = document.querySelector('.editor-instance .suggest-widget.visible');
    if (!widget) return undefined;
    return [...widget.querySelectorAll('.monaco-list-row')].map((r) => ({
      label: r.querySelector('.label-name')?.textContent.trim() ?? '',
      focused: r.classList.contains('focused'),
    }));
  });

/** Waits until the suggest widget lists `wanted` (every label in it), asking again with Ctrl+Space
 *  now and then: a request that met a language server still reading the folder may have come back
 *  empty. Returns the labels shown. */
async function suggestionsInclude(what, wanted) {
  let polls = 0;
  return until(what, async () => {
    const rows = await suggestRows();
    const labels = rows?.map((r) => r.label) ?? [];
    if (wanted.every((w) => labels.includes(w))) return labels;
    if (polls++ % 15 === 14) {
      await page.keyboard.down('Control');
      await page.keyboard.press('Space');
      await page.keyboard.up('Control');
    }
    return undefined;
  });
}

/** Whether the active editor's tab has unsaved changes (not yet saved by code-server's autosave). */
const activeTabDirty = () => page.evaluate(() => document.querySelector('.tabs-container .tab.active')?.classList.contains('dirty') ?? false);

/** Moves the cursor to `line` (Go to Line) and waits until the status bar says it is there. */
async function cursorToLine(line) {
  await until(`line ${line} entered in Go to Line`, () => typeIntoGoToLine(line));
  await until(`the cursor on line ${line}`, async () => (await statusBarLine()) === line);
}

test('completion: names in scope with Ctrl+Space, the members of a function block after "."; Enter puts the one picked into the line', async () => {
  await plantCopy('completion-plant');
  // A new line after `conveyorOut := motor.out;` in LineControl's body, where `motor` is a MotorCtl.
  await cursorToLine(breakpointLine);
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  const line = breakpointLine + 1;
  await until(`the cursor on the new line ${line}`, async () => (await statusBarLine()) === line);
  await page.keyboard.type('conveyorOut := moto');
  await page.keyboard.down('Control');
  await page.keyboard.press('Space');
  await page.keyboard.up('Control');
  // LineControl's variables that start so: the block instance, and its command and feedback.
  const names = await suggestionsInclude('the variables of LineControl in the suggestions', ['motor', 'motorCmd', 'motorFb']);
  assert.ok(!names.includes('conveyorOut'), `only the names that match "moto": ${JSON.stringify(names)}`);
  await page.keyboard.press('Escape');
  await until('the suggestions closed', async () => (await suggestRows()) === undefined);

  // `motor.` offers MotorCtl's inputs, outputs and methods (fbs.st).
  await page.keyboard.type('r.');
  const members = await suggestionsInclude("MotorCtl's members after 'motor.'", ['cmd', 'feedback', 'out', 'running', 'fault', 'Reset']);
  assert.ok(!members.includes('motorCmd'), `members only: ${JSON.stringify(members)}`);
  await page.mouse.move(5, 5);
  await shot('completion');
  // Typed on, the list narrows to `fault`; Enter puts it into the line.
  await page.keyboard.type('fau');
  await until('fault alone, focused, in the suggestions', async () => {
    const rows = await suggestRows();
    return rows?.length === 1 && rows[0].label === 'fault' && rows[0].focused;
  });
  await page.keyboard.press('Enter');
  await until('the suggestions closed', async () => (await suggestRows()) === undefined);
  const text = await until(`line ${line} with the accepted member`, async () => (await editorLine(line))?.text.trimEnd());
  assert.equal(text, 'conveyorOut := motor.fault');

  // Undone, the file is as it was, in the editor and on disk (autosave is off in these tests, so
  // nothing reaches the disk; were it on, code-server would save a second after each edit).
  const file = join(scratch, 'completion-plant/programs.st');
  const original = readFileSync(join(plant, 'programs.st'), 'utf8');
  await until('the edit undone, in the editor and on disk', async () => {
    if ((await editorLine(line))?.text.trimEnd() !== original.split('\n')[line - 1]) {
      await page.keyboard.down('Control');
      await page.keyboard.press('KeyZ');
      await page.keyboard.up('Control');
      return false;
    }
    return !(await activeTabDirty()) && readFileSync(file, 'utf8') === original;
  });
});

/** The active editor's document: its URI and language id (as the workbench marks them in the DOM). */
const activeDocument = () =>
  page.evaluate(() => {
    const instance = document.querySelector('.editor-instance');
    const editor = instance?.querySelector('.monaco-editor[data-uri]');
    return editor ? { uri: editor.getAttribute('data-uri'), language: instance.getAttribute('data-mode-id') } : undefined;
  });

/** Waits until the active editor shows `name` from the trace: its tab, a scanback-trace: URI whose
 *  path is `recorded`, the st language, and text on `line`. */
const showsFromTrace = (what, name, recorded, line, text) =>
  until(what, async () => {
    const shown = await activeDocument();
    const tab = await page.evaluate(() => document.querySelector('.tabs-container .tab.active')?.getAttribute('data-resource-name'));
    const drawn = await editorLine(line);
    return tab === name && shown?.uri.startsWith('scanback-trace://') && shown.uri.endsWith(recorded) && shown.language === 'st' &&
      drawn?.text.trim().startsWith(text.trim()) ? shown : undefined;
  });

test('a replayed trace whose sources are not in the workspace: shown from the trace (scanback-trace:, st), a breakpoint there is hit, and the tab survives a reload of the window', async () => {
  // README's /tmp/plant.trace: recorded with paths relative to the checkout, replayed from a folder
  // that holds the trace alone, so no file of the workspace (or at the recorded path) has the text.
  const folder = join(scratch, 'trace-only');
  mkdirSync(folder, { recursive: true });
  const trace = join(folder, 'plant.trace');
  execFileSync(binary, ['run', ...plantFiles.map((f) => `examples/plant/${f}`), '--cycles', '100',
    '--inputs', 'examples/plant/stimulus.csv', '--record', trace, '--quiet'], { cwd: root });
  // (The relative paths resolve against the replay's folder, where nothing is.)
  const recorded = join(folder, 'examples/plant/programs.st');
  const programs = readFileSync(join(plant, 'programs.st'), 'utf8').split('\n');
  const lineText = (line) => programs[line - 1].replace(/\s+$/, '');
  await openWorkbench(folder);
  await until('the explorer to show the trace', () =>
    page.evaluate(() => document.querySelector('.explorer-folders-view')?.textContent.includes('plant.trace')),
  );
  await runCommand('scanback: Open Trace');
  await answerFileDialog(/^Open a scanback trace/, folder, 'plant.trace');
  // A replay starts at the end of the recording: the Tank program's last statement.
  await until('the replay to stop', () => callStackSays(/Paused on entry/));
  const entryLine = await until('the current line', stackFrameLine);
  const shown = await showsFromTrace('programs.st from the trace', 'programs.st', recorded, entryLine, lineText(entryLine));
  assert.equal(Buffer.from(shown.uri.slice('scanback-trace://'.length).split('/')[0], 'hex').toString(), trace, `the URI names the trace: ${shown.uri}`);

  // A breakpoint from the gutter of that document; from cycle 10, Continue stops there.
  await clickGutter(breakpointLine);
  const breakpointRow = await until('the breakpoint in the Breakpoints view', () =>
    page.evaluate(() => [...document.querySelectorAll('.debug-breakpoints .monaco-list-row')].map((r) => ({
      name: r.querySelector('.name')?.textContent, folder: r.querySelector('.file-path')?.textContent,
    })).find((r) => r.name === 'programs.st')),
  );
  assert.equal(breakpointRow.folder, 'examples/plant', 'the recorded folder beside the breakpoint, not "."');
  await runCommandWithInput('scanback: Go to Cycle', '10');
  await until('the stop at cycle 10', async () => (await whereCycle()) === 10 && callStackSays(/Paused on goto/));
  await clickWhenReady('the Continue button', '.debug-toolbar .codicon-debug-continue');
  await until('the stop at the breakpoint', async () => (await stackFrameLine()) === breakpointLine && callStackSays(/Paused on breakpoint/));
  assert.equal(await whereCycle(), 10, "the breakpoint is hit in cycle 10's Fast task");
  await showsFromTrace('the breakpoint\'s line shown from the trace', 'programs.st', recorded, breakpointLine, lineText(breakpointLine));
  // (Variables follows: LineControl's instance, no longer the Tank's of the stop before; and the
  // editor's inline values, which the extension gives documents of the st language.)
  await until('the Variables view of LineControl', () => findVariablesRow('conveyorOut'));
  await until('the inline values on the line', async () => /conveyorOut = (TRUE|FALSE), motor\.out = (TRUE|FALSE)/.test((await editorLine(breakpointLine))?.text ?? ''));
  await page.mouse.move(5, 5);
  await shot('trace-sources');

  // Reload the window: the session ends, the tab is restored with the text from the trace.
  const before = await page.evaluate(() => performance.timeOrigin);
  await runCommand('Developer: Reload Window');
  await until('the window reloaded', () => page.evaluate(() => performance.timeOrigin).then((t) => t !== before, () => false));
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  // (The restored editor shows where it was: the breakpoint's line.)
  await showsFromTrace('the restored tab, from the trace', 'programs.st', recorded, breakpointLine, lineText(breakpointLine));
  assert.equal(await page.evaluate(() => /Unable to resolve resource/.test(document.querySelector('.part.editor')?.textContent ?? '')), false);
  await shot('trace-sources-reload');

  // Opened again, the trace's stop at its end shows programs.st from the trace in the restored tab.
  await runCommand('scanback: Open Trace');
  await answerFileDialog(/^Open a scanback trace/, folder, 'plant.trace');
  await until('the replay to stop again', () => callStackSays(/Paused on entry/));
  await until('the current line', async () => (await stackFrameLine()) === entryLine);
  await showsFromTrace('programs.st from the trace again', 'programs.st', recorded, entryLine, lineText(entryLine));
  assert.equal(await page.$$eval('.tabs-container .tab', (tabs) => tabs.length), 1, 'one tab: the restored one shows the stop');
  await page.keyboard.down('Shift');
  await page.keyboard.press('F5');
  await page.keyboard.up('Shift');
  await until('the session to end', noSession);
});
