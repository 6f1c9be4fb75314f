import * as path from 'path';
import * as vscode from 'vscode';
import { debugType } from './configuration';

/** The scanback session the commands act on: the active one, when it is a scanback session. */
export function activeScanbackSession(): vscode.DebugSession | undefined {
  const session = vscode.debug.activeDebugSession;
  return session?.type === debugType ? session : undefined;
}

/** A live launch (not a replay of a trace, not nonstop): the one kind of session stReload can change. */
export function isReloadable(session: vscode.DebugSession | undefined): boolean {
  if (!session || session.type !== debugType) return false;
  const c = session.configuration;
  return c.request === 'launch' && c.trace === undefined && c.nonstop !== true;
}

/**
 * The arguments of stReload: the launch's `program`, exactly as the session was started with it,
 * never the file that has the focus (the debug-adapter rules: a reload changes the running program
 * to the project's current sources, whatever the user happens to be looking at).
 */
export function reloadArguments(session: vscode.DebugSession): { program: unknown } {
  return { program: session.configuration.program };
}

function describeReload(body: { kept?: number; reset?: string[]; removed?: string[] } | undefined): string {
  if (!body) return 'scanback: the program was reloaded.';
  const parts = [`kept ${body.kept ?? 0} values`];
  if (body.reset?.length) parts.push(`reset ${body.reset.join(', ')}`);
  if (body.removed?.length) parts.push(`removed ${body.removed.join(', ')}`);
  return `scanback: reloaded (${parts.join('; ')}).`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export async function reloadRuntime(session = activeScanbackSession()): Promise<boolean> {
  if (!session) {
    void vscode.window.showInformationMessage('scanback: Reload Runtime needs a running scanback debug session.');
    return false;
  }
  if (!isReloadable(session)) {
    void vscode.window.showInformationMessage(
      'scanback: Reload Runtime changes a live program; this session replays a trace or runs nonstop, so its program cannot change.',
    );
    return false;
  }
  try {
    const body = await session.customRequest('stReload', reloadArguments(session));
    void vscode.window.showInformationMessage(describeReload(body));
    return true;
  } catch (error) {
    void vscode.window.showErrorMessage(`scanback: reload failed: ${errorText(error)}`);
    return false;
  }
}

/** Reload on save, only when scanback.reloadOnSave is on (off by default), and only on a save: never
 *  on a focus or editor change. */
export function shouldReloadOnSave(document: vscode.TextDocument, session: vscode.DebugSession | undefined): boolean {
  if (!vscode.workspace.getConfiguration('scanback').get<boolean>('reloadOnSave', false)) return false;
  if (document.languageId !== 'st' && path.extname(document.uri.fsPath).toLowerCase() !== '.st') return false;
  return isReloadable(session);
}

export interface SeekArguments {
  cycle: number;
  step?: number;
}

/** Parses "CYCLE" or "CYCLE:STEP" (the position syntax of `scanback replay --to`). */
export function parsePosition(text: string): SeekArguments | string {
  const match = /^\s*(\d+)\s*(?::\s*(\d+)\s*)?$/.exec(text);
  if (!match) return 'Enter a cycle, or CYCLE:STEP (for example 400 or 400:50).';
  const cycle = Number(match[1]);
  if (!Number.isSafeInteger(cycle)) return `The cycle ${match[1]} is too large.`;
  if (match[2] === undefined) return { cycle };
  const step = Number(match[2]);
  if (!Number.isSafeInteger(step)) return `The step ${match[2]} is too large.`;
  return { cycle, step };
}

function isSeekArguments(value: unknown): value is SeekArguments {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const whole = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  return whole(v.cycle) && (v.step === undefined || whole(v.step));
}

/** Go to Cycle…: from the palette it asks for a position; other callers (the timeline view, tests)
 *  pass `{cycle, step?}`. Sends scanback/seek; the stop that follows refreshes the views. */
export async function goToCycle(position?: unknown, session = activeScanbackSession()): Promise<SeekArguments | undefined> {
  if (!session) {
    void vscode.window.showInformationMessage('scanback: Go to Cycle needs a scanback debug session.');
    return undefined;
  }
  let args: SeekArguments;
  if (position !== undefined) {
    if (!isSeekArguments(position)) {
      void vscode.window.showErrorMessage(`scanback: Go to Cycle takes {cycle, step?}, not ${JSON.stringify(position)}.`);
      return undefined;
    }
    args = position.step === undefined ? { cycle: position.cycle } : { cycle: position.cycle, step: position.step };
  } else {
    const text = await vscode.window.showInputBox({
      title: 'Go to Cycle',
      prompt: 'A recorded position: CYCLE, or CYCLE:STEP for a statement boundary within the cycle',
      placeHolder: '400 or 400:50',
      validateInput: (value) => {
        const parsed = parsePosition(value);
        return typeof parsed === 'string' ? parsed : undefined;
      },
    });
    if (text === undefined) return undefined;
    const parsed = parsePosition(text);
    if (typeof parsed === 'string') return undefined;
    args = parsed;
  }
  try {
    await session.customRequest('scanback/seek', args);
    return args;
  } catch (error) {
    void vscode.window.showErrorMessage(`scanback: cannot go to ${args.cycle}${args.step === undefined ? '' : `:${args.step}`}: ${errorText(error)}`);
    return undefined;
  }
}

function focusedThreadId(session: vscode.DebugSession): number {
  const item = vscode.debug.activeStackItem;
  if (item && item.session.id === session.id) return item.threadId;
  return 1; // the first task: every stop stops all tasks (allThreadsStopped)
}

export async function stepBack(direction: 'in' | 'out', session = activeScanbackSession()): Promise<boolean> {
  if (!session) return false;
  const command = direction === 'in' ? 'scanback/stepBackIn' : 'scanback/stepBackOut';
  try {
    await session.customRequest(command, { threadId: focusedThreadId(session) });
    return true;
  } catch (error) {
    void vscode.window.showErrorMessage(`scanback: Step Back ${direction === 'in' ? 'Into' : 'Out'} failed: ${errorText(error)}`);
    return false;
  }
}

/** Open Trace…: a replay session on a trace picked from disk. */
export async function openTrace(): Promise<boolean> {
  const picked = await vscode.window.showOpenDialog({
    title: 'Open a scanback trace',
    canSelectMany: false,
    openLabel: 'Replay',
    filters: { 'scanback traces': ['trace'], 'All files': ['*'] },
  });
  if (!picked || picked.length === 0) return false;
  const trace = picked[0].fsPath;
  const folder = vscode.workspace.getWorkspaceFolder(picked[0]) ?? vscode.workspace.workspaceFolders?.[0];
  return vscode.debug.startDebugging(folder, {
    type: debugType,
    request: 'launch',
    name: `Replay ${path.basename(trace)}`,
    trace,
    cwd: path.dirname(trace),
  });
}
