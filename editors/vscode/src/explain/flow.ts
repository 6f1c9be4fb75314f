import * as vscode from 'vscode';

/** What `scanback/flow` answers for a frame (docs/explain.md). */
export interface Flow {
  cycle: number;
  ran: { file: string; line: number }[];
  notRan: { file: string; line: number }[];
}

/** The 0-based lines of `file` that ran and did not, from a flow answer (lines from 1). */
export function linesOf(flow: Flow, file: string): { ran: number[]; notRan: number[] } {
  const pick = (list: { file: string; line: number }[]) => list.filter((l) => l.file === file).map((l) => l.line - 1);
  return { ran: pick(flow.ran), notRan: pick(flow.notRan) };
}

/** CODESYS's flow control for any recorded cycle: at each stop, the statements of the current POU
 *  that ran in this cycle are marked, those that did not are dimmed. Off with `scanback.flow.enabled`. */
export class FlowDecorations implements vscode.Disposable {
  private readonly ranType = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    overviewRulerColor: new vscode.ThemeColor('debugIcon.startForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
    borderWidth: '0 0 0 2px',
    borderStyle: 'solid',
    borderColor: new vscode.ThemeColor('debugIcon.startForeground'),
  });
  private readonly notRanType = vscode.window.createTextEditorDecorationType({ isWholeLine: true, opacity: '0.45' });
  private flow: Flow | undefined;

  dispose(): void {
    this.ranType.dispose();
    this.notRanType.dispose();
  }

  /** After a stop, or another frame picked: asks for the frame's flow and decorates the visible editors. */
  async refresh(session: vscode.DebugSession, frameId: number): Promise<void> {
    this.flow = undefined;
    if (vscode.workspace.getConfiguration('scanback').get<boolean>('flow.enabled', true)) {
      try {
        this.flow = (await session.customRequest('scanback/flow', { frameId })) as Flow;
      } catch {
        this.flow = undefined; // running again, or an older adapter
      }
    }
    this.apply();
  }

  clear(): void {
    this.flow = undefined;
    this.apply();
  }

  apply(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const lines = this.flow ? linesOf(this.flow, editor.document.uri.fsPath) : { ran: [], notRan: [] };
      const ranges = (list: number[]) => list.map((l) => new vscode.Range(l, 0, l, 0));
      editor.setDecorations(this.ranType, ranges(lines.ran));
      editor.setDecorations(this.notRanType, ranges(lines.notRan));
    }
  }
}
