import * as path from 'path';
import * as vscode from 'vscode';
import type { TimelineBody } from './timeline/protocol';

/** Where a session is in its history, from a `scanback/timeline` body. */
export interface Whereabouts {
  /** The status bar's text. */
  text: string;
  tooltip: string;
  /** `scanback.inHistory`: the position is older than the newest one, or the session is a replay. */
  inHistory: boolean;
  /** `scanback.live`: the session has a live edge to go back to (a live, nonstop or attached one). */
  live: boolean;
}

/** The kind of session, from its configuration. */
export type SessionKind = 'live' | 'nonstop' | 'attach' | 'replay';

export function sessionKind(configuration: vscode.DebugConfiguration): SessionKind {
  if (configuration.request === 'attach') return 'attach';
  if (configuration.trace !== undefined) return 'replay';
  return configuration.nonstop === true ? 'nonstop' : 'live';
}

/** Why a value cannot be set in history: what Variables offers no Set Value for (the adapter marks
 *  the variables read-only there). */
export const readOnlyReason = 'History is read-only: it shows what was recorded. Go to Live to set values.';

/**
 * What the status bar says: "history, cycle N of M — runtime running" while a nonstop or attached
 * session shows its history (the runtime scans on), "live, cycle M" at the newest position, the
 * replayed cycle in a replay. Numbers count the recorded cycles from the first (N of M), as the
 * Scan Timeline's strip does.
 */
export function whereabouts(t: TimelineBody, kind: SessionKind): Whereabouts {
  const atNewest = t.newest !== undefined ? t.newest.cycle === t.cycle && t.newest.step === t.step : t.cycle === t.lastCycle;
  const running = t.running === true;
  const of = `cycle ${t.cycle} of ${t.firstCycle}..${t.lastCycle}`;
  const suffix = running ? ' — runtime running' : '';
  if (kind === 'replay')
    return {
      text: `$(history) replay, ${of}`,
      tooltip: `Replaying a recording: ${of}, step ${t.step}. ${readOnlyReason.split('.')[0]}.`,
      inHistory: true,
      live: false,
    };
  if (atNewest)
    return {
      text: `$(pulse) live, cycle ${t.cycle}${suffix}`,
      tooltip: running
        ? `The newest recorded position (cycle ${t.cycle}, step ${t.step}); the runtime scans on.`
        : `The live position: cycle ${t.cycle}, step ${t.step}.`,
      inHistory: false,
      live: true,
    };
  return {
    text: `$(history) history, cycle ${t.cycle} of ${t.lastCycle}${suffix}`,
    tooltip: `In history at cycle ${t.cycle}, step ${t.step} (recorded: ${t.firstCycle}..${t.lastCycle}). ${readOnlyReason} Click: Go to Live.`,
    inHistory: true,
    live: true,
  };
}

/** The status bar item and the context keys of where the active scanback session is. */
export class WhereYouAre implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('scanback.where', vscode.StatusBarAlignment.Left, 50);
  private current: vscode.DebugSession | undefined;

  constructor() {
    this.item.name = 'scanback: where you are';
    this.setContext(false, false);
  }

  /** A new timeline of `session` (after a stop, or a poll of a session whose runtime scans on). */
  update(session: vscode.DebugSession, t: TimelineBody): void {
    if (vscode.debug.activeDebugSession && vscode.debug.activeDebugSession !== session) return;
    this.current = session;
    const w = whereabouts(t, sessionKind(session.configuration));
    this.item.text = w.text;
    this.item.tooltip = w.tooltip;
    this.item.command = w.inHistory && w.live ? 'scanback.goToLive' : undefined;
    this.item.show();
    this.setContext(w.inHistory, w.live);
  }

  /** The session runs (its position is not known until it stops), or ended. */
  clear(session?: vscode.DebugSession): void {
    if (session && session !== this.current) return;
    this.current = undefined;
    this.item.hide();
    this.setContext(false, false);
  }

  private setContext(inHistory: boolean, live: boolean) {
    void vscode.commands.executeCommand('setContext', 'scanback.inHistory', inHistory);
    void vscode.commands.executeCommand('setContext', 'scanback.live', live);
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** Go to Live: the session's newest position (scanback/goToLive); the stop refreshes the views. */
export async function goToLive(session: vscode.DebugSession | undefined): Promise<boolean> {
  if (!session) {
    void vscode.window.showInformationMessage('scanback: Go to Live needs a scanback debug session.');
    return false;
  }
  try {
    await session.customRequest('scanback/goToLive');
    return true;
  } catch (error) {
    void vscode.window.showErrorMessage(`scanback: cannot go to live: ${error instanceof Error ? error.message : String(error)}`);
    return false;
  }
}

/** The writer a data breakpoint stop's description names: "gMotor.run: FALSE → TRUE (programs.st:119)". */
export function writerOfDescription(description: string): { variable: string; change: string; file: string; line: number } | undefined {
  const match = /^(.+?): (.+) \(([^():]+):(\d+)\)$/.exec(description);
  if (!match) return undefined;
  return { variable: match[1], change: match[2], file: match[3], line: Number(match[4]) };
}

/**
 * Marks the statement that wrote the value a data breakpoint stopped on (the stop itself is at the
 * next statement: the new value is seen there), until the session moves again.
 */
export class WriterDecoration implements vscode.Disposable {
  private readonly type = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
    overviewRulerColor: new vscode.ThemeColor('debugIcon.breakpointForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private marked: { uri: vscode.Uri; line: number; text: string } | undefined;
  private readonly listener = vscode.window.onDidChangeVisibleTextEditors(() => this.apply());

  /** A stop: marks the writer when it is a data breakpoint's stop, else clears the mark. */
  async stopped(body: { reason?: string; description?: string }, sourceFolder: string | undefined): Promise<void> {
    this.clear();
    if (body.reason !== 'data breakpoint' || !body.description) return;
    const writer = writerOfDescription(body.description);
    if (!writer) return;
    const uri = await findFile(writer.file, sourceFolder);
    if (!uri) return;
    this.marked = { uri, line: writer.line - 1, text: `wrote ${writer.variable}: ${writer.change}` };
    this.apply();
  }

  clear(): void {
    this.marked = undefined;
    this.apply();
  }

  private apply() {
    for (const editor of vscode.window.visibleTextEditors) {
      const m = this.marked;
      if (!m || editor.document.uri.toString() !== m.uri.toString()) {
        editor.setDecorations(this.type, []);
        continue;
      }
      editor.setDecorations(this.type, [
        {
          range: new vscode.Range(m.line, 0, m.line, 0),
          hoverMessage: `scanback: this statement ${m.text}`,
          renderOptions: { after: { contentText: `  ◀ ${m.text}`, color: new vscode.ThemeColor('editorCodeLens.foreground') } },
        },
      ]);
    }
  }

  dispose(): void {
    this.listener.dispose();
    this.type.dispose();
  }
}

/** The file named `name` (a base name): open or visible first, then in the session's folder, then
 *  anywhere in the workspace. */
async function findFile(name: string, folder: string | undefined): Promise<vscode.Uri | undefined> {
  const open = vscode.workspace.textDocuments.find((d) => path.basename(d.uri.fsPath) === name);
  if (open) return open.uri;
  if (folder) {
    const candidate = vscode.Uri.file(path.join(folder, name));
    try {
      await vscode.workspace.fs.stat(candidate);
      return candidate;
    } catch {
      // not there
    }
  }
  const found = await vscode.workspace.findFiles(`**/${name}`, '**/node_modules/**', 1);
  return found[0];
}
