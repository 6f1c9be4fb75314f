import { execFile } from 'child_process';
import * as path from 'path';
import * as vscode from 'vscode';

/**
 * The sources of a replayed trace that are nowhere on this machine: the adapter names each by a URI
 * of this scheme (launch argument `sourceScheme`, docs/dap.md) — `scanback-trace://<the trace's
 * path in hex>/<the file's recorded absolute path>` — and the extension shows the text the trace
 * recorded. The URI holds everything needed, so a tab restored after a reload of the window shows it
 * again without a session; the `.st` name gives it the `st` language, and breakpoints set in it go
 * to the adapter under the same URI.
 */
export const traceScheme = 'scanback-trace';

/** The trace and the recorded path a `scanback-trace:` URI names; undefined when it names none. */
export function parseTraceUri(uri: { authority: string; path: string }): { trace: string; file: string } | undefined {
  if (!/^(?:[0-9a-f]{2})+$/i.test(uri.authority) || !uri.path.startsWith('/')) return undefined;
  const trace = Buffer.from(uri.authority, 'hex').toString('utf8');
  return path.isAbsolute(trace) ? { trace, file: uri.path } : undefined;
}

/** The `scanback-trace:` URI of `file` recorded in `trace` (as the adapter makes it). */
export function traceUri(trace: string, file: string): string {
  return `${traceScheme}://${Buffer.from(trace, 'utf8').toString('hex')}${file}`;
}

/** The launch arguments that let the adapter map a replayed trace's sources to the workspace's
 *  files (`sourceFolders`) and name the others under the extension's scheme (`sourceScheme`). */
export function traceSourceArguments(folders: readonly string[]): { sourceFolders: string[]; sourceScheme: string } {
  return { sourceFolders: [...folders], sourceScheme: traceScheme };
}

/** Reads a recorded source out of its trace with `scanback trace dump TRACE --source FILE` (by its
 *  recorded path, else by its name when the trace recorded it relative). */
export class TraceSourceProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly binary: () => string) {}

  provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const named = parseTraceUri(uri);
    if (!named) return Promise.reject(new Error(`scanback: ${uri.toString()} names no trace`));
    const dump = (file: string) =>
      new Promise<string>((resolve, reject) =>
        execFile(this.binary(), ['trace', 'dump', named.trace, '--source', file], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
          error ? reject(new Error(stderr.trim() || error.message)) : resolve(stdout),
        ),
      );
    return dump(named.file).catch(() => dump(path.basename(named.file)));
  }
}
