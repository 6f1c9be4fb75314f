import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';

/** One compile error or warning, as the adapter sends it in a failed launch's body (`diagnostics`,
 *  docs/dap.md) and as `scanback check` prints it. Lines and columns from 1; `endColumn` is the
 *  column after the last character. */
export interface BuildDiagnostic {
  path: string;
  line: number;
  column: number;
  endLine?: number;
  endColumn?: number;
  severity: 'error' | 'warning';
  message: string;
}

/** The diagnostics in `scanback check`'s output: "path:line:column: error: message", one a line
 *  (notes and lines without a location are left out: Problems needs a place). */
export function parseCheckOutput(text: string): BuildDiagnostic[] {
  const out: BuildDiagnostic[] = [];
  for (const line of text.split(/\r?\n/)) {
    const match = /^(.+):(\d+):(\d+): (error|warning): (.*)$/.exec(line);
    if (!match) continue;
    out.push({
      path: match[1],
      line: Number(match[2]),
      column: Number(match[3]),
      severity: match[4] as 'error' | 'warning',
      message: match[5],
    });
  }
  return out;
}

/** The diagnostics in a failed launch response's body; [] when it has none (or not as expected). */
export function diagnosticsOfResponse(body: unknown): BuildDiagnostic[] {
  const list = (body as { diagnostics?: unknown } | undefined)?.diagnostics;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (d): d is BuildDiagnostic =>
      typeof d === 'object' &&
      d !== null &&
      typeof d.path === 'string' &&
      Number.isSafeInteger(d.line) &&
      Number.isSafeInteger(d.column) &&
      (d.severity === 'error' || d.severity === 'warning') &&
      typeof d.message === 'string',
  );
}

/** "2 errors, 1 warning" (what is there only). */
export function countText(list: readonly BuildDiagnostic[]): string {
  const errors = list.filter((d) => d.severity === 'error').length;
  const warnings = list.length - errors;
  const parts: string[] = [];
  if (errors > 0) parts.push(`${errors} error${errors === 1 ? '' : 's'}`);
  if (warnings > 0) parts.push(`${warnings} warning${warnings === 1 ? '' : 's'}`);
  return parts.join(', ') || 'no errors';
}

/** The one message a launch that does not compile shows: how many errors, the first with its place. */
export function compileFailureText(list: readonly BuildDiagnostic[]): string {
  const first = list.find((d) => d.severity === 'error') ?? list[0];
  const where = first ? ` The first: ${path.basename(first.path)}:${first.line}: ${first.message}.` : '';
  return `scanback: the program does not compile (${countText(list)}); see Problems.${where}`;
}

/**
 * The errors of the last launch or Check Project, in Problems (the collection `scanback-build`,
 * beside the language server's `scanback`). A document's entries go when it is edited: they no
 * longer match its text, and the language server reports it as it is typed. An entry the language
 * server already shows is not repeated.
 */
export class BuildProblems implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('scanback-build');
  private readonly listener = vscode.workspace.onDidChangeTextDocument((e) => {
    if (e.contentChanges.length > 0) this.collection.delete(e.document.uri);
  });

  /** Replaces the entries with `list`; returns how many were new to Problems. */
  set(list: readonly BuildDiagnostic[]): number {
    this.collection.clear();
    const byFile = new Map<string, vscode.Diagnostic[]>();
    let added = 0;
    for (const d of list) {
      const uri = vscode.Uri.file(d.path);
      const line = Math.max(0, d.line - 1);
      const column = Math.max(0, d.column - 1);
      const endLine = d.endLine !== undefined ? Math.max(line, d.endLine - 1) : line;
      let endColumn = d.endColumn !== undefined ? Math.max(0, d.endColumn - 1) : column + 1;
      if (endLine === line && endColumn <= column) endColumn = column + 1;
      const shown = vscode.languages
        .getDiagnostics(uri)
        .some((o) => o.range.start.line === line && o.message === d.message);
      if (shown) continue;
      const diagnostic = new vscode.Diagnostic(
        new vscode.Range(line, column, endLine, endColumn),
        d.message,
        d.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
      );
      diagnostic.source = 'scanback';
      const key = uri.toString();
      byFile.set(key, [...(byFile.get(key) ?? []), diagnostic]);
      added++;
    }
    for (const [key, diagnostics] of byFile) this.collection.set(vscode.Uri.parse(key), diagnostics);
    return added;
  }

  clear(): void {
    this.collection.clear();
  }

  dispose(): void {
    this.listener.dispose();
    this.collection.dispose();
  }
}

/** The .st files Check Project compiles: those of the active .st file's folder (what F5 without a
 *  launch.json debugs), else those at the top of the first workspace folder. */
export function projectFiles(activeFile: string | undefined, workspaceFolder: string | undefined): string[] {
  const folder = activeFile ? path.dirname(activeFile) : workspaceFolder;
  if (!folder) return [];
  try {
    return fs
      .readdirSync(folder)
      .filter((name) => name.toLowerCase().endsWith('.st'))
      .sort()
      .map((name) => path.join(folder, name));
  } catch {
    return [];
  }
}

/** Runs `scanback check` on `files`; its diagnostics, or an error when it could not run. */
export function runCheck(binary: string, files: string[]): Promise<BuildDiagnostic[]> {
  return new Promise((resolve, reject) => {
    execFile(binary, ['check', ...files], { maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      const list = parseCheckOutput(stderr);
      // Exit 1 is "does not compile"; anything else that failed without a diagnostic is scanback's.
      if (error && list.length === 0) reject(new Error(stderr.trim() || error.message));
      else resolve(list);
    });
  });
}

/** A failed `launch` or `attach` response, as the adapter sends it. */
export interface FailedResponse {
  command?: string;
  message?: string;
  body?: { error?: { format?: string; showUser?: boolean }; diagnostics?: unknown };
}

/** What the user is told when a session cannot start, and which buttons go with it. */
export interface StartFailure {
  text: string;
  diagnostics: BuildDiagnostic[];
  showProblems: boolean;
  openLaunchJson: boolean;
}

/**
 * The one message a session that cannot start shows: a launch that does not compile says how many
 * errors it has and points to Problems (where they are); any other failure says what the adapter
 * said. "Open launch.json" only when the session came from a launch.json (`fromLaunchJson`): after
 * F5 without one, or Attach to Runtime…, there is none to open.
 */
export function startFailure(response: FailedResponse, fromLaunchJson: boolean): StartFailure {
  const diagnostics = diagnosticsOfResponse(response.body);
  const said = response.body?.error?.format ?? response.message ?? 'no reason given';
  const verb = response.command === 'attach' ? 'attach' : 'start';
  // The adapter's own message may already say what failed ("cannot attach: …"): not twice.
  const reason = said.startsWith(`cannot ${verb}: `) ? said.slice(`cannot ${verb}: `.length) : said;
  const text = diagnostics.length > 0 ? compileFailureText(diagnostics) : `scanback: cannot ${verb}: ${reason}`;
  return { text, diagnostics, showProblems: diagnostics.length > 0, openLaunchJson: fromLaunchJson };
}

/**
 * Takes over the message of a failed launch or attach: VS Code would show the error in a modal
 * dialog with an "Open launch.json" button (even when there is no launch.json), so the response is
 * marked `showUser: false` — which VS Code honours by showing nothing — before VS Code reads it (a
 * tracker sees each message first), and the extension shows its own. Returns what it shows.
 */
export function takeOverStartFailure(response: FailedResponse, fromLaunchJson: boolean): StartFailure {
  const failure = startFailure(response, fromLaunchJson);
  response.body = response.body ?? {};
  response.body.error = { ...(response.body.error ?? { format: response.message ?? '' }), showUser: false };
  return failure;
}
