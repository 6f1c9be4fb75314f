import { execFile } from 'child_process';
import * as path from 'path';
import * as vscode from 'vscode';
import { resolveScanbackBinary } from '../binary';
import { activeScanbackSession } from '../commands';

/** One message of `scanback trace log`: "CYCLE:STEP  message". */
export interface LogLine {
  cycle: number;
  step: number;
  message: string;
}

export function parseLogOutput(out: string): LogLine[] {
  return out.split('\n').flatMap((line) => {
    const m = /^(\d+):(\d+) {2}(.*)$/.exec(line);
    return m ? [{ cycle: Number(m[1]), step: Number(m[2]), message: m[3] }] : [];
  });
}

/** The trace a session replays: `trace` of a replay launch, resolved against its `cwd`. */
export function traceOf(configuration: vscode.DebugConfiguration): string | undefined {
  const trace = typeof configuration.trace === 'string' ? configuration.trace : undefined;
  if (!trace) return undefined;
  const cwd = typeof configuration.cwd === 'string' ? configuration.cwd : '';
  return path.isAbsolute(trace) || !cwd ? trace : path.join(cwd, trace);
}

/** Where the logged statement is, as the Debug Console turns it into a link that opens the file at
 *  the line: `./programs.st:112` inside the workspace (the console resolves it against the session's
 *  folder), the absolute path outside it. */
export function locationText(fsPath: string, line: number, relative: string): string {
  const inWorkspace = relative !== fsPath && !path.isAbsolute(relative) && !relative.startsWith('..');
  return `${inWorkspace ? `./${relative}` : fsPath}:${line}`;
}

/** One message's line in the Debug Console: its position in time, the message, and the statement's
 *  location (a link: a click opens the statement; Go to a Logged Position… travels in time). */
export function consoleLine(l: LogLine, location: string): string {
  return `${l.cycle}:${l.step}  ${l.message}  (${location})`;
}

/** The messages of the last Log Over History, for Go to a Logged Position…. */
let lastLog: { title: string; lines: LogLine[]; session: vscode.DebugSession } | undefined;

/** The list of the logged positions; the one picked is where the session travels. */
export async function pickLoggedPosition(title: string, lines: LogLine[], session: vscode.DebugSession): Promise<LogLine | undefined> {
  const picked = await vscode.window.showQuickPick(
    lines.map((l) => ({ label: `${l.cycle}:${l.step}`, description: l.message, line: l })),
    { title: `Go to a logged position: ${title}`, matchOnDescription: true },
  );
  if (!picked) return undefined;
  await session.customRequest('scanback/seek', { cycle: picked.line.cycle, step: picked.line.step });
  return picked.line;
}

/** "Go to a Logged Position…": the list of the last Log Over History again, while its session runs. */
export async function goToLoggedPosition(session = activeScanbackSession()): Promise<LogLine | undefined> {
  if (!lastLog || !session || lastLog.session.id !== session.id) {
    void vscode.window.showInformationMessage('scanback: no Log Over History of this session yet (run Log Over History on a line).');
    return undefined;
  }
  return pickLoggedPosition(lastLog.title, lastLog.lines, session);
}

/** How many messages one Log Over History prints at most. */
export const logLimit = 10000;

/**
 * "Log Over History" on an editor line: asks for a message (`text {expression}`), runs
 * `scanback trace log` on the session's trace, prints every message with its position in the
 * Debug Console (each with the statement's location, a link), and offers the positions in a list
 * that travels to the one picked (again later with Go to a Logged Position…).
 */
export async function logOverHistory(extensionPath: string, session = activeScanbackSession()): Promise<LogLine[] | undefined> {
  const editor = vscode.window.activeTextEditor;
  const trace = session ? traceOf(session.configuration) : undefined;
  if (!session || !editor || !trace) {
    void vscode.window.showInformationMessage('scanback: Log Over History needs a replay session (a trace) and a line in the editor.');
    return undefined;
  }
  const line = editor.selection.active.line + 1;
  const message = await vscode.window.showInputBox({
    title: `Log Over History: ${path.basename(editor.document.uri.fsPath)}:${line}`,
    prompt: 'The message for every run of this line; {expressions} are evaluated there',
    placeHolder: 'x = {x}, state = {state}',
    validateInput: (v) => (v.trim() ? undefined : 'Enter a message.'),
  });
  if (!message) return undefined;
  let binary: string;
  try {
    binary = resolveScanbackBinary({
      configuredPath: vscode.workspace.getConfiguration('scanback').get<string>('path', ''),
      extensionPath,
      searchPath: process.env.PATH,
    });
  } catch (e) {
    void vscode.window.showErrorMessage(`scanback: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  }
  const args = ['trace', 'log', trace, `${editor.document.uri.fsPath}:${line}`, message, '--limit', String(logLimit)];
  const { out, err, failed } = await new Promise<{ out: string; err: string; failed: boolean }>((resolve) =>
    execFile(binary, args, { maxBuffer: 64 << 20 }, (error, stdout, stderr) => resolve({ out: stdout, err: stderr, failed: error !== null })),
  );
  if (failed) {
    void vscode.window.showErrorMessage(`scanback: Log Over History: ${err.trim().replace(/^scanback: /, '')}`);
    return undefined;
  }
  const lines = parseLogOutput(out);
  const file = editor.document.uri.fsPath;
  const title = `${path.basename(file)}:${line}`;
  const location = locationText(file, line, vscode.workspace.asRelativePath(editor.document.uri, false));
  const console = vscode.debug.activeDebugConsole;
  console.appendLine(`Log Over History, ${title}: ${lines.length} message(s); Go to a Logged Position… travels to one`);
  for (const l of lines) console.appendLine(consoleLine(l, location));
  if (err.trim()) console.appendLine(err.trim());
  lastLog = { title, lines, session };
  await pickLoggedPosition(title, lines, session);
  return lines;
}
