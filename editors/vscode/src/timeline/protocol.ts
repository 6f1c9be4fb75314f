// The Scan Timeline's message protocol, in code: docs/timeline-protocol.md is the spec and these
// types follow it field by field. Either side ignores types and fields it does not know, so both
// may grow without breaking the other.

/** `scanback/timeline` response body, relayed unchanged. All times are virtual nanoseconds. */
export interface TimelineBody {
  firstCycle: number;
  lastCycle: number;
  firstTimeNs: number;
  lastTimeNs: number;
  cycle: number;
  step: number;
  timeNs: number;
  tasks: { threadId: number; name: string; intervalNs: number }[];
  gaps: { firstCycle: number; cycleCount: number }[];
  /** The fault the recording ends in. The adapter sends the message as a string today; the
   *  protocol's object form adds its position and source. */
  fault?: string | TimelineFault;
  live: boolean;
  /** The newest recorded position, where Go to Live (scanback/goToLive) goes. */
  newest?: { cycle: number; step: number };
  /** The program runs on beside the session (nonstop, attach): its history grows while the
   *  session shows it. */
  running?: boolean;
  cycleTime?: { cycles: number; medianNs: number; p99Ns: number; maxNs: number };
  /** A live task's recording: whether the trace still receives its cycles (a full disk stops it
   *  while the task goes on). Absent when nothing records. */
  recording?: TimelineRecording;
}

export interface TimelineRecording {
  /** The trace written. */
  path: string;
  state: 'ok' | 'failing';
  /** (failing) why, with the trace's path. */
  error?: string;
  /** (failing) the first cycle not in the trace. */
  sinceCycle?: number;
  /** Cycles lost to failures so far: gaps in the trace. */
  lostCycles: number;
  failures: number;
}

export interface TimelineFault {
  cycle: number;
  step: number;
  message: string;
  file?: string;
  line?: number;
}

/** `scanback/signals` arguments. */
export interface SignalsArguments {
  variables: string[];
  /** Another recording to read the variables from (the compare's other side): its path. */
  trace?: string;
  firstCycle?: number;
  lastCycle?: number;
  maxPoints?: number;
}

export interface SignalValue {
  text: string;
  number?: number;
}

export interface SignalChange {
  cycle: number;
  step: number;
  timeNs: number;
  value: SignalValue;
}

export interface Signal {
  variable: string;
  type?: string;
  kind?: 'bool' | 'integer' | 'real' | 'enum' | 'string';
  initial?: SignalValue;
  changes?: SignalChange[];
  complete?: boolean;
  error?: string;
}

/** `scanback/signals` response body. */
export interface SignalsBody {
  firstCycle: number;
  lastCycle: number;
  signals: Signal[];
}

/** A compare's other recording, whose values each lane draws over the session's own (dashed):
 *  `side` is its letter ("A" or "B"), the session's recording being the other. */
export interface ComparedSignals {
  side: 'A' | 'B';
  /** The other recording's path. */
  trace: string;
  /** The same lanes read from it (scanback/signals with `trace`). */
  signals: SignalsBody;
}

export type SessionState = 'none' | 'active' | 'ended';

/** What a marker on the time axis shows. */
export type MarkerKind = 'breakpoint' | 'write' | 'fault' | 'gap' | 'divergence';

/** A marker at a position of the history: a click goes there (`seek`). */
export interface Marker {
  cycle: number;
  step?: number;
  kind: MarkerKind;
  /** Its tooltip and accessible name: what happened there. */
  label: string;
}

/** The markers of one source (`breakpoints`, `lanes`, `recording`, a comparison's `compare`…):
 *  each `markers` message replaces that source's markers, so sources never clear each other's. */
export interface MarkersMessage {
  type: 'markers';
  source: string;
  markers: Marker[];
}

/** Extension → webview. */
export type TimelineMessage =
  | { type: 'session'; state: SessionState; name?: string; live?: boolean }
  | { type: 'timeline'; timeline: TimelineBody }
  | { type: 'signals'; signals: SignalsBody; compared?: ComparedSignals }
  | MarkersMessage
  | { type: 'error'; message: string };

/** Webview → extension. */
export type ViewMessage =
  | { type: 'ready' }
  | { type: 'seek'; cycle: number; step?: number }
  | { type: 'goToLive' }
  | { type: 'requestSignals'; firstCycle: number; lastCycle: number; maxPoints: number }
  | { type: 'removeSignal'; variable: string };

function isPosition(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Checks a message from the webview. Returns the message, or a reason it cannot be used: the
 * webview is a page that could send anything, and nothing it sends may reach the adapter unchecked.
 * Unknown types are not errors (`undefined` is returned for them and the message is ignored).
 */
export function parseViewMessage(raw: unknown): ViewMessage | { invalid: string } | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { invalid: 'a view message must be an object' };
  const m = raw as Record<string, unknown>;
  switch (m.type) {
    case 'ready':
      return { type: 'ready' };
    case 'goToLive':
      return { type: 'goToLive' };
    case 'seek':
      if (!isPosition(m.cycle)) return { invalid: `seek: cycle must be a whole number >= 0, not ${JSON.stringify(m.cycle)}` };
      if (m.step !== undefined && !isPosition(m.step))
        return { invalid: `seek: step must be a whole number >= 0, not ${JSON.stringify(m.step)}` };
      return m.step === undefined ? { type: 'seek', cycle: m.cycle } : { type: 'seek', cycle: m.cycle, step: m.step };
    case 'requestSignals':
      if (!isPosition(m.firstCycle) || !isPosition(m.lastCycle) || !isPosition(m.maxPoints))
        return { invalid: 'requestSignals: firstCycle, lastCycle and maxPoints must be whole numbers >= 0' };
      return { type: 'requestSignals', firstCycle: m.firstCycle, lastCycle: m.lastCycle, maxPoints: m.maxPoints };
    case 'removeSignal':
      if (typeof m.variable !== 'string') return { invalid: 'removeSignal: variable must be a string' };
      return { type: 'removeSignal', variable: m.variable };
    default:
      return undefined;
  }
}

const markerKinds: readonly MarkerKind[] = ['breakpoint', 'write', 'fault', 'gap', 'divergence'];

/** The markers of a `markers` message that can be drawn (a marker with a bad field is left out),
 *  at most `limit` of them: a sender may send anything, and the strip stays readable. */
export function validMarkers(raw: unknown, limit = 500): Marker[] {
  if (!Array.isArray(raw)) return [];
  const out: Marker[] = [];
  for (const m of raw) {
    if (typeof m !== 'object' || m === null) continue;
    const r = m as Record<string, unknown>;
    if (!isPosition(r.cycle) || (r.step !== undefined && !isPosition(r.step))) continue;
    if (!markerKinds.includes(r.kind as MarkerKind) || typeof r.label !== 'string') continue;
    out.push({ cycle: r.cycle, ...(r.step === undefined ? {} : { step: r.step as number }), kind: r.kind as MarkerKind, label: r.label });
    if (out.length >= limit) break;
  }
  return out;
}
