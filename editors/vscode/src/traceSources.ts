import { execFile } from 'child_process';
import { stat } from 'fs/promises';
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

/**
 * The files of the `scanback-trace:` scheme, read-only: each one's text read out of its trace with
 * `scanback trace dump TRACE --source FILE` (by its recorded path, else by its name when the trace
 * recorded it relative). A file system rather than a TextDocumentContentProvider: VS Code restores
 * the tabs of a file system's files after a reload of the window (activating the extension by
 * `onFileSystem:scanback-trace`), while it drops those of a content provider's documents.
 */
export class TraceSourceFileSystem implements vscode.FileSystemProvider {
  // The texts read, by URI and the trace's modification time (a trace recorded again at the same
  // path is read again).
  private readonly texts = new Map<string, Promise<Uint8Array>>();
  private readonly changes = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changes.event;

  constructor(private readonly binary: () => string) {}

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const { text, mtime } = await this.read(uri);
    return { type: vscode.FileType.File, ctime: mtime, mtime, size: text.byteLength, permissions: vscode.FilePermission.Readonly };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    return (await this.read(uri)).text;
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined); // a trace does not change while it is read
  }

  readDirectory(uri: vscode.Uri): never {
    throw vscode.FileSystemError.FileNotADirectory(uri);
  }

  createDirectory(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  writeFile(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  private async read(uri: vscode.Uri): Promise<{ text: Uint8Array; mtime: number }> {
    const named = parseTraceUri(uri);
    if (!named) throw vscode.FileSystemError.FileNotFound(`scanback: ${uri.toString()} names no trace`);
    const mtime = await stat(named.trace).then(
      (s) => s.mtimeMs,
      () => {
        throw vscode.FileSystemError.FileNotFound(`scanback: the trace ${named.trace} is not there any more`);
      },
    );
    const key = `${uri.toString()} ${mtime}`;
    let text = this.texts.get(key);
    if (!text) {
      const dump = (file: string) =>
        new Promise<Uint8Array>((resolve, reject) =>
          execFile(
            this.binary(),
            ['trace', 'dump', named.trace, '--source', file],
            { maxBuffer: 64 * 1024 * 1024, encoding: 'buffer' },
            (error, stdout, stderr) => (error ? reject(new Error(stderr.toString().trim() || error.message)) : resolve(new Uint8Array(stdout))),
          ),
        );
      text = dump(named.file)
        .catch(() => dump(path.basename(named.file)))
        .catch((error: Error) => {
          this.texts.delete(key); // asked again, it is tried again
          throw vscode.FileSystemError.FileNotFound(`scanback: ${error.message}`);
        });
      this.texts.set(key, text);
    }
    return { text: await text, mtime };
  }
}
