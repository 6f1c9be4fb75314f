// The Scan Timeline webview in a real browser (headless Debian chromium, puppeteer-core): the page
// VS Code shows, fed `scanback/timeline` bodies recorded from real sessions (fixtures/, see
// record-fixtures.mjs). Asserts on the DOM and on the messages the page posts; keeps a screenshot.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { launchChromium } from '../chromium.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const extension = resolve(here, '../..');
const artifacts = resolve(extension, '../../build/vscode/test');
const require = createRequire(import.meta.url);
const { timelineHtml } = require('../../out-test/timeline/html.js');
const fixture = (name) => JSON.parse(readFileSync(join(here, 'fixtures', name), 'utf8'));
const replay = fixture('replay.json');
const live = fixture('live.json');
const fault = fixture('fault.json');
const signals = fixture('signals.json');
const signalsZoomed = fixture('signals-zoomed.json');

let browser;
let page;
let pageUrl;
let scratch;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  const html = timelineHtml({
    cspSource: 'file:',
    nonce: 'test-nonce',
    scriptUri: pathToFileURL(join(extension, 'dist/timeline-view.js')).href,
    styleUri: pathToFileURL(join(extension, 'media/timeline.css')).href,
  });
  const file = join(artifacts, 'timeline.html');
  writeFileSync(file, html);
  pageUrl = pathToFileURL(file).href;
  scratch = mkdtempSync(join(artifacts, 'webview-'));
  browser = await launchChromium(scratch, { width: 420, height: 340 });
});

after(async () => {
  await browser?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

beforeEach(async () => {
  page?.close();
  page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.problems = problems;
  // What VS Code gives a webview: acquireVsCodeApi().postMessage. Recorded for the assertions.
  await page.evaluateOnNewDocument(() => {
    window.posted = [];
    window.acquireVsCodeApi = () => ({ postMessage: (m) => window.posted.push(m) });
  });
  await page.goto(pageUrl);
  await page.waitForFunction(() => window.posted.length > 0);
});

const send = (message) => page.evaluate((m) => window.postMessage(m, '*'), message);
const text = (selector) => page.$eval(selector, (e) => e.textContent);
// What the user sees: an element `hidden` that a style still displays is not hidden.
const hidden = (selector) => page.$eval(selector, (e) => getComputedStyle(e).display === 'none');
const posted = () => page.evaluate(() => window.posted);
const seeks = async () => (await posted()).filter((m) => m.type === 'seek');
const leftPercent = (selector) => page.$eval(selector, (e) => parseFloat(e.style.left));

async function show(timeline, session = { type: 'session', state: 'active', name: 'Plant', live: timeline.live }) {
  await send(session);
  await send({ type: 'timeline', timeline });
  await page.waitForFunction(() => !document.getElementById('range').hidden);
}

async function trackPoint(fraction) {
  const box = await (await page.$('#track')).boundingBox();
  return { x: box.x + box.width * fraction, y: box.y + box.height / 2 };
}

async function waitForSeeks(count) {
  await page.waitForFunction((n) => window.posted.filter((m) => m.type === 'seek').length >= n, { timeout: 5000 }, count);
  return seeks();
}

test('the page says ready first, and shows that there is no session', async () => {
  assert.deepEqual((await posted())[0], { type: 'ready' });
  assert.match(await text('#status'), /No scanback session/);
  assert.equal(await hidden('#range'), true);
  assert.deepEqual(page.problems, []);
});

test('a replay timeline: range, virtual times, current position, tasks', async () => {
  await show(replay);
  assert.equal(await text('#first-label'), '0 · T#0ms');
  assert.equal(await text('#last-label'), '1999 · T#18s170ms');
  assert.equal(await text('#position-label'), '400:50 · T#3s630ms');
  assert.ok(Math.abs((await leftPercent('#cursor')) - (400 / 1999) * 100) < 1e-3);
  const slider = await page.$eval('#track', (e) => ({
    role: e.getAttribute('role'),
    min: e.getAttribute('aria-valuemin'),
    max: e.getAttribute('aria-valuemax'),
    now: e.getAttribute('aria-valuenow'),
    tabIndex: e.tabIndex,
  }));
  assert.deepEqual(slider, { role: 'slider', min: '0', max: '1999', now: '400', tabIndex: 0 });
  assert.equal(await hidden('#live-edge'), true);
  assert.equal(await hidden('#fault-marker'), true);
  assert.match(await text('#stats'), /Fast \(10 ms\), Slow \(100 ms\)/);
  assert.match(await text('#stats'), /2000 recorded \(0\.\.1999\)/);
  assert.doesNotMatch(await text('#stats'), /cycle time/);
  assert.match(await text('#status'), /Session Plant/);
  assert.deepEqual(page.problems, []);
});

test('a click on the track posts a seek to the cycle under the pointer', async () => {
  await show(replay);
  const point = await trackPoint(0.75);
  await page.mouse.click(point.x, point.y);
  const [seek] = await waitForSeeks(1);
  assert.equal(seek.type, 'seek');
  assert.ok(Math.abs(seek.cycle - 0.75 * 1999) <= 1, `seek to ${seek.cycle}`);
  assert.equal(seek.step, undefined);
});

test('a drag posts one seek, where it is let go', async () => {
  await show(replay);
  const from = await trackPoint(0.2);
  const to = await trackPoint(0.5);
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(to.x, to.y, { steps: 8 });
  assert.equal(await hidden('#preview'), false, 'the drag shows where it would go');
  assert.match(await text('#target-label'), /→ cycle (998|999|1000)$/);
  assert.equal((await seeks()).length, 0, 'nothing is sent while dragging');
  await page.mouse.up();
  const all = await waitForSeeks(1);
  assert.equal(all.length, 1);
  assert.equal(await hidden('#target-label'), false, 'the target shows until the stop brings the new position');
  await send({ type: 'timeline', timeline: { ...replay, cycle: all[0].cycle, step: 0 } });
  await page.waitForFunction(() => document.getElementById('target-label').hidden);
  assert.ok(Math.abs(all[0].cycle - 0.5 * 1999) <= 1, `seek to ${all[0].cycle}`);
});

test('the keyboard moves and seeks: arrows, then Enter; End', async () => {
  await show(replay);
  await page.focus('#track');
  for (let i = 0; i < 3; ++i) await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('Enter');
  assert.deepEqual((await waitForSeeks(1))[0], { type: 'seek', cycle: 402 });
  // End goes to the live edge (the end of a replayed recording): the adapter knows where it is.
  await page.keyboard.press('End');
  await page.waitForFunction(() => window.posted.some((m) => m.type === 'goToLive'), { timeout: 5000 });
  assert.equal((await seeks()).length, 1, 'End seeks no cycle of its own');
});

test('where you are: a banner in history with Go to Live, the runtime running; none in a replay', async () => {
  await show({ ...live, cycle: 100, step: 2, newest: { cycle: live.lastCycle, step: 93 }, running: true });
  assert.equal(await hidden('#where'), false);
  assert.equal(await text('#where-text'), `history, cycle 100 of ${live.lastCycle} — runtime running`);
  assert.equal(await hidden('#go-live'), false);
  await page.click('#go-live');
  await page.waitForFunction(() => window.posted.some((m) => m.type === 'goToLive'), { timeout: 5000 });
  await send({ type: 'timeline', timeline: { ...live, newest: { cycle: live.cycle, step: live.step }, running: true } });
  await page.waitForFunction(() => document.getElementById('where-text').textContent.startsWith('live'));
  assert.equal(await text('#where-text'), `live, cycle ${live.cycle} — runtime running`);
  assert.equal(await hidden('#go-live'), true);
  await show({ ...replay, cycle: replay.lastCycle, newest: { cycle: replay.lastCycle, step: replay.step } });
  assert.equal(await hidden('#where'), true);
  // Nor before its end: a replayed recording has no live edge to go back to.
  await show({ ...replay, cycle: replay.firstCycle, newest: { cycle: replay.lastCycle, step: replay.step } });
  assert.equal(await hidden('#where'), true);
});

test('the time axis has ticks in cycles and virtual time', async () => {
  await show(replay);
  const ticks = await page.$$eval('#ticks .tick', (all) => all.map((t) => ({ text: t.textContent, left: parseFloat(t.style.left) })));
  assert.ok(ticks.length >= 2, JSON.stringify(ticks));
  for (const t of ticks) {
    const match = /^(\d+)(T#.*)$/.exec(t.text);
    assert.ok(match, t.text);
    const cycle = Number(match[1]);
    assert.equal(cycle % 100, 0, 'round cycles');
    assert.ok(Math.abs(t.left - (cycle - replay.firstCycle) / (replay.lastCycle - replay.firstCycle) * 100) < 1e-3);
  }
});

test('markers of several sources: drawn by kind, each replaced by its source, a click seeks there', async () => {
  await show(replay);
  await send({ type: 'markers', source: 'breakpoints', markers: [{ cycle: 500, step: 3, kind: 'breakpoint', label: 'breakpoint hit' }] });
  await send({ type: 'markers', source: 'lanes', markers: [{ cycle: 800, step: 1, kind: 'write', label: 'Line.run := TRUE' }, { cycle: -4, kind: 'write', label: 'bad' }] });
  await send({ type: 'markers', source: 'recording', markers: [{ cycle: 1999, kind: 'fault', label: 'fault: division by zero' }] });
  await page.waitForFunction(() => document.querySelectorAll('#markers .marker').length === 3);
  const kinds = await page.$$eval('#markers .marker', (all) => all.map((m) => [m.dataset.kind, m.title]));
  assert.deepEqual(kinds, [
    ['breakpoint', 'breakpoint hit (500:3)'],
    ['write', 'Line.run := TRUE (800:1)'],
    ['fault', 'fault: division by zero (cycle 1999)'],
  ]);
  await send({ type: 'markers', source: 'lanes', markers: [] });
  await page.waitForFunction(() => document.querySelectorAll('#markers .marker').length === 2);
  await page.click('#markers .marker[data-kind="breakpoint"]');
  assert.deepEqual((await waitForSeeks(1))[0], { type: 'seek', cycle: 500, step: 3 });
});

test('no statistics of cycle times before a cycle was measured', async () => {
  await show({ ...live, cycleTime: { cycles: 0, medianNs: 0, p99Ns: 0, maxNs: 0 } });
  const stats = await text('#stats');
  assert.doesNotMatch(stats, /median/);
  assert.doesNotMatch(stats, /0 cycles/);
});

test('gaps are drawn, and a click inside one goes to the first cycle after it', async () => {
  // The recorder drops cycles only under load; this is the replay body with a gap put in.
  await show({ ...replay, gaps: [{ firstCycle: 1000, cycleCount: 200 }] });
  const gap = await page.$eval('.gap', (e) => ({ left: parseFloat(e.style.left), width: parseFloat(e.style.width), title: e.title }));
  assert.ok(Math.abs(gap.left - (1000 / 1999) * 100) < 1e-3);
  assert.ok(Math.abs(gap.width - (200 / 1999) * 100) < 1e-3);
  assert.match(gap.title, /cycles 1000\.\.1199 were dropped/);
  assert.match(await text('#stats'), /1 \(200 cycles dropped\)/);
  const point = await trackPoint(1100 / 1999);
  await page.mouse.click(point.x, point.y);
  assert.equal((await waitForSeeks(1))[0].cycle, 1200);
});

test('a live timeline: the live edge and the cycle-time statistics', async () => {
  await show(live);
  assert.equal(await hidden('#live-edge'), false);
  assert.match(await text('#last-label'), /\(live\)/);
  const stats = await text('#stats');
  assert.match(stats, /median 2\.62 µs · p99 4\.29 µs · max 5\.27 ms/);
  assert.match(stats, /53229 cycles/);
  assert.match(await text('#status'), /\(live\)/);
  // The range grows: a later timeline moves the end and keeps the position.
  await send({ type: 'timeline', timeline: { ...live, lastCycle: live.lastCycle * 2, lastTimeNs: live.lastTimeNs * 2 } });
  await page.waitForFunction((n) => document.getElementById('last-label').textContent.startsWith(String(n)), {}, live.lastCycle * 2);
  assert.ok(Math.abs((await leftPercent('#cursor')) - 50) < 0.01);
});

test('a live recording that fails says so, with its reason and since when; recovered, it counts what was lost', async () => {
  await show({ ...live, recording: { path: '/var/trace/plant.trace', state: 'ok', lostCycles: 0, failures: 0 } });
  assert.equal(await hidden('#recording-text'), true);
  assert.match(await text('#stats'), /recording\s*ok/);
  const failing = {
    path: '/var/trace/plant.trace',
    state: 'failing',
    error: 'cannot write its .partial file: No space left on device',
    sinceCycle: 5120,
    lostCycles: 0,
    failures: 1,
  };
  await send({ type: 'timeline', timeline: { ...live, recording: failing } });
  await page.waitForFunction(() => !document.getElementById('recording-text').hidden);
  assert.match(await text('#recording-text'), /Recording to \/var\/trace\/plant\.trace failed from cycle 5120: cannot write its \.partial file: No space left on device/);
  assert.equal(await page.$eval('#recording-text', (e) => e.getAttribute('role')), 'status');
  assert.match(await text('#stats'), /failing since cycle 5120/);
  const file = join(artifacts, 'timeline-recording-failed-webview.png');
  await page.screenshot({ path: file });
  assert.ok(readFileSync(file).length > 1000);
  await send({ type: 'timeline', timeline: { ...live, recording: { path: '/var/trace/plant.trace', state: 'ok', lostCycles: 730, failures: 1 } } });
  await page.waitForFunction(() => document.getElementById('recording-text').hidden);
  assert.match(await text('#stats'), /recording\s*ok · 730 cycles lost in 1 failure/);
});

test('a recording that ends in a fault shows the fault marker and message', async () => {
  await show(fault);
  assert.equal(await hidden('#fault-marker'), false);
  assert.equal(await leftPercent('#fault-marker'), 100);
  assert.match(await text('#fault-text'), /division by zero \(cycle 56, task Main\)/);
});

test('errors are shown in the view; the session ending is shown; unknown messages are ignored', async () => {
  await show(replay);
  await send({ type: 'somethingNew', lanes: [1, 2] });
  await send({ type: 'error', message: 'Cannot go to cycle 5: cycle 5 is in a gap' });
  assert.equal(await hidden('#error'), false);
  assert.equal(await text('#error'), 'Cannot go to cycle 5: cycle 5 is in a gap');
  assert.equal(await page.$eval('#error', (e) => e.getAttribute('role')), 'alert');
  await send({ type: 'timeline', timeline: { ...replay, cycle: 500, step: 0 } });
  await page.waitForFunction(() => document.getElementById('error').hidden);
  await send({ type: 'session', state: 'ended', name: 'Plant' });
  await page.waitForFunction(() => /ended/.test(document.getElementById('status').textContent));
  assert.deepEqual(page.problems, []);
});

test('screenshot of a live session (kept as a test artifact)', async () => {
  await show({ ...live, cycle: Math.round(live.lastCycle * 0.6), gaps: [] });
  await send({ type: 'timeline', timeline: { ...live, cycle: Math.round(live.lastCycle * 0.6) } });
  const file = join(artifacts, 'timeline-webview.png');
  await page.screenshot({ path: file });
  assert.ok(readFileSync(file).length > 1000);
});

// ---- waveform lanes (fixtures: scanback/signals bodies of the same recording as replay.json) ----

async function showLanes(body = signals, timeline = replay) {
  await show(timeline);
  await send({ type: 'signals', signals: body });
  await page.waitForFunction((n) => document.querySelectorAll('#lanes .lane').length === n, {}, body.signals.length);
}

const lane = (variable) => `#lanes .lane[data-variable="${variable}"]`;
const plotWidth = () => page.$eval('#track', (e) => e.getBoundingClientRect().width);
/** The x of each vertical step of a lane's trace (its `d` is M x,y then H x V y pairs). */
async function traceEdges(variable) {
  const d = await page.$eval(`${lane(variable)} .lane-trace`, (e) => e.getAttribute('d'));
  const edges = [];
  for (const m of d.matchAll(/H(-?[\d.]+)V(-?[\d.]+)/g)) edges.push({ x: Number(m[1]), y: Number(m[2]) });
  return { d, edges };
}
const near = (a, b, tolerance = 0.11) => Math.abs(a - b) <= tolerance;

test('lanes: one per signal under the strip, in order, with type, value at the position, remove and errors', async () => {
  await showLanes();
  const heads = await page.$$eval('#lanes .lane', (lanes) =>
    lanes.map((l) => ({
      name: l.querySelector('.lane-name').textContent,
      type: l.querySelector('.lane-type')?.textContent,
      value: l.querySelector('.lane-value')?.textContent,
      remove: l.querySelector('.lane-remove').getAttribute('aria-label'),
    })),
  );
  assert.deepEqual(heads.map((h) => h.name), ['Line.conveyorOut', 'gTank.level', 'Line.state', 'gStatusText', 'Line.nope']);
  assert.deepEqual(heads.map((h) => h.type), ['BOOL', 'REAL', 'LineState', 'STRING', undefined]);
  // At 400:50 the line runs again (Running from 376), the conveyor is on (TRUE from 365).
  assert.equal(heads[0].value, 'TRUE');
  assert.equal(heads[2].value, 'Running');
  assert.equal(heads[4].remove, 'Remove Line.nope from the Scan Timeline');
  assert.equal(await text(`${lane('Line.nope')} .lane-error`), "LineControl has no member 'nope'");
  assert.equal(await page.$(`${lane('Line.nope')} svg`), null, 'an error lane draws nothing');
  assert.equal(await hidden('#lanes-empty'), true);
  // gTank.level came downsampled (complete: false): the lane says so.
  assert.equal(await page.$(`${lane('gTank.level')} .lane-thinned`) !== null, true);
  assert.equal(await page.$(`${lane('Line.state')} .lane-thinned`), null);
  // The lanes share the strip's axis: same left edge, same width.
  const [track, plot] = await Promise.all([page.$eval('#track', (e) => e.getBoundingClientRect().toJSON()), page.$eval(`${lane('Line.state')} svg`, (e) => e.getBoundingClientRect().toJSON())]);
  assert.ok(near(track.left, plot.left, 0.5) && near(track.width, plot.width, 1), `${JSON.stringify(track)} vs ${JSON.stringify(plot)}`);
  assert.deepEqual(page.problems, []);
});

test('a BOOL lane is a 0/1 step trace with an edge at each change', async () => {
  await showLanes();
  const width = await plotWidth();
  const conveyor = signals.signals[0];
  const { d, edges } = await traceEdges('Line.conveyorOut');
  assert.match(d, /^M0,16/, 'starts low (FALSE) at the first cycle');
  assert.deepEqual(
    edges.map((e) => e.y),
    conveyor.changes.map((c) => (c.value.number ? 2 : 16)),
    'up for TRUE, down for FALSE',
  );
  conveyor.changes.forEach((c, i) => assert.ok(near(edges[i].x, (c.cycle / 1999) * width), `edge ${i} at cycle ${c.cycle}: x ${edges[i].x}`));
  assert.ok(d.endsWith(`H${Math.round(width * 10) / 10}`), 'and runs to the last cycle');
  // The TRUE stretches are filled: from 7 to 292, and from 365 on.
  const high = await page.$eval(`${lane('Line.conveyorOut')} .lane-high`, (e) => e.getAttribute('d'));
  assert.equal((high.match(/M/g) ?? []).length, 2);
});

test('a number lane is scaled between its min and max, which it labels', async () => {
  await showLanes();
  const level = signals.signals[1];
  const numbers = [level.initial, ...level.changes.map((c) => c.value)].map((v) => v.number);
  const max = level.changes.map((c) => c.value).reduce((a, b) => (b.number > a.number ? b : a), level.initial);
  assert.equal(await text(`${lane('gTank.level')} .lane-max`), max.text);
  assert.equal(await text(`${lane('gTank.level')} .lane-min`), level.initial.text);
  const { d, edges } = await traceEdges('gTank.level');
  const ys = [Number(/^M[\d.]+,([\d.]+)/.exec(d)[1]), ...edges.map((e) => e.y)];
  assert.equal(ys.length, numbers.length);
  // y runs from 32 (the minimum) up to 2 (the maximum), linearly in the value.
  const lo = Math.min(...numbers);
  const hi = Math.max(...numbers);
  numbers.forEach((n, i) => assert.ok(near(ys[i], 32 - ((n - lo) / (hi - lo)) * 30), `value ${n}: y ${ys[i]}`));
});

test('an enum lane is bus segments between its changes, with the value written in where it fits', async () => {
  await showLanes();
  const width = await plotWidth();
  const segments = await page.$$eval(`${lane('Line.state')} .lane-segment`, (all) =>
    all.map((p) => ({ from: Number(p.dataset.from), to: Number(p.dataset.to), xs: p.getAttribute('points').split(' ').map((pt) => Number(pt.split(',')[0])) })),
  );
  const state = signals.signals[2];
  const bounds = [0, ...state.changes.map((c) => c.cycle), 1999];
  assert.deepEqual(
    segments.map((s) => [s.from, s.to]),
    bounds.slice(0, -1).map((b, i) => [b, bounds[i + 1]]),
  );
  for (const s of segments) {
    assert.ok(near(Math.min(...s.xs), (s.from / 1999) * width), `segment ${s.from} starts at its cycle`);
    assert.ok(near(Math.max(...s.xs), (s.to / 1999) * width), `segment ${s.from} ends at ${s.to}`);
  }
  // Only the long Running stretch (376..1999) has room for its name.
  assert.deepEqual(await page.$$eval(`${lane('Line.state')} .lane-text`, (all) => all.map((t) => t.textContent)), ['Running']);
});

test('hover on a lane shows the variable, the cycle and the value there; on an edge, the change', async () => {
  await showLanes();
  const box = await (await page.$(`${lane('Line.state')} svg`)).boundingBox();
  const at = (cycle) => ({ x: box.x + (cycle / 1999) * box.width, y: box.y + box.height / 2 });
  let p = at(1000);
  await page.mouse.move(p.x, p.y);
  await page.waitForFunction(() => !document.getElementById('lane-tip').hidden);
  assert.match(await text('#lane-tip'), /^Line\.state\ncycle (999|1000|1001): Running$/);
  p = at(293);
  await page.mouse.move(p.x + 1, p.y);
  await page.waitForFunction(() => /Faulted/.test(document.getElementById('lane-tip').textContent));
  assert.equal(await text('#lane-tip'), 'Line.state\ncycle 293: Running → Faulted (at 293:48)\nclick: go to the statement that wrote it');
  assert.equal(await page.$eval(`${lane('Line.state')} svg`, (e) => e.classList.contains('on-edge')), true);
  await page.mouse.move(2, 2); // off the lanes
  await page.waitForFunction(() => document.getElementById('lane-tip').hidden);
});

test('a click on an edge posts a seek to the statement that wrote the value; elsewhere on a lane, nothing', async () => {
  await showLanes();
  const box = await (await page.$(`${lane('Line.conveyorOut')} svg`)).boundingBox();
  await page.mouse.click(box.x + (1000 / 1999) * box.width, box.y + box.height / 2);
  // The FALSE edge at 292:55: the writing statement is the step before, 292:54.
  await page.mouse.click(box.x + (292 / 1999) * box.width + 2, box.y + box.height / 2);
  assert.deepEqual(await waitForSeeks(1), [{ type: 'seek', cycle: 292, step: 54 }]);
});

test('from the keyboard: ←/→ go from edge to edge starting at the position, Enter seeks to the writer', async () => {
  await showLanes();
  await page.$eval(`${lane('Line.conveyorOut')} svg`, (e) => e.focus());
  // The position is 400:50: the edge before it is the conveyor starting again at 365:55.
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(() => !document.getElementById('lane-tip').hidden);
  assert.match(await text('#lane-tip'), /cycle 365: FALSE → TRUE \(at 365:55\)\nEnter: go to the statement/);
  await page.keyboard.press('Enter');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('Enter');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight'); // past the last edge: stays on it
  await page.keyboard.press(' ');
  assert.deepEqual(await waitForSeeks(3), [
    { type: 'seek', cycle: 365, step: 54 },
    { type: 'seek', cycle: 292, step: 54 },
    { type: 'seek', cycle: 365, step: 54 },
  ]);
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => document.getElementById('lane-tip').hidden);
});

test('remove posts removeSignal; a signals message without the lane drops it', async () => {
  await showLanes();
  await page.click(`${lane('gStatusText')} .lane-remove`);
  assert.deepEqual((await posted()).filter((m) => m.type === 'removeSignal'), [{ type: 'removeSignal', variable: 'gStatusText' }]);
  await send({ type: 'signals', signals: { ...signals, signals: signals.signals.filter((s) => s.variable !== 'gStatusText') } });
  await page.waitForFunction(() => document.querySelectorAll('#lanes .lane').length === 4);
  await send({ type: 'signals', signals: { ...signals, signals: [] } });
  await page.waitForFunction(() => !document.getElementById('lanes-empty').hidden);
});

test('the view asks for its range at a point per pixel; a zoom asks for the zoomed range and the lanes follow the axis', async () => {
  await showLanes();
  const width = Math.round(await plotWidth());
  const requests = async () => (await posted()).filter((m) => m.type === 'requestSignals');
  await page.waitForFunction(() => window.posted.some((m) => m.type === 'requestSignals'));
  assert.deepEqual((await requests())[0], { type: 'requestSignals', firstCycle: 0, lastCycle: 1999, maxPoints: width });
  // Another stop at the same range asks nothing new.
  await send({ type: 'timeline', timeline: { ...replay, cycle: 300, step: 0 } });
  // Zoom in four times around the position (cycle 300) from the keyboard.
  await page.focus('#track');
  for (let i = 0; i < 4; ++i) await page.keyboard.press('+');
  await page.waitForFunction(() => window.posted.filter((m) => m.type === 'requestSignals').length === 2);
  const zoomed = (await requests())[1];
  assert.equal(zoomed.lastCycle - zoomed.firstCycle, 125, 'a sixteenth of 1999 cycles');
  assert.ok(zoomed.firstCycle <= 300 && zoomed.lastCycle >= 300);
  assert.match(await text('#zoom-label'), new RegExp(`cycles ${zoomed.firstCycle}\\.\\.${zoomed.lastCycle} of 0\\.\\.1999`));
  assert.equal(await text('#first-label'), String(zoomed.firstCycle));
  // The strip's cursor and the lanes use the zoomed axis.
  const fraction = (cycle) => (cycle - zoomed.firstCycle) / (zoomed.lastCycle - zoomed.firstCycle);
  assert.ok(near(await leftPercent('#cursor'), fraction(300) * 100, 0.01));
  await send({ type: 'signals', signals: signalsZoomed });
  await page.waitForFunction(() => document.querySelector('#lanes .lane-segment[data-from="250"]'));
  const { edges } = await traceEdges('Line.conveyorOut');
  const fall = edges.find((e) => e.y === 16);
  assert.ok(near(fall.x, fraction(292) * width, 0.6), `the FALSE edge at 292 is at x ${fall.x}`);
  // The cycles the answer does not cover (it was for 250..400) are marked, not drawn as a value.
  assert.ok((await page.$$(`${lane('Line.state')} .lane-unknown`)).length === (zoomed.lastCycle > 400 ? 1 : 0));
  // Shift+wheel scrolls: a later range is asked for; "all" goes back to the whole history.
  const box = await (await page.$('#track')).boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.keyboard.down('Shift');
  await page.mouse.wheel({ deltaY: 200 });
  await page.keyboard.up('Shift');
  await page.waitForFunction(() => window.posted.filter((m) => m.type === 'requestSignals').length === 3);
  assert.ok((await requests())[2].firstCycle > zoomed.firstCycle);
  await page.click('#zoom-all');
  await page.waitForFunction(() => window.posted.filter((m) => m.type === 'requestSignals').length === 4);
  assert.deepEqual((await requests())[3], { type: 'requestSignals', firstCycle: 0, lastCycle: 1999, maxPoints: width });
  assert.equal(await text('#first-label'), '0 · T#0ms');
  assert.deepEqual(page.problems, []);
});

test('a live history that grows asks for the longer range', async () => {
  await showLanes(signals, live);
  await page.waitForFunction(() => window.posted.some((m) => m.type === 'requestSignals'));
  await send({ type: 'timeline', timeline: { ...live, lastCycle: live.lastCycle + 500 } });
  await page.waitForFunction(
    (last) => window.posted.some((m) => m.type === 'requestSignals' && m.lastCycle === last),
    {},
    live.lastCycle + 500,
  );
});

// A compare (Compare With Recording…): the other recording's signals of the same lanes. Here B, a
// fix whose line stops at cycle 380 (its conveyor off, its state Idle) where A's runs on; its tank
// level is A's.
const comparedB = (() => {
  const b = structuredClone(signals);
  const [conveyor, , state] = b.signals;
  conveyor.changes = [conveyor.changes[0], { cycle: 380, step: 55, timeNs: 3450000000, value: { number: 0, text: 'FALSE' } }];
  state.changes = [...state.changes.slice(0, 2), { cycle: 380, step: 48, timeNs: 3450000000, value: { number: 0, text: 'Idle' } }];
  return { side: 'B', trace: '/plant/fixed.trace', signals: b };
})();

test('while comparing, each lane draws the other recording dashed over its own, with an A/B legend; without a compare, nothing', async () => {
  await showLanes();
  assert.equal(await page.$('#lanes .lane-compared'), null, 'no compare: no overlay');
  assert.equal(await page.$('#lanes .lane-legend'), null, 'no compare: no legend');
  assert.equal(await text(`${lane('Line.conveyorOut')} .lane-value`), 'TRUE');

  await send({ type: 'signals', signals, compared: comparedB });
  await page.waitForSelector(`${lane('Line.conveyorOut')} path.lane-compared`);
  const width = await plotWidth();
  // B's BOOL trace: its own edges (up at 7, down at 380), dashed, in another colour than A's.
  const overlay = await page.$eval(`${lane('Line.conveyorOut')} path.lane-compared`, (e) => {
    const own = e.parentNode.querySelector('.lane-trace:not(.lane-compared)');
    return { d: e.getAttribute('d'), dash: getComputedStyle(e).strokeDasharray, colour: getComputedStyle(e).stroke, ownColour: getComputedStyle(own).stroke, ownDash: getComputedStyle(own).strokeDasharray };
  });
  const edges = [...overlay.d.matchAll(/H(-?[\d.]+)V(-?[\d.]+)/g)].map((m) => ({ x: Number(m[1]), y: Number(m[2]) }));
  assert.deepEqual(edges.map((e) => e.y), [2, 16], overlay.d);
  assert.ok(near(edges[1].x, (380 / 1999) * width), `B's fall at cycle 380: x ${edges[1].x}`);
  assert.notEqual(overlay.dash, 'none');
  assert.equal(overlay.ownDash, 'none', "A's own trace stays solid");
  assert.notEqual(overlay.colour, overlay.ownColour);
  // A's own trace is unchanged under it.
  assert.deepEqual((await traceEdges('Line.conveyorOut')).edges.map((e) => e.y), [2, 16, 2]);
  // Every drawable lane has the overlay (a number lane one scale for both, an enum lane outlines);
  // the error lane none.
  assert.ok(await page.$(`${lane('gTank.level')} path.lane-compared`));
  assert.equal((await page.$$(`${lane('Line.state')} .lane-compared-segment`)).length, 4, 'its initial value and its three changes');
  assert.equal(await page.$(`${lane('Line.nope')} .lane-compared`), null);
  // The legend says which is which; the value label shows both where they differ at the position
  // (400:50: A runs on, B stopped at 380), one value where they agree.
  assert.deepEqual(await page.$$eval(`${lane('Line.conveyorOut')} .lane-legend > span`, (s) => s.map((e) => e.textContent)), ['A', 'B']);
  assert.match(await page.$eval(`${lane('Line.conveyorOut')} .lane-legend-other`, (e) => e.title), /fixed\.trace \(dashed\)/);
  assert.equal(await text(`${lane('Line.conveyorOut')} .lane-value`), 'A TRUE · B FALSE');
  assert.equal(await text(`${lane('Line.state')} .lane-value`), 'A Running · B Idle');
  assert.doesNotMatch(await text(`${lane('gTank.level')} .lane-value`), /·/, 'equal values: one');
  assert.equal(await page.$(`${lane('gTank.level')} .lane-value-differs`), null);
  // The session as B (a rerun opened as a session): the other recording is A.
  await send({ type: 'signals', signals, compared: { ...comparedB, side: 'A' } });
  await page.waitForFunction((sel) => document.querySelector(sel)?.textContent === 'B TRUE · A FALSE', {}, `${lane('Line.conveyorOut')} .lane-value`);
  await page.screenshot({ path: join(artifacts, 'timeline-lanes-compared.png') });

  // The compare over (a signals message without `compared`, as after another session): gone.
  await send({ type: 'signals', signals });
  await page.waitForFunction(() => document.querySelector('#lanes .lane-compared') === null);
  assert.equal(await page.$('#lanes .lane-legend'), null);
  assert.equal(await text(`${lane('Line.conveyorOut')} .lane-value`), 'TRUE');
  assert.deepEqual(page.problems, []);
});

test('screenshot of lanes (kept as a test artifact)', async () => {
  await page.setViewport({ width: 420, height: 470 });
  await showLanes();
  const box = await (await page.$(`${lane('Line.state')} svg`)).boundingBox();
  await page.mouse.move(box.x + (293 / 1999) * box.width + 1, box.y + box.height / 2);
  await page.waitForFunction(() => !document.getElementById('lane-tip').hidden);
  const file = join(artifacts, 'timeline-lanes-webview.png');
  await page.screenshot({ path: file });
  assert.ok(readFileSync(file).length > 1000);
});

test('the view as the bottom panel shows it: banner, axis, markers and lanes (a picture for the docs)', async () => {
  await page.setViewport({ width: 1280, height: 360 });
  const attached = { ...replay, live: true, cycle: 400, step: 50, newest: { cycle: 1999, step: 30 }, running: true };
  await show(attached, { type: 'session', state: 'active', name: 'Attach to unix:///run/plant.sock', live: true });
  const lanes = { ...signals, signals: signals.signals.filter((s) => ['Line.conveyorOut', 'Line.state', 'gTank.level'].includes(s.variable)) };
  await send({ type: 'signals', signals: lanes });
  const writes = lanes.signals[0].changes.map((c) => ({ cycle: c.cycle, step: Math.max(0, c.step - 1), kind: 'write', label: `Line.conveyorOut := ${c.value.text}` }));
  await send({ type: 'markers', source: 'lanes', markers: writes });
  await send({ type: 'markers', source: 'breakpoints', markers: [{ cycle: 400, step: 50, kind: 'breakpoint', label: 'breakpoint hit' }] });
  await send({ type: 'markers', source: 'recording', markers: [{ cycle: 1200, kind: 'gap', label: 'cycles 1200..1209 dropped' }] });
  await page.waitForFunction(() => document.querySelectorAll('#markers .marker').length >= 3 && document.querySelectorAll('#lanes .lane').length === 3);
  assert.equal(await text('#where-text'), 'history, cycle 400 of 1999 — runtime running');
  await page.screenshot({ path: join(artifacts, 'webview-timeline-panel.png') });
});
