import * as path from 'path';
import * as vscode from 'vscode';
import { endpointProblem } from './attach';
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
      session.configuration.request === 'attach'
        ? 'scanback: Reload Runtime changes a program this debugger launched; an attached session only watches the runtime and never changes it.'
        : 'scanback: Reload Runtime changes a live program; this session replays a trace or runs nonstop, so its program cannot change.',
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

/** The endpoint the last Attach to Runtime… was given: the next one offers it again. */
let lastEndpoint = 'unix:///tmp/scanback.sock';

/** What is wrong with an endpoint typed into Attach to Runtime…, as the user types it. */
export function endpointInputProblem(text: string): string | undefined {
  if (text.trim() === '') return "Enter the runtime's control endpoint: unix:///path.sock or tcp://127.0.0.1:PORT.";
  return endpointProblem(text.trim());
}

/**
 * Attach to Runtime…: asks for the control endpoint of a runtime started with `scanback run
 * --control` (checked as it is typed) and for its token (hidden; empty when it has none), and
 * attaches without a launch.json.
 */
export async function attachToRuntime(): Promise<boolean> {
  const typed = await vscode.window.showInputBox({
    title: 'Attach to a scanback runtime (1/2)',
    prompt: "The runtime's control endpoint, as given to scanback run --control",
    placeHolder: 'unix:///path.sock or tcp://127.0.0.1:PORT',
    value: lastEndpoint,
    ignoreFocusOut: true,
    validateInput: endpointInputProblem,
  });
  if (typed === undefined) return false;
  const endpoint = typed.trim();
  lastEndpoint = endpoint;
  const token = await vscode.window.showInputBox({
    title: 'Attach to a scanback runtime (2/2)',
    prompt: "The runtime's token (the first line of its --auth-token-file); leave empty when it has none",
    password: true,
    ignoreFocusOut: true,
  });
  if (token === undefined) return false;
  const folder = vscode.workspace.workspaceFolders?.[0];
  const configuration: vscode.DebugConfiguration = { type: debugType, request: 'attach', name: `Attach to ${endpoint}`, endpoint };
  if (token.trim() !== '') configuration.authToken = token.trim();
  return vscode.debug.startDebugging(folder, configuration);
}

/** What VS Code passes to a command of the Variables view's (`debug/variables/context`) or the
 *  Watch view's (`debug/watch/context`) context menu. */
interface VariableMenuContext {
  container?: { name?: string; expression?: string; evaluateName?: string; expensive?: boolean };
  variable?: { name?: string; evaluateName?: string };
}

/** The scopes whose variables' evaluateName is a full path already (the others are relative to the
 *  frame). */
const globalScopes = new Set(['Globals', 'Retain', 'I/O']);

/** The expression a context-menu argument names, and whether it is a full path; undefined when the
 *  argument is not a variable. */
export function variableOfMenu(context: unknown): { expression: string; global: boolean } | undefined {
  if (typeof context !== 'object' || context === null) return undefined;
  const c = context as VariableMenuContext;
  const expression = (c.variable?.evaluateName ?? c.variable?.name ?? '').trim();
  if (!expression) return undefined;
  // A scope is the one container without an evaluateName or an expression.
  const container = c.container;
  const inGlobalScope =
    container !== undefined && container.evaluateName === undefined && container.expression === undefined && globalScopes.has(container.name ?? '');
  return { expression, global: inGlobalScope || expression.startsWith('%') };
}

/** The instance a stack frame runs in, from its name: "Line (LineControl)" → "Line",
 *  "Line.motor (MotorCtl)" → "Line.motor", "Line (LineControl): end of cycle" → "Line". */
export function frameInstance(frameName: string): string | undefined {
  const name = frameName.replace(/: end of cycle$/, '').replace(/ \([^()]*\)$/, '').trim();
  return /^[A-Za-z_][\w.[\],]*$/.test(name) ? name : undefined;
}

/** The paths `expression` may have, most specific first: in the frame's instance, then as written
 *  (a global, or a full path already). */
export function candidatePaths(expression: string, instance: string | undefined): string[] {
  if (!instance || expression.startsWith('%') || expression.startsWith(`${instance}.`)) return [expression];
  return [`${instance}.${expression}`, expression];
}

/** The instance of the frame the Variables and Watch views show (the focused one, else the top
 *  frame of the first task); undefined when the session is not stopped. */
export async function focusedInstance(session: vscode.DebugSession): Promise<string | undefined> {
  const item = vscode.debug.activeStackItem;
  const mine = item && item.session.id === session.id ? item : undefined;
  const threadId = mine?.threadId ?? 1;
  const frameId = mine && 'frameId' in mine ? mine.frameId : undefined;
  try {
    const body = (await session.customRequest('stackTrace', { threadId })) as { stackFrames?: { id: number; name: string }[] };
    const frames = body.stackFrames ?? [];
    const frame = frames.find((f) => f.id === frameId) ?? frames[0];
    return frame ? frameInstance(frame.name) : undefined;
  } catch {
    return undefined; // running, or no frame: the expression is taken as a full path
  }
}

/** The Scan Timeline's side of Add to Scan Timeline. */
export interface SignalLanes {
  addSignal(session: vscode.DebugSession, candidates: string[]): Promise<string | undefined>;
}

/**
 * Add to Scan Timeline: from the Variables or Watch view's context menu (the variable under the
 * mouse) or the command palette (asks for a path, as `trace why` takes them). A frame's variable
 * is qualified with the frame's instance, as the adapter's paths need. Shows the Scan Timeline.
 */
export async function addToScanTimeline(
  lanes: SignalLanes,
  context?: unknown,
  session = activeScanbackSession(),
): Promise<string | undefined> {
  if (!session) {
    void vscode.window.showInformationMessage('scanback: Add to Scan Timeline needs a scanback debug session.');
    return undefined;
  }
  let chosen = variableOfMenu(context);
  if (!chosen) {
    const text = await vscode.window.showInputBox({
      title: 'Add to Scan Timeline',
      prompt: "A variable's path: PROGRAM.variable, a global, a struct field, an array element or an address",
      placeHolder: 'Line.motor.starts, gTank.level, gAlarms[2].active, %IX0.1',
      validateInput: (value) => (value.trim() ? undefined : 'Enter a variable path.'),
    });
    if (text === undefined || !text.trim()) return undefined;
    chosen = { expression: text.trim(), global: text.trim().startsWith('%') };
  }
  const instance = chosen.global ? undefined : await focusedInstance(session);
  try {
    await vscode.commands.executeCommand('scanback.timeline.focus');
  } catch {
    // the view cannot be shown (no Run and Debug container): the lane is kept all the same
  }
  return lanes.addSignal(session, candidatePaths(chosen.expression, instance));
}
