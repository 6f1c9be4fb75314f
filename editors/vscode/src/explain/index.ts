import * as vscode from 'vscode';
import { debugType } from '../configuration';
import { FlowDecorations } from './flow';
import { ScanbackInlineValues } from './inlineValues';
import { goToLoggedPosition, logOverHistory } from './log';
import { explainValue, travelTo, WhyNode, WhyTreeProvider } from './why';

/** Explaining values (issue 33, docs/explain.md): the Why? view, inline values, flow, logpoints
 *  over history. Registers everything it needs itself, so that extension.ts calls only this. */
export function activateExplain(context: vscode.ExtensionContext): void {
  const why = new WhyTreeProvider();
  const flow = new FlowDecorations();
  context.subscriptions.push(
    flow,
    vscode.window.createTreeView('scanback.why', { treeDataProvider: why, showCollapseAll: true }),
    vscode.commands.registerCommand('scanback.why', (menu?: unknown) => explainValue(why, menu)),
    vscode.commands.registerCommand('scanback.why.travel', (node: WhyNode) => travelTo(node)),
    vscode.commands.registerCommand('scanback.logOverHistory', () => logOverHistory(context.extensionPath)),
    vscode.commands.registerCommand('scanback.logOverHistory.goTo', () => goToLoggedPosition()),
    vscode.languages.registerInlineValuesProvider({ language: 'st' }, new ScanbackInlineValues()),
    // After every stop (and a frame picked in Call Stack) VS Code focuses a stack frame: the flow
    // of that frame's POU in its cycle.
    vscode.debug.onDidChangeActiveStackItem((item) => {
      if (item && item.session.type === debugType && 'frameId' in item) void flow.refresh(item.session, item.frameId);
      else flow.clear();
    }),
    vscode.window.onDidChangeVisibleTextEditors(() => flow.apply()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('scanback.flow.enabled')) flow.clear();
    }),
    vscode.debug.onDidTerminateDebugSession(() => why.show(undefined)),
  );
}
