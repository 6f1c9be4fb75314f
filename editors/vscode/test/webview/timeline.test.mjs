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
const hidden = (selector) => page.$eval(selector, (e) => e.hidden || getComputedStyle(e).display === 'none');
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
  await page.keyboard.press('End');
  assert.deepEqual((await waitForSeeks(2))[1], { type: 'seek', cycle: 1999 }, 'a pause after a key sends it');
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
