import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { debugType } from '../configuration';
import { timelineHtml } from './html';
import {
  parseViewMessage,
  validMarkers,
  type ComparedSignals,
  type Marker,
  type MarkersMessage,
  type SessionState,
  type Signal,
  type SignalsArguments,
  type SignalsBody,
  type TimelineBody,
  type TimelineMessage,
} from './protocol';

/** How often a live session's timeline is asked for while its range can grow. */
export const livePollMs = 1000;

/** Points per lane asked for before the view has said how wide it is. */
export const defaultMaxPoints = 600;

/** The range the view shows, as its last `requestSignals` gave it. */
type SignalsRange = Required<Pick<SignalsArguments, 'firstCycle' | 'lastCycle' | 'maxPoints'>>;

/**
 * The Scan Timeline view's extension side: it relays. It asks the adapter for `scanback/timeline`
 * after every stop (and every second while a live session's history grows), passes the body on
 * unchanged, and turns the view's `seek` into `scanback/seek`; for the waveform lanes it keeps the
 * variables shown and asks `scanback/signals` over the range the view shows
 * (docs/timeline-protocol.md).
 */
export class TimelineViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewType = 'scanback.timeline';

  private view: vscode.WebviewView | undefined;
  private session: vscode.DebugSession | undefined;
  private sessionState: SessionState = 'none';
  private timeline: TimelineBody | undefined;
  private lastPosted = '';
  /** Whether the session is stopped: the adapter answers scanback/timeline only then (and reports
   *  every failed request to the user), so nothing is asked while the program runs. */
  private paused = false;
  /** False for a live session without history (record: false): it has no timeline to ask for. */
  private hasHistory = true;
  private poll: ReturnType<typeof setInterval> | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** The variables shown as lanes, in the order they were added. They stay for the window's
   *  sessions until removed: a restarted session shows them again. */
  private lanes: string[] = [];
  /** The last `signals` body, resent on `ready` and trimmed when a lane is removed. */
  private signals: SignalsBody | undefined;
  private range: SignalsRange | undefined;
  /** The scanback/signals request under way: at most one at a time; asks that come meanwhile are
   *  folded into one more request, for the newest lanes and range, when it is answered. */
  private signalsInFlight: Promise<void> | undefined;
  private signalsAgain = false;
  /** The compare of this session (Compare With Recording…, What If: Rerun…): the other
   *  recording, whose values each lane draws over the session's own. */
  private comparison: { trace: string; sessionIs: 'a' | 'b' } | undefined;
  /** The other recording's answer for the lanes, posted with `signals`. */
  private compared: ComparedSignals | undefined;

  /** The markers of each source, resent on `ready`. */
  private readonly markers = new Map<string, Marker[]>();
  /** Breakpoint hits this session stopped at, as markers (source `breakpoints`). */
  private hits: Marker[] = [];
  /** The reason of the stop whose timeline is asked for next. */
  private stopReason: string | undefined;
  private readonly timelineListeners: ((session: vscode.DebugSession, timeline: TimelineBody) => void)[] = [];

  /** `store`: where the lanes are kept across reloads of the window (workspaceState). */
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly store?: vscode.Memento,
  ) {
    const kept = store?.get<unknown>(lanesKey);
    if (Array.isArray(kept)) this.lanes = kept.filter((v): v is string => typeof v === 'string' && v.trim() !== '');
  }

  /** Called with every timeline the adapter sends (the status bar's "where you are"). */
  onTimeline(listener: (session: vscode.DebugSession, timeline: TimelineBody) => void): void {
    this.timelineListeners.push(listener);
  }

  /**
   * Replaces the markers of `source` on the time axis (docs/timeline-protocol.md, `markers`):
   * any part of the extension may send its own (a comparison its divergences).
   */
  setMarkers(source: string, markers: Marker[]): void {
    const valid = validMarkers(markers);
    // (Unchanged markers are not posted again: a live poll would otherwise redraw them every second.)
    if (JSON.stringify(valid) === JSON.stringify(this.markers.get(source) ?? [])) return;
    this.markers.set(source, valid);
    this.post({ type: 'markers', source, markers: valid });
  }

  /**
   * From now on each lane of `session` asks the compare's other recording too (scanback/signals
   * with `trace`) and the view draws its values over the session's own. It lasts while the session
   * does (another session drops it, as it drops the compare's markers).
   */
  setComparison(session: vscode.DebugSession, comparison: { trace: string; sessionIs: 'a' | 'b' }): Promise<void> {
    if (session !== this.session) this.sessionStarted(session);
    this.comparison = comparison;
    this.compared = undefined;
    return this.requestSignals();
  }

  private saveLanes() {
    void this.store?.update(lanesKey, [...this.lanes]);
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = timelineHtml({
      cspSource: view.webview.cspSource,
      nonce: crypto.randomBytes(16).toString('base64'),
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'timeline-view.js')).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'timeline.css')).toString(),
    });
    this.disposables.push(
      view.webview.onDidReceiveMessage((message) => void this.receive(message)),
      view.onDidDispose(() => {
        this.view = undefined;
      }),
    );
  }

  /** A message from the webview. Exposed for tests; never trusts its shape. */
  async receive(raw: unknown): Promise<void> {
    const message = parseViewMessage(raw);
    if (message === undefined) return; // a type this version does not know
    if ('invalid' in message) {
      this.post({ type: 'error', message: message.invalid });
      return;
    }
    switch (message.type) {
      case 'ready':
        this.lastPosted = '';
        this.post(this.sessionMessage());
        if (this.timeline) this.postTimeline(this.timeline);
        if (this.lanes.length > 0) this.postSignals();
        for (const [source, markers] of this.markers) if (markers.length > 0) this.post({ type: 'markers', source, markers });
        break;
      case 'goToLive': {
        const session = this.session;
        if (!session || this.sessionState !== 'active') {
          this.post({ type: 'error', message: 'There is no active scanback session to move in.' });
          return;
        }
        try {
          await session.customRequest('scanback/goToLive');
        } catch (error) {
          this.post({ type: 'error', message: `Cannot go to live: ${errorText(error)}` });
        }
        break;
      }
      case 'seek': {
        const session = this.session;
        if (!session || this.sessionState !== 'active') {
          this.post({ type: 'error', message: 'There is no active scanback session to move in.' });
          return;
        }
        const args = message.step === undefined ? { cycle: message.cycle } : { cycle: message.cycle, step: message.step };
        try {
          await session.customRequest('scanback/seek', args);
        } catch (error) {
          this.post({ type: 'error', message: `Cannot go to cycle ${message.cycle}: ${errorText(error)}` });
        }
        break;
      }
      case 'requestSignals':
        this.range = { firstCycle: message.firstCycle, lastCycle: message.lastCycle, maxPoints: message.maxPoints };
        if (this.lanes.length > 0) await this.requestSignals();
        break;
      case 'removeSignal':
        this.removeSignal(message.variable);
        break;
    }
  }

  /** The variables shown as lanes. */
  get signalVariables(): readonly string[] {
    return this.lanes;
  }

  /**
   * Adds a lane. `candidates` are the paths the variable may have, most specific first (a frame's
   * variable qualified with the frame's instance, then as written): the first the adapter knows is
   * taken; when none is known, the first is added and its lane shows why (when the adapter cannot
   * answer at all, the last, as written). Returns the path added.
   */
  async addSignal(session: vscode.DebugSession, candidates: string[]): Promise<string | undefined> {
    const unique = [...new Set(candidates.map((c) => c.trim()).filter((c) => c.length > 0))];
    if (unique.length === 0) return undefined;
    if (session !== this.session) this.sessionStarted(session);
    const variable = unique.length === 1 ? unique[0] : await this.resolve(session, unique);
    if (!this.lanes.includes(variable)) this.lanes.push(variable);
    this.saveLanes();
    await this.requestSignals();
    return variable;
  }

  removeSignal(variable: string): void {
    if (!this.lanes.includes(variable)) return;
    this.lanes = this.lanes.filter((v) => v !== variable);
    this.saveLanes();
    // Nothing to ask: the other lanes' data is already here.
    this.postSignals();
    this.postLaneMarkers();
  }

  /** The first candidate the adapter resolves, asked over one cycle so the answer is cheap. */
  private async resolve(session: vscode.DebugSession, candidates: string[]): Promise<string> {
    const cycle = this.timeline?.cycle;
    const args: SignalsArguments = { variables: candidates, maxPoints: 3 };
    if (cycle !== undefined) Object.assign(args, { firstCycle: cycle, lastCycle: cycle });
    else Object.assign(args, { firstCycle: 0, lastCycle: 0 });
    try {
      const body = (await session.customRequest('scanback/signals', args)) as SignalsBody;
      const found = body.signals.find((s) => s.error === undefined && candidates.includes(s.variable));
      // None is known: the most specific one's error says best why ("LineControl has no member").
      return found?.variable ?? candidates[0];
    } catch {
      // The adapter could not answer at all: the path as written, and its lane says what is wrong.
      return candidates[candidates.length - 1];
    }
  }

  /**
   * Asks the adapter for the lanes over the view's range and posts the answer. One request at a
   * time: a call while one is under way makes one more follow it (with the lanes and range of
   * then), and resolves when that one is posted.
   */
  requestSignals(): Promise<void> {
    if (this.signalsInFlight) {
      this.signalsAgain = true;
      return this.signalsInFlight;
    }
    const run = async () => {
      try {
        do {
          this.signalsAgain = false;
          await this.askSignals();
        } while (this.signalsAgain);
      } finally {
        this.signalsInFlight = undefined;
      }
    };
    this.signalsInFlight = run();
    return this.signalsInFlight;
  }

  private async askSignals(): Promise<void> {
    const session = this.session;
    if (!session || this.sessionState !== 'active' || this.lanes.length === 0) return;
    const variables = [...this.lanes];
    const args: SignalsArguments = { variables, ...(this.range ?? { maxPoints: defaultMaxPoints }) };
    let body: SignalsBody;
    try {
      body = (await session.customRequest('scanback/signals', args)) as SignalsBody;
    } catch (error) {
      // The whole request failed (no history, a range outside it, a session that ended): every
      // lane says so, and the view stays usable.
      const message = errorText(error);
      body = {
        firstCycle: args.firstCycle ?? 0,
        lastCycle: args.lastCycle ?? 0,
        signals: variables.map((variable) => ({ variable, error: message })),
      };
    }
    const comparison = this.comparison;
    let compared: ComparedSignals | undefined;
    if (comparison) {
      let other: SignalsBody;
      try {
        other = (await session.customRequest('scanback/signals', { ...args, trace: comparison.trace })) as SignalsBody;
      } catch (error) {
        // The other recording cannot be read: each lane says so, and draws the session's own values.
        const message = `${comparison.trace}: ${errorText(error)}`;
        other = { firstCycle: body.firstCycle, lastCycle: body.lastCycle, signals: variables.map((variable) => ({ variable, error: message })) };
      }
      compared = { side: comparison.sessionIs === 'a' ? 'B' : 'A', trace: comparison.trace, signals: other };
    }
    if (session !== this.session || this.signalsAgain || comparison !== this.comparison) return; // a newer answer is coming
    this.signals = body;
    this.compared = compared;
    this.postSignals();
    this.postLaneMarkers();
  }

  /** The writes of the lanes shown, as markers (source `lanes`). */
  private postLaneMarkers() {
    const signals = (this.signals?.signals ?? []).filter((s) => this.lanes.includes(s.variable));
    this.setMarkers('lanes', writeMarkers({ firstCycle: 0, lastCycle: 0, signals }));
  }

  /** Posts the lanes: the last answer's signals for the lanes still shown, in their order, and a
   *  placeholder for those not asked for yet. */
  private postSignals() {
    const known = new Map((this.signals?.signals ?? []).map((s) => [s.variable, s]));
    const signals: Signal[] = this.lanes.map((variable) => known.get(variable) ?? { variable });
    const message: TimelineMessage = {
      type: 'signals',
      signals: { firstCycle: this.signals?.firstCycle ?? 0, lastCycle: this.signals?.lastCycle ?? 0, signals },
    };
    if (this.compared) {
      const other = new Map(this.compared.signals.signals.map((s) => [s.variable, s]));
      message.compared = {
        ...this.compared,
        signals: { ...this.compared.signals, signals: this.lanes.map((variable) => other.get(variable) ?? { variable }) },
      };
    }
    this.post(message);
  }

  sessionStarted(session: vscode.DebugSession): void {
    if (session.type !== debugType) return;
    this.stopPolling();
    this.session = session;
    this.sessionState = 'active';
    this.paused = false;
    this.hasHistory = session.configuration.record !== false;
    this.timeline = undefined;
    // Another history: the lanes stay, their data and range are asked for again.
    this.signals = undefined;
    this.range = undefined;
    this.comparison = undefined;
    this.compared = undefined;
    this.hits = [];
    this.markers.clear();
    this.post(this.sessionMessage());
    if (this.lanes.length > 0) this.postSignals();
  }

  /** The adapter turned supportsStepBack off (a `capabilities` event): the session keeps no history. */
  capabilitiesChanged(session: vscode.DebugSession, capabilities: { supportsStepBack?: boolean }): void {
    if (session !== this.session || capabilities.supportsStepBack !== false) return;
    this.hasHistory = false;
    this.stopPolling();
  }

  sessionEnded(session: vscode.DebugSession): void {
    if (session !== this.session) return;
    this.stopPolling();
    this.sessionState = 'ended';
    this.post(this.sessionMessage());
  }

  /** Every stop moves the position (and in a live session the end): ask again. */
  async stopped(session: vscode.DebugSession, reason?: string): Promise<void> {
    if (session !== this.session) this.sessionStarted(session);
    this.paused = true;
    this.stopReason = reason;
    await this.refresh(session);
  }

  /** The program runs again (a resuming request was sent, or a `continued` event came). */
  resumed(session: vscode.DebugSession): void {
    if (session === this.session) this.paused = false;
  }

  /**
   * Asks the adapter for the timeline and posts it. `quiet` (the live poll) keeps failures out of
   * the view: the last picture stays valid.
   */
  async refresh(session = this.session, quiet = false): Promise<void> {
    if (!session || session !== this.session || this.sessionState !== 'active' || !this.paused) return;
    if (!this.hasHistory) {
      if (!quiet) this.post({ type: 'error', message: 'This session keeps no history (record: false): there is no timeline.' });
      return;
    }
    try {
      const body = (await session.customRequest('scanback/timeline')) as TimelineBody;
      if (session !== this.session || this.sessionState !== 'active') return;
      this.timeline = body;
      this.postTimeline(body);
      for (const listener of this.timelineListeners) listener(session, body);
      if (this.stopReason === 'breakpoint' && !quiet) {
        // A hit this session stopped at: a marker, kept while the session lasts.
        const at = { cycle: body.cycle, step: body.step };
        if (!this.hits.some((m) => m.cycle === at.cycle && m.step === at.step))
          this.hits = [...this.hits, { ...at, kind: 'breakpoint' as const, label: 'breakpoint hit' }].slice(-200);
        this.setMarkers('breakpoints', this.hits);
      }
      this.stopReason = undefined;
      this.setMarkers('recording', recordingMarkers(body));
      // Only the end of a nonstop or attached session grows while the session is stopped (its task
      // scans on); a live program's end moves when it runs, and the next stop brings it. Asking a
      // program that has just been continued fails, and the adapter shows every failure to the user.
      if (body.live && neverHalts(session.configuration)) this.startPolling();
      else this.stopPolling();
    } catch (error) {
      if (!quiet && session === this.session && this.sessionState === 'active')
        this.post({ type: 'error', message: `No timeline: ${errorText(error)}` });
    }
  }

  private postTimeline(timeline: TimelineBody) {
    const text = JSON.stringify(timeline);
    if (text === this.lastPosted) return; // a poll that found nothing new
    this.lastPosted = text;
    this.post({ type: 'timeline', timeline });
  }

  private startPolling() {
    if (this.poll !== undefined) return;
    this.poll = setInterval(() => void this.refresh(this.session, true), livePollMs);
  }

  private stopPolling() {
    if (this.poll !== undefined) clearInterval(this.poll);
    this.poll = undefined;
  }

  private sessionMessage(): TimelineMessage {
    const c = this.session?.configuration;
    const live = c ? c.request === 'attach' || (c.request === 'launch' && c.trace === undefined) : undefined;
    return { type: 'session', state: this.sessionState, name: this.session?.name, live };
  }

  /** Markers from another part of the extension (compare runs: divergences): the generic `markers`
   *  message, kept with the others so that a reload of the view redraws them. */
  postMarkers(message: MarkersMessage): void {
    this.setMarkers(message.source, message.markers);
  }

  private post(message: TimelineMessage) {
    void this.view?.webview.postMessage(message);
  }

  dispose(): void {
    this.stopPolling();
    for (const d of this.disposables) d.dispose();
  }
}

/** The workspaceState key of the lanes shown. */
export const lanesKey = 'scanback.timeline.lanes';

/** The markers a timeline itself gives: the fault the recording ends in, and its gaps. */
export function recordingMarkers(t: TimelineBody): Marker[] {
  const out: Marker[] = [];
  for (const g of t.gaps)
    out.push({ cycle: g.firstCycle, kind: 'gap', label: `cycles ${g.firstCycle}..${g.firstCycle + g.cycleCount - 1} dropped by the recorder` });
  if (typeof t.fault === 'object' && t.fault !== null)
    out.push({ cycle: t.fault.cycle, step: t.fault.step, kind: 'fault', label: `fault: ${t.fault.message}` });
  else if (typeof t.fault === 'string') out.push({ cycle: t.lastCycle, kind: 'fault', label: `fault: ${t.fault}` });
  return out;
}

/** The writes of the lanes' variables, as markers at their writing statements (the boundary
 *  before the change, as a click on a lane's edge goes): at most `perLane` of each lane. */
export function writeMarkers(body: SignalsBody, perLane = 100): Marker[] {
  const out: Marker[] = [];
  for (const signal of body.signals) {
    for (const change of (signal.changes ?? []).slice(0, perLane)) {
      out.push({
        cycle: change.cycle,
        step: change.step > 0 ? change.step - 1 : 0,
        kind: 'write',
        label: `${signal.variable} := ${change.value.text}`,
      });
    }
  }
  return out;
}

/** A session whose task scans on while the session is stopped: nonstop, or attached to a runtime. */
function neverHalts(configuration: vscode.DebugConfiguration): boolean {
  return configuration.request === 'attach' || configuration.nonstop === true;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
