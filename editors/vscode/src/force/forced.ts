import * as vscode from 'vscode';
import { activeScanbackSession, candidatePaths, focusedInstance, variableOfMenu } from '../commands';
import { variableOfInvocation } from '../explain/why';

/** One force the adapter holds (scanback/forced, docs/extension.md). */
export interface ForcedEntry {
  target: string;
  value: string;
  type: string;
  sinceCycle?: number;
  /** Set in history: the position whose recorded forces these are (the adapter's `at`). */
  at?: { cycle: number; step: number };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The Forced Values view (issue 31): every force of the active session, each with Release. */
export class ForcedTreeProvider implements vscode.TreeDataProvider<ForcedEntry> {
  private entries: ForcedEntry[] = [];
  private readonly changed = new vscode.EventEmitter<ForcedEntry | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  show(entries: ForcedEntry[]): void {
    this.entries = entries;
    this.changed.fire(undefined);
  }
  current(): ForcedEntry[] {
    return this.entries;
  }
  getTreeItem(entry: ForcedEntry): vscode.TreeItem {
    const item = new vscode.TreeItem(`${entry.target} = ${entry.value}`, vscode.TreeItemCollapsibleState.None);
    const parts = [entry.type];
    if (entry.sinceCycle !== undefined) parts.push(`since cycle ${entry.sinceCycle}`);
    if (entry.at) parts.push(`held at cycle ${entry.at.cycle}`);
    item.description = parts.filter((p) => p).join(' · ');
    item.tooltip = entry.at
      ? `${entry.target} was held at ${entry.value} in cycle ${entry.at.cycle}, the position shown (history: what the trace recorded)`
      : `${entry.target} is held at ${entry.value} at every cycle start until released`;
    item.contextValue = 'forced';
    return item;
  }
  getChildren(entry?: ForcedEntry): ForcedEntry[] {
    return entry ? [] : this.entries;
  }
}

/**
 * Asks the adapter which forces it shows: the task's, or in history (a replay, a session stopped in
 * its history) those the trace recorded at the position shown (`at`). Called at every stop, so the
 * list follows the position; none when the adapter cannot list them (it says why to no one: an
 * adapter that is moving, or one from before forcing).
 */
export async function refreshForced(provider: ForcedTreeProvider, session = activeScanbackSession()): Promise<void> {
  if (!session) return provider.show([]);
  try {
    const body = (await session.customRequest('scanback/forced')) as { forced?: ForcedEntry[]; at?: ForcedEntry['at'] };
    provider.show((body.forced ?? []).map((entry) => (body.at ? { ...entry, at: body.at } : entry)));
  } catch {
    provider.show([]);
  }
}

/**
 * "Force Value…": holds a variable or an address at a value from the next cycle start on, until
 * released (scanback/force). A PROGRAM's variable picked in Variables is named by its instance.
 */
export async function forceValue(
  provider: ForcedTreeProvider,
  context?: unknown,
  session = activeScanbackSession(),
): Promise<ForcedEntry | undefined> {
  if (!session) {
    void vscode.window.showInformationMessage('scanback: Force Value… needs a live or attached scanback debug session.');
    return undefined;
  }
  let chosen = variableOfMenu(context);
  if (!chosen) {
    // From the editor (its context menu, or the palette over an ST file): the word under the cursor
    // is offered, to confirm or change; a variable of a PROGRAM is then found in the frame's instance.
    const editor = vscode.window.activeTextEditor;
    const word = editor?.document.languageId === 'st' ? variableOfInvocation(undefined, editor) : undefined;
    const text = await vscode.window.showInputBox({
      title: 'Force Value',
      prompt: 'The variable or address to hold: PROGRAM.variable, a global, a struct field, an array element or an address',
      placeHolder: 'Line.startPb, gTank.level, %IX0.2',
      value: word,
      validateInput: (value) => (value.trim() ? undefined : 'Enter a variable path or an address.'),
    });
    if (text === undefined || !text.trim()) return undefined;
    // A word of the editor may be a PROGRAM's own variable: tried in the frame's instance first.
    chosen = { expression: text.trim(), global: word === undefined || text.trim() !== word };
  }
  const value = await vscode.window.showInputBox({
    title: `Force ${chosen.expression}`,
    prompt: 'The value to hold it at, at every cycle start, until released (TRUE, 42, 1.5, T#2s, …)',
    validateInput: (text) => (text.trim() ? undefined : 'Enter a value.'),
  });
  if (value === undefined || !value.trim()) return undefined;
  const instance = chosen.global ? undefined : await focusedInstance(session);
  let firstError: unknown;
  for (const target of candidatePaths(chosen.expression, instance)) {
    try {
      const forced = (await session.customRequest('scanback/force', { target, value: value.trim() })) as ForcedEntry;
      await refreshForced(provider, session);
      return forced;
    } catch (error) {
      firstError ??= error;
    }
  }
  void vscode.window.showErrorMessage(`scanback: cannot force ${chosen.expression}: ${messageOf(firstError)}`);
  return undefined;
}

/** Release (one force, from the view's row) or Release All (no entry): scanback/release. */
export async function releaseForced(
  provider: ForcedTreeProvider,
  entry?: ForcedEntry,
  session = activeScanbackSession(),
): Promise<string[] | undefined> {
  if (!session) return undefined;
  try {
    const body = (await session.customRequest('scanback/release', entry ? { target: entry.target } : {})) as { released?: string[] };
    await refreshForced(provider, session);
    return body.released ?? [];
  } catch (error) {
    void vscode.window.showErrorMessage(`scanback: cannot release ${entry ? entry.target : 'the forces'}: ${messageOf(error)}`);
    return undefined;
  }
}

/** What Variables shows after a forced value: VS Code draws no attribute it does not know. */
export const forcedMark = ' (forced)';

/** The parts of a DAP Variable (or an evaluate response's body) the mark touches. */
interface MarkableVariable {
  value?: string;
  presentationHint?: { attributes?: string[] };
}

/**
 * Marks forced variables in a `variables` response for VS Code, which ignores the adapter's
 * `forced` attribute (docs/dap.md): their value reads "TRUE (forced)", and they are `readOnly`, so
 * that Set Value, whose write the force would undo at the next cycle start, is not offered (Force
 * Value… changes a force, Release ends it). Copy Value asks the adapter (evaluateName), so it
 * copies the value without the mark. Returns how many were marked.
 */
export function markForced(variables: MarkableVariable[] | undefined): number {
  let marked = 0;
  for (const v of variables ?? []) {
    const attributes = v.presentationHint?.attributes;
    if (!attributes?.includes('forced') || typeof v.value !== 'string') continue;
    if (!v.value.endsWith(forcedMark)) v.value += forcedMark;
    if (!attributes.includes('readOnly')) attributes.push('readOnly');
    ++marked;
  }
  return marked;
}

/** Registers the view and its commands; the list follows every stop and the active session. */
export function activateForcing(context: vscode.ExtensionContext): ForcedTreeProvider {
  const provider = new ForcedTreeProvider();
  context.subscriptions.push(
    vscode.window.createTreeView('scanback.forced', { treeDataProvider: provider }),
    vscode.commands.registerCommand('scanback.force', (menu?: unknown) => forceValue(provider, menu)),
    vscode.commands.registerCommand('scanback.release', (entry?: ForcedEntry) => releaseForced(provider, entry)),
    vscode.commands.registerCommand('scanback.releaseAll', () => releaseForced(provider)),
    vscode.debug.onDidChangeActiveStackItem(() => void refreshForced(provider)),
    vscode.debug.onDidChangeActiveDebugSession(() => void refreshForced(provider)),
    vscode.debug.onDidTerminateDebugSession(() => void refreshForced(provider)),
  );
  return provider;
}
