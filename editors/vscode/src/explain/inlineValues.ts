import * as vscode from 'vscode';

/** ST keywords and standard names that are never variables of the code (not worth a request). */
const keywords = new Set(
  (
    'IF THEN ELSIF ELSE END_IF CASE OF END_CASE FOR TO BY DO END_FOR WHILE END_WHILE REPEAT UNTIL END_REPEAT ' +
    'EXIT CONTINUE RETURN AND OR XOR NOT MOD TRUE FALSE VAR VAR_INPUT VAR_OUTPUT VAR_IN_OUT VAR_TEMP VAR_GLOBAL ' +
    'VAR_EXTERNAL CONSTANT RETAIN END_VAR PROGRAM END_PROGRAM FUNCTION END_FUNCTION FUNCTION_BLOCK ' +
    'END_FUNCTION_BLOCK METHOD END_METHOD REF REF_TO POINTER ADR AT ARRAY STRUCT END_STRUCT TYPE END_TYPE ' +
    'BOOL INT DINT SINT LINT UINT UDINT USINT ULINT REAL LREAL TIME LTIME STRING WSTRING BYTE WORD DWORD LWORD'
  ).split(' '),
);

/** A name used on a line: a variable, an FB field (`motor.out`) or an array element at constant
 *  indexes (`a[3]`), with its column range. */
export interface NameUse {
  line: number;
  start: number;
  end: number;
  expression: string;
}

/** The names used in `text` (lines from `firstLine`), comments and strings left out. */
export function namesIn(text: string, firstLine: number): NameUse[] {
  const out: NameUse[] = [];
  const lines = text.split('\n');
  let inComment = false;
  lines.forEach((raw, k) => {
    let line = '';
    // Blank out comments ((* *), //) and string literals, keeping the columns.
    for (let i = 0; i < raw.length; ++i) {
      if (inComment) {
        if (raw.startsWith('*)', i)) {
          inComment = false;
          line += '  ';
          ++i;
        } else line += ' ';
      } else if (raw.startsWith('(*', i)) {
        inComment = true;
        line += '  ';
        ++i;
      } else if (raw.startsWith('//', i)) {
        line += ' '.repeat(raw.length - i);
        break;
      } else if (raw[i] === "'" || raw[i] === '"') {
        const close = raw.indexOf(raw[i], i + 1);
        const end = close < 0 ? raw.length : close + 1;
        line += ' '.repeat(end - i);
        i = end - 1;
      } else line += raw[i];
    }
    const pattern = /(?<![\w#.%])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[\d+(?:,\s*\d+)*\])*(?![\w#(])/g;
    for (let m = pattern.exec(line); m; m = pattern.exec(line)) {
      if (keywords.has(m[0].toUpperCase())) continue;
      out.push({ line: firstLine + k, start: m.index, end: m.index + m[0].length, expression: m[0] });
    }
  });
  return out;
}

/** Inline values (CODESYS's online mode): each variable's value beside its use on the visible
 *  lines, from one `scanback/values` request. Off with `scanback.inlineValues.enabled`. */
export class ScanbackInlineValues implements vscode.InlineValuesProvider {
  async provideInlineValues(
    document: vscode.TextDocument,
    viewPort: vscode.Range,
    context: vscode.InlineValueContext,
  ): Promise<vscode.InlineValue[]> {
    if (!vscode.workspace.getConfiguration('scanback').get<boolean>('inlineValues.enabled', true)) return [];
    const session = vscode.debug.activeDebugSession;
    if (!session || session.type !== 'scanback') return [];
    // The lines up to the stop (as VS Code's own inline values): what ran or is about to.
    const last = Math.min(viewPort.end.line, context.stoppedLocation.end.line);
    if (last < viewPort.start.line) return [];
    const range = new vscode.Range(viewPort.start.line, 0, last, document.lineAt(last).text.length);
    const uses = namesIn(document.getText(range), viewPort.start.line);
    const expressions = [...new Set(uses.map((u) => u.expression))];
    if (expressions.length === 0) return [];
    let values: (string | null)[];
    try {
      const body = (await session.customRequest('scanback/values', { frameId: context.frameId, expressions })) as {
        values: (string | null)[];
      };
      values = body.values;
    } catch {
      return []; // not paused (any more), or an older adapter
    }
    const valueOf = new Map(expressions.map((e, i) => [e, values[i]]));
    return uses.flatMap((u) => {
      const v = valueOf.get(u.expression);
      // (An enumeration's value named in the code is its own value: `Idle = Idle` says nothing.)
      return v === null || v === undefined || v === u.expression
        ? []
        : [new vscode.InlineValueText(new vscode.Range(u.line, u.start, u.line, u.end), `${u.expression} = ${v}`)];
    });
  }
}
