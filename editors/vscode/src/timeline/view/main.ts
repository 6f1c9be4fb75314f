// The Scan Timeline webview. It draws what the extension sends (docs/timeline-protocol.md) and
// posts the user's requests back; it holds no state the extension cannot resend: a reload of the
// page asks for everything again with `ready`.
import { validMarkers, type Marker, type SessionState, type TimelineBody, type TimelineMessage, type ViewMessage } from '../protocol';
import { clampWindow, fractionOf, scrollWindow, ticksOf, timeAtCycle, zoomWindow, type CycleWindow } from './axis';
import { formatDuration, formatPosition, formatVirtualTime } from './format';
import { Lanes } from './lanes';

interface VsCodeApi {
  postMessage(message: ViewMessage): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const post = (message: ViewMessage) => vscode.postMessage(message);

const byId = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const status = byId('status');
const errorText = byId('error');
const range = byId('range');
const track = byId('track');
const cursor = byId('cursor');
const preview = byId('preview');
const gaps = byId('gaps');
const faultMarker = byId('fault-marker');
const faultText = byId('fault-text');
const recordingText = byId('recording-text');
const liveEdge = byId('live-edge');
const firstLabel = byId('first-label');
const lastLabel = byId('last-label');
const positionLabel = byId('position-label');
const targetLabel = byId('target-label');
const stats = byId('stats');
const statsRows = byId('stats-rows');
const zoomLabel = byId('zoom-label');
const lanes = new Lanes(byId('lanes'), byId('lanes-empty'));
const where = byId('where');
const whereText = byId('where-text');
const ticks = byId('ticks');
const markerRow = byId('markers');
/** The markers of each source (`markers` messages), drawn together. */
const markerSets = new Map<string, Marker[]>();

let session: { state: SessionState; name?: string; live?: boolean } = { state: 'none' };
let previousSession: string | undefined;
let timeline: TimelineBody | undefined;
/** A position chosen with the keyboard but not yet sent (sent after a short pause in key presses). */
let pendingCycle: number | undefined;
let pendingTimer: ReturnType<typeof setTimeout> | undefined;
let dragging = false;
/** The zoomed window of cycles; undefined shows the whole history (and follows it as it grows). */
let zoom: CycleWindow | undefined;
/** The range the lanes were last asked for, so that only a change asks again. */
let lastRequest = '';
let requestTimer: ReturnType<typeof setTimeout> | undefined;

const wholeOf = (t: TimelineBody): CycleWindow => ({ first: t.firstCycle, last: t.lastCycle });
/** The cycles the strip and the lanes show. */
function windowOf(t: TimelineBody): CycleWindow {
  return zoom ? clampWindow(zoom, wholeOf(t)) : wholeOf(t);
}

function percent(cycle: number, t: TimelineBody): number {
  return Math.min(100, Math.max(0, fractionOf(cycle, windowOf(t)) * 100));
}

function inView(cycle: number, t: TimelineBody): boolean {
  const w = windowOf(t);
  return cycle >= w.first && cycle <= w.last;
}

/** The recorded cycle nearest to `cycle`: inside the range and outside the gaps (a gap's cycles
 *  cannot be shown, so the first cycle after it is taken). */
function recordedCycle(cycle: number, t: TimelineBody): number {
  let c = Math.min(t.lastCycle, Math.max(t.firstCycle, Math.round(cycle)));
  for (const g of t.gaps) {
    if (c >= g.firstCycle && c < g.firstCycle + g.cycleCount) c = Math.min(t.lastCycle, g.firstCycle + g.cycleCount);
  }
  return c;
}

function cycleAtPointer(clientX: number, t: TimelineBody): number {
  const box = track.getBoundingClientRect();
  const fraction = box.width > 0 ? (clientX - box.left) / box.width : 0;
  const w = windowOf(t);
  return recordedCycle(w.first + fraction * (w.last - w.first), t);
}

function showPreview(cycle: number | undefined) {
  if (cycle === undefined || !timeline) {
    preview.hidden = true;
    targetLabel.hidden = true;
    return;
  }
  preview.hidden = false;
  targetLabel.hidden = false;
  targetLabel.textContent = ` → cycle ${cycle}`;
  preview.style.left = `${percent(cycle, timeline)}%`;
  track.setAttribute('aria-valuenow', String(cycle));
  track.setAttribute('aria-valuetext', `cycle ${cycle}`);
}

function seek(cycle: number) {
  post({ type: 'seek', cycle });
}

/** The lanes' width in pixels: the strip's, as they share its axis. */
const laneWidth = () => Math.round(track.getBoundingClientRect().width);

function renderLanes() {
  const t = timeline;
  if (!t) return;
  lanes.render(
    {
      window: windowOf(t),
      position: { cycle: t.cycle, step: t.step },
      seek: (position) => post({ type: 'seek', cycle: position.cycle, step: position.step }),
      remove: (variable) => post({ type: 'removeSignal', variable }),
    },
    laneWidth(),
  );
}

/**
 * Asks for the lanes' data over the cycles in view, about one change per pixel, when that range
 * or the width changed (a zoom, a scroll, a resize, a history that grew). A burst of wheel events
 * asks once, after it.
 */
function requestSignals(delayMs = 0) {
  if (requestTimer !== undefined) clearTimeout(requestTimer);
  requestTimer = setTimeout(() => {
    requestTimer = undefined;
    const t = timeline;
    const width = laneWidth();
    if (!t || width <= 0) return;
    const w = windowOf(t);
    const message: ViewMessage = { type: 'requestSignals', firstCycle: w.first, lastCycle: w.last, maxPoints: Math.max(30, width) };
    const text = JSON.stringify(message);
    if (text === lastRequest) return;
    lastRequest = text;
    post(message);
  }, delayMs);
}

function setZoom(next: CycleWindow | undefined) {
  zoom = next;
  renderTimeline();
  requestSignals(120);
}

function zoomBy(factor: number, anchor?: number) {
  const t = timeline;
  if (!t) return;
  const w = windowOf(t);
  const around = anchor ?? (inView(t.cycle, t) ? t.cycle : (w.first + w.last) / 2);
  setZoom(zoomWindow(w, wholeOf(t), factor, around));
}

function renderSession() {
  const name = session.name ? ` ${session.name}` : '';
  if (session.state === 'none') status.textContent = 'No scanback session. Start debugging an .st project or open a trace.';
  else if (session.state === 'active') status.textContent = `Session${name}${session.live ? ' (live)' : ''}`;
  else status.textContent = `Session${name} ended.`;
  status.dataset.state = session.state;
  if (session.state === 'none') {
    timeline = undefined;
    renderTimeline();
  }
  if (session.state === 'active') {
    // A session (re)started: its history is new, so the lanes are asked for again with the next
    // timeline; another session's zoom does not fit this one.
    lastRequest = '';
    if (session.name !== previousSession) zoom = undefined;
    // Another history: the markers of the last one do not belong to it (their sources resend).
    if (session.name !== previousSession) markerSets.clear();
  }
  previousSession = session.state === 'active' ? session.name : previousSession;
}

function faultOf(t: TimelineBody): { cycle: number; text: string } | undefined {
  if (t.fault === undefined) return undefined;
  if (typeof t.fault === 'string') return { cycle: t.lastCycle, text: t.fault };
  const where = t.fault.file ? ` (${t.fault.file}${t.fault.line ? `:${t.fault.line}` : ''})` : '';
  return { cycle: t.fault.cycle, text: `${t.fault.message}${where} at ${formatPosition(t.fault.cycle, t.fault.step)}` };
}

function statRow(label: string, value: string) {
  const row = document.createElement('tr');
  const th = document.createElement('th');
  th.scope = 'row';
  th.textContent = label;
  const td = document.createElement('td');
  td.textContent = value;
  row.append(th, td);
  statsRows.append(row);
}

function renderTimeline() {
  const t = timeline;
  range.hidden = !t;
  stats.hidden = !t;
  if (!t) return;
  const w = windowOf(t);
  if (zoom) {
    // Only the ends of the history have known times; a zoomed window shows its cycles.
    firstLabel.textContent = `${w.first}`;
    lastLabel.textContent = `${w.last}`;
    zoomLabel.textContent = `cycles ${w.first}..${w.last} of ${t.firstCycle}..${t.lastCycle}`;
  } else {
    firstLabel.textContent = `${t.firstCycle} · ${formatVirtualTime(t.firstTimeNs)}`;
    lastLabel.textContent = `${t.lastCycle} · ${formatVirtualTime(t.lastTimeNs)}${t.live ? ' (live)' : ''}`;
  }
  zoomLabel.hidden = !zoom;
  positionLabel.textContent = `${formatPosition(t.cycle, t.step)} · ${formatVirtualTime(t.timeNs)}`;
  track.setAttribute('aria-valuemin', String(t.firstCycle));
  track.setAttribute('aria-valuemax', String(t.lastCycle));
  track.setAttribute('aria-valuenow', String(t.cycle));
  track.setAttribute('aria-valuetext', `cycle ${t.cycle}, step ${t.step}, ${formatVirtualTime(t.timeNs)}`);
  cursor.style.left = `${percent(t.cycle, t)}%`;
  cursor.hidden = !inView(t.cycle, t);
  cursor.title = `current position ${formatPosition(t.cycle, t.step)}`;

  gaps.replaceChildren(
    ...t.gaps.filter((g) => g.firstCycle <= w.last && g.firstCycle + g.cycleCount > w.first).map((g) => {
      const gap = document.createElement('div');
      gap.className = 'gap';
      const left = percent(g.firstCycle, t);
      gap.style.left = `${left}%`;
      gap.style.width = `${percent(g.firstCycle + g.cycleCount, t) - left}%`;
      gap.title = `cycles ${g.firstCycle}..${g.firstCycle + g.cycleCount - 1} were dropped by the recorder`;
      return gap;
    }),
  );

  const fault = faultOf(t);
  faultMarker.hidden = !fault || !inView(fault.cycle, t);
  faultText.hidden = !fault;
  if (fault) {
    faultMarker.style.left = `${percent(fault.cycle, t)}%`;
    faultMarker.title = `fault: ${fault.text}`;
    faultText.textContent = `Ends in a fault: ${fault.text}`;
  }

  // A recording that fails says so where the history's end is shown: the cycles from there on are
  // not kept, though the task runs on.
  const failing = t.recording?.state === 'failing';
  recordingText.hidden = !failing;
  if (failing)
    recordingText.textContent = `Recording to ${t.recording?.path ?? '?'} failed from cycle ${t.recording?.sinceCycle ?? '?'}: ${t.recording?.error ?? 'unknown error'}. The task runs on; its cycles are not recorded until writing works again.`;

  liveEdge.hidden = !t.live || !inView(t.lastCycle, t);
  if (t.live) liveEdge.style.left = '100%';

  renderWhere(t);
  renderTicks(t);
  renderMarkers();

  statsRows.replaceChildren();
  statRow('cycles', `${t.lastCycle - t.firstCycle + 1} recorded (${t.firstCycle}..${t.lastCycle})`);
  statRow('virtual time', `${formatVirtualTime(t.firstTimeNs)} .. ${formatVirtualTime(t.lastTimeNs)}`);
  if (t.gaps.length > 0)
    statRow('gaps', `${t.gaps.length} (${t.gaps.reduce((n, g) => n + g.cycleCount, 0)} cycles dropped)`);
  statRow('tasks', t.tasks.map((task) => `${task.name} (${formatDuration(task.intervalNs)})`).join(', '));
  // No statistics before there are any: a first stop has measured no cycle yet.
  if (t.cycleTime && t.cycleTime.cycles > 0) {
    const c = t.cycleTime;
    statRow('cycle time', `median ${formatDuration(c.medianNs)} · p99 ${formatDuration(c.p99Ns)} · max ${formatDuration(c.maxNs)}`);
    statRow('measured', `${c.cycles} cycles`);
  }
  if (t.recording) {
    const r = t.recording;
    const lost = r.lostCycles > 0 ? ` · ${r.lostCycles} cycles lost in ${r.failures} failure(s)` : '';
    statRow('recording', `${r.state === 'failing' ? `failing since cycle ${r.sinceCycle ?? '?'}` : 'ok'}${lost}`);
  }
  if (!dragging && pendingCycle === undefined) showPreview(undefined);
  renderLanes();
}

/** History or live: the banner over the strip, with the way back to the live edge. */
function renderWhere(t: TimelineBody) {
  const newest = t.newest ?? { cycle: t.lastCycle, step: t.step };
  const atNewest = newest.cycle === t.cycle && newest.step === t.step;
  const running = t.running ? ' — runtime running' : '';
  // A replayed recording has no live edge to go back to: the strip's own labels say where it is.
  where.hidden = !t.live;
  where.dataset.state = atNewest ? 'live' : 'history';
  whereText.textContent = atNewest
    ? `live, cycle ${t.cycle}${running}`
    : `history, cycle ${t.cycle} of ${t.lastCycle}${running}`;
  byId('go-live').hidden = atNewest;
}

/** The time axis: round cycle numbers of the window with their virtual times. */
function renderTicks(t: TimelineBody) {
  const w = windowOf(t);
  const width = laneWidth();
  const cycles = ticksOf(w, Math.max(2, Math.min(8, Math.floor(width / 90))));
  // Interpolated times are rounded to a tenth of the time between two ticks, in a power of ten.
  const between = cycles.length > 1 ? Math.abs(timeAtCycle(cycles[1], t) - timeAtCycle(cycles[0], t)) : 0;
  const unit = between > 0 ? 10 ** Math.floor(Math.log10(between / 10)) : 1;
  ticks.replaceChildren(
    ...cycles.map((cycle) => {
      const tick = document.createElement('span');
      tick.className = 'tick';
      tick.style.left = `${percent(cycle, t)}%`;
      const time = formatVirtualTime(Math.round(timeAtCycle(cycle, t) / unit) * unit);
      tick.textContent = `${cycle}`;
      tick.append(document.createElement('br'), time);
      tick.title = `cycle ${cycle} · ${time}`;
      return tick;
    }),
  );
}

/** Every source's markers in the window, as buttons: a click goes to the marker's position. */
function renderMarkers() {
  const t = timeline;
  if (!t) return;
  const shown: HTMLElement[] = [];
  for (const markers of markerSets.values()) {
    for (const m of markers) {
      if (!inView(m.cycle, t)) continue;
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'marker';
      b.dataset.kind = m.kind;
      b.dataset.cycle = String(m.cycle);
      b.style.left = `${percent(m.cycle, t)}%`;
      const at = m.step === undefined ? `cycle ${m.cycle}` : `${formatPosition(m.cycle, m.step)}`;
      b.title = `${m.label} (${at})`;
      b.setAttribute('aria-label', b.title);
      b.addEventListener('click', () => post(m.step === undefined ? { type: 'seek', cycle: m.cycle } : { type: 'seek', cycle: m.cycle, step: m.step }));
      shown.push(b);
    }
  }
  markerRow.replaceChildren(...shown);
}

byId('go-live').addEventListener('click', () => post({ type: 'goToLive' }));

window.addEventListener('message', (event: MessageEvent) => {
  const message = event.data as TimelineMessage;
  if (typeof message !== 'object' || message === null) return;
  switch (message.type) {
    case 'session':
      session = { state: message.state, name: message.name, live: message.live };
      if (message.state === 'active') errorText.hidden = true;
      renderSession();
      break;
    case 'timeline':
      timeline = message.timeline;
      errorText.hidden = true;
      renderTimeline();
      requestSignals();
      break;
    case 'signals':
      lanes.set(message.signals, message.compared);
      renderLanes();
      break;
    case 'markers':
      if (typeof message.source !== 'string') break;
      markerSets.set(message.source, validMarkers(message.markers));
      renderMarkers();
      break;
    case 'error':
      errorText.textContent = message.message;
      errorText.hidden = false;
      if (!dragging && pendingCycle === undefined) showPreview(undefined); // a refused seek goes nowhere
      break;
    default:
      break; // a type this version does not know
  }
});

track.addEventListener('pointerdown', (event: PointerEvent) => {
  if (!timeline || event.button !== 0) return;
  dragging = true;
  track.setPointerCapture(event.pointerId);
  track.focus();
  showPreview(cycleAtPointer(event.clientX, timeline));
});
track.addEventListener('pointermove', (event: PointerEvent) => {
  if (!dragging || !timeline) return;
  showPreview(cycleAtPointer(event.clientX, timeline));
});
track.addEventListener('pointerup', (event: PointerEvent) => {
  if (!dragging || !timeline) return;
  dragging = false;
  track.releasePointerCapture(event.pointerId);
  seek(cycleAtPointer(event.clientX, timeline));
});
track.addEventListener('pointercancel', () => {
  dragging = false;
  showPreview(undefined);
});

track.addEventListener('keydown', (event: KeyboardEvent) => {
  const t = timeline;
  if (!t) return;
  const from = pendingCycle ?? t.cycle;
  const tenth = Math.max(1, Math.round((t.lastCycle - t.firstCycle) / 10));
  const moves: Record<string, number> = {
    ArrowLeft: from - 1,
    ArrowDown: from - 1,
    ArrowRight: from + 1,
    ArrowUp: from + 1,
    PageDown: from - tenth,
    PageUp: from + tenth,
    Home: t.firstCycle,
    End: t.lastCycle,
  };
  if (event.key === '+' || event.key === '=' || event.key === '-' || event.key === '0') {
    event.preventDefault();
    if (event.key === '0') setZoom(undefined);
    else zoomBy(event.key === '-' ? 2 : 0.5);
    return;
  }
  if (event.key === 'End') {
    // The live edge (the end of a replayed recording): scanback/goToLive, which knows where it is.
    event.preventDefault();
    if (pendingTimer !== undefined) clearTimeout(pendingTimer);
    pendingTimer = undefined;
    pendingCycle = undefined;
    showPreview(undefined);
    post({ type: 'goToLive' });
    return;
  }
  if (event.key === 'Enter' || event.key === ' ') {
    event.preventDefault();
    if (pendingCycle !== undefined) commitPending(pendingCycle);
    return;
  }
  if (!(event.key in moves)) return;
  event.preventDefault();
  // Going backwards past a gap lands before it, not after it.
  let target = Math.min(t.lastCycle, Math.max(t.firstCycle, moves[event.key]));
  for (const g of t.gaps)
    if (target >= g.firstCycle && target < g.firstCycle + g.cycleCount)
      target = target < from ? Math.max(t.firstCycle, g.firstCycle - 1) : g.firstCycle + g.cycleCount;
  pendingCycle = recordedCycle(target, t);
  showPreview(pendingCycle);
  if (pendingTimer !== undefined) clearTimeout(pendingTimer);
  pendingTimer = setTimeout(() => commitPending(pendingCycle), 400);
});

function commitPending(cycle: number | undefined) {
  if (pendingTimer !== undefined) clearTimeout(pendingTimer);
  pendingTimer = undefined;
  pendingCycle = undefined;
  if (cycle !== undefined) seek(cycle);
}

// Ctrl+wheel (a pinch on a touchpad) zooms around the pointer; Shift+wheel or a sideways swipe
// scrolls. A plain wheel scrolls the view's page as usual.
function onWheel(event: WheelEvent) {
  const t = timeline;
  if (!t) return;
  const w = windowOf(t);
  if (event.ctrlKey) {
    event.preventDefault();
    zoomBy(event.deltaY > 0 ? 1.25 : 0.8, cycleAtPointer(event.clientX, t));
  } else if (zoom && (event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY))) {
    event.preventDefault();
    const delta = event.shiftKey && event.deltaX === 0 ? event.deltaY : event.deltaX;
    const box = track.getBoundingClientRect();
    const cycles = Math.round((delta / Math.max(1, box.width)) * (w.last - w.first)) || Math.sign(delta);
    setZoom(scrollWindow(w, wholeOf(t), cycles));
  }
}
track.addEventListener('wheel', onWheel, { passive: false });
byId('lanes').addEventListener('wheel', onWheel, { passive: false });
byId('zoom-in').addEventListener('click', () => zoomBy(0.5));
byId('zoom-out').addEventListener('click', () => zoomBy(2));
byId('zoom-all').addEventListener('click', () => setZoom(undefined));

// The lanes are drawn in pixels: a new width redraws them and asks for about a point per pixel.
let lastWidth = 0;
new ResizeObserver(() => {
  const width = laneWidth();
  if (width === lastWidth) return;
  lastWidth = width;
  renderLanes();
  requestSignals(120);
}).observe(track);

renderSession();
post({ type: 'ready' });
