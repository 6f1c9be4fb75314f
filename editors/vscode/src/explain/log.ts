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

/** How many messages one Log Over History prints at most. */
export const logLimit = 10000;

/**
 * "Log Over History" on an editor line: asks for a message (`text {expression}`), runs
 * `scanback trace log` on the session's trace, prints every message with its position in the
 * Debug Console, and offers the positions in a list that travels to the one picked.
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
  const console = vscode.debug.activeDebugConsole;
  console.appendLine(`Log Over History, ${path.basename(editor.document.uri.fsPath)}:${line}: ${lines.length} message(s)`);
  for (const l of lines) console.appendLine(`${l.cycle}:${l.step}  ${l.message}`);
  if (err.trim()) console.appendLine(err.trim());
  const picked = await vscode.window.showQuickPick(
    lines.map((l) => ({ label: `${l.cycle}:${l.step}`, description: l.message, line: l })),
    { title: 'Go to a logged position', matchOnDescription: true },
  );
  if (picked) await session.customRequest('scanback/seek', { cycle: picked.line.cycle, step: picked.line.step });
  return lines;
}
