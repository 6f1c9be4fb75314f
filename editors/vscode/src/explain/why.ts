import * as vscode from 'vscode';
import { activeScanbackSession, variableOfMenu } from '../commands';

/** A node of a why-chain, as `scanback/why` and `scanback trace why --json` send it (docs/explain.md). */
export interface WhyNode {
  value: string;
  variable: string;
  cycle: number;
  step: number;
  file?: string;
  line?: number;
  text?: string;
  origin: 'statement' | 'input' | 'force' | 'stimulus' | 'write' | 'initial' | 'constant';
  /** Who made the external write or changed the %I bytes (stimulus, write, input), when the trace says. */
  author?: 'stimulus' | 'debugger' | 'force' | 'modbusPeer';
  reads: WhyNode[];
  repeated?: boolean;
  error?: string;
}

/** How deep the view asks the adapter to follow a value (the adapter's default as well). */
export const whyDepth = 4;

/** Who made an external write, in words (`trace why`'s); none: a trace recorded before writes said it. */
export function authorText(author: WhyNode['author']): string {
  switch (author) {
    case 'stimulus':
      return 'stimulus';
    case 'debugger':
      return 'debugger';
    case 'force':
      return 'a force of the rerun recording';
    case 'modbusPeer':
      return 'Modbus peer';
    default:
      return 'stimulus or a write between cycles';
  }
}

/** Where a node's value came from, in words. */
export function originText(node: WhyNode): string {
  switch (node.origin) {
    case 'statement':
      return node.text ?? 'a statement';
    case 'input':
      return node.author ? `scan input (%I, ${authorText(node.author)})` : 'scan input (%I)';
    case 'force':
      return 'forced';
    case 'stimulus':
      return `external write at the cycle start (${authorText(node.author)})`;
    case 'write':
      return 'debugger write';
    case 'initial':
      return 'the value it started with';
    case 'constant':
      return 'constant';
  }
}

/** The row of the Why? view for a node: label (value), description (statement, position). */
export function whyItem(node: WhyNode): vscode.TreeItem {
  const label = `${node.variable} = ${node.value}`;
  const expandable = node.reads.length > 0;
  const item = new vscode.TreeItem(
    label,
    expandable ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
  );
  const where = node.origin === 'constant' ? '' : ` · ${node.cycle}:${node.step}`;
  const repeated = node.repeated ? ' · repeated (followed above)' : '';
  item.description = (node.error ? `cannot be evaluated: ${node.error}` : originText(node)) + where + repeated;
  const location = node.file ? `\n${node.file}:${node.line}` : '';
  item.tooltip = `${label}\n${item.description}${location}`;
  // Read by screen readers, the whole row in words.
  item.accessibilityInformation = { label: `${label}, from ${item.description}`, role: 'treeitem' };
  if (node.origin !== 'constant' && !node.error) {
    item.command = { command: 'scanback.why.travel', title: 'Go There', arguments: [node] };
  }
  return item;
}

/** The Why? view (`scanback.why`): the last why-chain asked for. */
export class WhyTreeProvider implements vscode.TreeDataProvider<WhyNode> {
  private root: WhyNode | undefined;
  private readonly changed = new vscode.EventEmitter<WhyNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  show(root: WhyNode | undefined): void {
    this.root = root;
    this.changed.fire(undefined);
  }
  current(): WhyNode | undefined {
    return this.root;
  }
  getTreeItem(node: WhyNode): vscode.TreeItem {
    return whyItem(node);
  }
  getChildren(node?: WhyNode): WhyNode[] {
    if (!node) return this.root ? [this.root] : [];
    return node.reads;
  }
}

/** The variable the command was invoked on: a Variables/Watch row, else the editor's selection or
 *  the word under the cursor (a dotted name with constant indexes). */
export function variableOfInvocation(context: unknown, editor: vscode.TextEditor | undefined): string | undefined {
  const fromMenu = variableOfMenu(context);
  if (fromMenu) return fromMenu.expression;
  if (!editor) return undefined;
  const selected = editor.document.getText(editor.selection).trim();
  if (selected) return selected;
  const range = editor.document.getWordRangeAtPosition(editor.selection.active, /[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*|\[\d+\])*/);
  return range ? editor.document.getText(range) : undefined;
}

/** "Why Does It Have This Value?": asks the adapter and shows the chain in the Why? view. */
export async function explainValue(
  provider: WhyTreeProvider,
  context?: unknown,
  session = activeScanbackSession(),
): Promise<WhyNode | undefined> {
  if (!session) {
    void vscode.window.showInformationMessage('scanback: Why Does It Have This Value? needs a scanback debug session.');
    return undefined;
  }
  const variable = variableOfInvocation(context, vscode.window.activeTextEditor);
  if (!variable) {
    void vscode.window.showInformationMessage('scanback: select a variable first.');
    return undefined;
  }
  try {
    const body = (await session.customRequest('scanback/why', { variable, depth: whyDepth })) as { root: WhyNode };
    provider.show(body.root);
    try {
      await vscode.commands.executeCommand('scanback.why.focus');
    } catch {
      // the view cannot be shown: the chain is kept all the same
    }
    return body.root;
  } catch (e) {
    void vscode.window.showErrorMessage(`scanback: why ${variable}: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  }
}

/** A click on a node: travel to its position (the editor shows the statement, Variables the state). */
export async function travelTo(node: WhyNode, session = activeScanbackSession()): Promise<boolean> {
  if (!session) return false;
  try {
    await session.customRequest('scanback/seek', { cycle: node.cycle, step: node.step });
    return true;
  } catch (e) {
    void vscode.window.showErrorMessage(`scanback: ${e instanceof Error ? e.message : String(e)}`);
    return false;
  }
}
