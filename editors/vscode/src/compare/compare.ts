import * as childProcess from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { MarkersMessage } from '../timeline/protocol';
import { debugType } from '../configuration';

/**
 * Compare runs in VS Code (issue 32, docs/extension.md): "Compare With Recording…" and "What If:
 * Rerun This Recording With the Open Program". Every fact comes from the adapter (scanback/compare,
 * whose body is `scanback trace diff --json`'s object) or from `scanback rerun`; this file only
 * relays and presents. A is always the recording before, B the one after: the session's recording
 * is A when the user picks another to compare with, B when it is the rerun of A.
 */

/** The parts of `scanback trace diff --json` this file shows (docs/compare.md). */
export interface DiffStatement {
  statement: number;
  location: string;
  text: string;
}
export interface DiffValue {
  name: string;
  output: boolean;
  equal: boolean;
  firstCycle?: number;
  lastCycle?: number;
  cycles?: number;
  first?: { a: string; b: string };
}
export interface DiffBody {
  equal: boolean;
  sessionIs?: 'a' | 'b';
  a: { path: string; programHash: string; firstCycle: number; lastCycle: number };
  b: { path: string; programHash: string; firstCycle: number; lastCycle: number };
  compared: { firstCycle: number; lastCycle: number; cycles: number };
  schedule?: { cycle: number; a: { task: string }; b: { task: string } };
  firstDivergence?: {
    cycle: number;
    step: number;
    task: string;
    kind: 'pathsSplit' | 'value' | 'fault';
    a: DiffStatement | null;
    b: DiffStatement | null;
    values?: string[];
    first?: { name: string; a: string; b: string };
    faults?: { a: string | null; b: string | null };
  };
  pathsSplit?: { cycle: number; step: number; cycles: number; a: DiffStatement | null; b: DiffStatement | null };
  values: DiffValue[];
  differing: number;
}

/** A divergence as the list and the Scan Timeline show it; `step` is where scanback/seek goes. */
export interface Divergence {
  label: string;
  description: string;
  detail?: string;
  cycle: number;
  step?: number;
}

const base = (p: string) => path.basename(p);

/** "A day.trace" / "B fix.trace (this session)": which side is which, wherever it could be confused. */
export function sideNames(body: DiffBody): { a: string; b: string } {
  const own = ' (this session)';
  return {
    a: `A ${base(body.a.path)}${body.sessionIs !== 'b' ? own : ''}`,
    b: `B ${base(body.b.path)}${body.sessionIs === 'b' ? own : ''}`,
  };
}

function statementText(s: DiffStatement | null): string {
  return s ? `${s.location}  ${s.text}` : '(the cycle ends)';
}

/** The divergences of a diff, the first (the one to travel to) first. */
export function divergencesOf(body: DiffBody): Divergence[] {
  const out: Divergence[] = [];
  const d = body.firstDivergence;
  if (body.schedule)
    out.push({
      label: `Schedules differ at cycle ${body.schedule.cycle}`,
      description: `A runs ${body.schedule.a.task}, B ${body.schedule.b.task}; compared up to there`,
      cycle: body.schedule.cycle,
    });
  if (d) {
    const where = `cycle ${d.cycle}, step ${d.step} (task ${d.task})`;
    if (d.kind === 'pathsSplit')
      out.push({
        label: `First divergence: the statement paths split at ${where}`,
        description: 'a click travels there',
        detail: `A next: ${statementText(d.a)}\nB next: ${statementText(d.b)}`,
        cycle: d.cycle,
        step: d.step,
      });
    else if (d.kind === 'fault')
      out.push({
        label: `First divergence: a fault at ${where}`,
        description: `A ${d.faults?.a ?? 'does not fault'}; B ${d.faults?.b ?? 'does not fault'}`,
        cycle: d.cycle,
        step: d.step,
      });
    else
      out.push({
        label: `First divergence: ${(d.values ?? []).slice(0, 3).join(', ')} differ at ${where}`,
        description: d.first ? `${d.first.name}: A ${d.first.a}, B ${d.first.b}` : '',
        detail: d.step > 0 ? `after A: ${statementText(d.a)}\nafter B: ${statementText(d.b)}` : 'at the start of the cycle (its scan inputs)',
        cycle: d.cycle,
        step: d.step,
      });
  }
  // Where the statement paths first split is listed whenever it is not the first divergence itself:
  // also after it (a changed constant differs from cycle 0 on, and the paths split only where the
  // fix acts), as the CLI reports it; it is the statement the user wants to travel to.
  const split = body.pathsSplit;
  if (split && !(d?.kind === 'pathsSplit' && d.cycle === split.cycle && d.step === split.step)) {
    const before = !d || split.cycle < d.cycle || (split.cycle === d.cycle && split.step < d.step);
    out.push({
      label: `Statement paths first split at cycle ${split.cycle}, step ${split.step}`,
      description: `in ${split.cycles} cycles${before ? '; before any compared value differs' : ''}`,
      detail: `A next: ${statementText(split.a)}\nB next: ${statementText(split.b)}`,
      cycle: split.cycle,
      step: split.step,
    });
  }
  for (const v of body.values) {
    if (v.equal || v.firstCycle === undefined) continue;
    out.push({
      label: `${v.name} differs from cycle ${v.firstCycle}`,
      description: `in ${v.cycles} cycles (${v.firstCycle}..${v.lastCycle}); first: A ${v.first?.a}, B ${v.first?.b}`,
      cycle: v.firstCycle,
    });
  }
  return out;
}

/** The Scan Timeline's markers for a diff: one per divergence, labelled with the sides. */
export function markersOf(body: DiffBody): MarkersMessage {
  return {
    type: 'markers',
    source: 'compare',
    markers: divergencesOf(body).map((d) =>
      d.step === undefined ? { cycle: d.cycle, kind: 'divergence', label: d.label } : { cycle: d.cycle, step: d.step, kind: 'divergence', label: d.label },
    ),
  };
}

/** One line for a notification: the result, and which side is which. */
export function summaryOf(body: DiffBody): string {
  const names = sideNames(body);
  const sides = `${names.a} against ${names.b}`;
  if (body.equal) return `scanback: ${sides}: EQUAL, the ${body.values.length} compared values in all ${body.compared.cycles} cycles.`;
  if (body.schedule && !body.firstDivergence) return `scanback: ${sides}: the schedules differ at cycle ${body.schedule.cycle}.`;
  return `scanback: ${sides}: DIFFERENT, ${body.differing} of ${body.values.length} compared values, from cycle ${body.firstDivergence?.cycle}.`;
}

/** Where the divergences go: the Scan Timeline's markers (sent as the generic `markers` message). */
export interface MarkerSink {
  postMarkers(message: MarkersMessage): void;
  /** The lanes of `session` draw the other recording's values too (`trace`, the session being
   *  side `sessionIs`). */
  setComparison?(session: vscode.DebugSession, comparison: { trace: string; sessionIs: 'a' | 'b' }): Promise<void>;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** scanback/compare on `session`, then the list (a click travels to the divergence) and the markers. */
export async function showComparison(
  session: vscode.DebugSession,
  trace: string,
  sessionIs: 'a' | 'b',
  sink: MarkerSink | undefined,
): Promise<DiffBody | undefined> {
  let body: DiffBody;
  try {
    body = (await session.customRequest('scanback/compare', { trace, sessionIs })) as DiffBody;
  } catch (error) {
    void vscode.window.showErrorMessage(`scanback: cannot compare with ${trace}: ${errorText(error)}`);
    return undefined;
  }
  sink?.postMarkers(markersOf(body));
  void sink?.setComparison?.(session, { trace, sessionIs });
  const names = sideNames(body);
  const divergences = divergencesOf(body);
  if (divergences.length === 0) {
    void vscode.window.showInformationMessage(summaryOf(body));
    return body;
  }
  const picked = await vscode.window.showQuickPick(
    divergences.map((d) => ({ label: d.label, description: d.description, detail: d.detail, divergence: d })),
    { title: `Divergences: ${names.a} / ${names.b}`, placeHolder: summaryOf(body), matchOnDescription: true },
  );
  if (picked) await travel(session, picked.divergence);
  return body;
}

/** To the divergence, in the session's recording (scanback/seek; the stop refreshes the views). */
export async function travel(session: vscode.DebugSession, d: Divergence): Promise<boolean> {
  try {
    await session.customRequest('scanback/seek', d.step === undefined ? { cycle: d.cycle } : { cycle: d.cycle, step: d.step });
    return true;
  } catch (error) {
    void vscode.window.showErrorMessage(`scanback: cannot go to cycle ${d.cycle}: ${errorText(error)}`);
    return false;
  }
}

/** A replay session: the one kind whose recording is whole, so that it can be compared. */
export function replayedTrace(session: vscode.DebugSession | undefined): string | undefined {
  if (!session || session.type !== debugType) return undefined;
  const c = session.configuration;
  if (c.request !== 'launch' || typeof c.trace !== 'string') return undefined;
  return path.isAbsolute(c.trace) ? c.trace : path.join(typeof c.cwd === 'string' ? c.cwd : '', c.trace);
}

/** Compare With Recording…: the session's recording (A) against a trace picked from disk (B). */
export async function compareWithRecording(session: vscode.DebugSession | undefined, sink?: MarkerSink): Promise<DiffBody | undefined> {
  const own = replayedTrace(session);
  if (!session || !own) {
    void vscode.window.showInformationMessage('scanback: Compare With Recording… compares the recording of a replay session (Open Trace…) with another.');
    return undefined;
  }
  const picked = await vscode.window.showOpenDialog({
    title: `Compare A ${base(own)} (this session) with B…`,
    canSelectMany: false,
    openLabel: 'Compare as B',
    defaultUri: vscode.Uri.file(path.dirname(own)),
    filters: { 'scanback traces': ['trace'], 'All files': ['*'] },
  });
  if (!picked || picked.length === 0) return undefined;
  return showComparison(session, picked[0].fsPath, 'a', sink);
}

/** The rerun's output next to the recording: day.trace → day.rerun-1.trace (never overwritten). */
export function rerunOutputPath(trace: string, exists: (p: string) => boolean): string {
  const dir = path.dirname(trace);
  const stem = path.basename(trace, '.trace');
  for (let n = 1; ; ++n) {
    const candidate = path.join(dir, `${stem}.rerun-${n}.trace`);
    if (!exists(candidate)) return candidate;
  }
}

/** The arguments of `scanback rerun`: the recording, the sources, and where to record. */
export function rerunArguments(trace: string, sources: string[], output: string): string[] {
  return ['rerun', trace, ...sources, '--record', output];
}

/** How the rerun is run (tests replace it): the executable, its arguments, its directory. */
export type RerunRunner = (binary: string, args: string[], cwd: string) => Promise<{ code: number; output: string }>;

export const runRerun: RerunRunner = (binary, args, cwd) =>
  new Promise((resolve) => {
    childProcess.execFile(binary, args, { cwd, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 2) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });

/** What the rerun's exit code means (docs/compare.md): whether its recording can be opened. */
export function rerunOutcome(code: number): { recorded: boolean; what: string } {
  switch (code) {
    case 0: return { recorded: true, what: 'ran to the end of the recording' };
    case 3: return { recorded: true, what: 'the open program faulted' };
    case 4: return { recorded: true, what: 'stopped at the first divergence' };
    case 1: return { recorded: false, what: 'the open program does not compile (see Problems)' };
    default: return { recorded: false, what: 'the recording could not be rerun' };
  }
}

/**
 * What If: Rerun This Recording With the Open Program: `scanback rerun` of the session's recording
 * (A) with the workspace's `.st` files (the user confirms which), recorded next to it; the result
 * (B) opens as a replay session, which is then compared with A.
 */
export async function rerunWithOpenProgram(
  session: vscode.DebugSession | undefined,
  binary: string,
  sink?: MarkerSink,
  runner: RerunRunner = runRerun,
  exists: (p: string) => boolean = (p) => fs.existsSync(p),
): Promise<DiffBody | undefined> {
  const recording = replayedTrace(session);
  if (!session || !recording) {
    void vscode.window.showInformationMessage('scanback: What If: Rerun… reruns the recording of a replay session (Open Trace…) with the open program.');
    return undefined;
  }
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(recording)) ?? vscode.workspace.workspaceFolders?.[0];
  const found = await vscode.workspace.findFiles(
    folder ? new vscode.RelativePattern(folder, '**/*.st') : '**/*.st',
    '**/node_modules/**',
  );
  if (found.length === 0) {
    void vscode.window.showErrorMessage('scanback: What If: Rerun… found no .st files in the workspace to run.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    found.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), picked: true, uri })),
    { title: `Rerun A ${base(recording)} with these sources (B)`, canPickMany: true },
  );
  if (!picked || picked.length === 0) return undefined;
  const output = rerunOutputPath(recording, exists);
  const cwd = folder?.uri.fsPath ?? path.dirname(recording);
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `scanback: rerunning ${base(recording)} with the open program…` },
    () => runner(binary, rerunArguments(recording, picked.map((p) => p.uri.fsPath), output), cwd),
  );
  const outcome = rerunOutcome(result.code);
  if (!outcome.recorded) {
    void vscode.window.showErrorMessage(`scanback: the rerun failed: ${outcome.what}.\n${result.output.trim()}`);
    return undefined;
  }
  const name = `What if: B ${base(output)} (rerun of A ${base(recording)})`;
  // Listening before the start: the session's start event may come before startDebugging resolves.
  let listener: vscode.Disposable | undefined;
  const started = new Promise<vscode.DebugSession>((resolve) => {
    listener = vscode.debug.onDidStartDebugSession((s) => {
      if (s.type === debugType && s.name === name) {
        listener?.dispose();
        resolve(s);
      }
    });
  });
  const ok = await vscode.debug.startDebugging(folder, { type: debugType, request: 'launch', name, trace: output, cwd: path.dirname(output) });
  if (!ok) {
    listener?.dispose();
    void vscode.window.showErrorMessage(`scanback: the rerun's recording ${output} could not be opened.`);
    return undefined;
  }
  const rerunSession = await started;
  void vscode.window.showInformationMessage(`scanback: the rerun ${outcome.what}; recorded to ${base(output)} (B).`);
  return showComparison(rerunSession, recording, 'b', sink);
}
