import * as path from 'path';
import * as vscode from 'vscode';
import { ScanbackAdapterFactory } from './adapter';
import { BinaryNotFoundError, bundledBinaryPath, isExecutableFile, resolveScanbackBinary } from './binary';
import { compareWithRecording, replayedTrace, rerunWithOpenProgram } from './compare/compare';
import {
  activeScanbackSession,
  addToScanTimeline,
  attachToRuntime,
  goToCycle,
  isReloadable,
  openTrace,
  reloadRuntime,
  shouldReloadOnSave,
  stepBack,
} from './commands';
import { debugType, isFromLaunchJson, ScanbackConfigurationProvider } from './configuration';
import { activateExplain } from './explain';
import { activateForcing, markForced } from './force/forced';
import { ScanbackLanguageClient } from './languageClient';
import { BuildProblems, countText, projectFiles, runCheck, takeOverStartFailure, type FailedResponse } from './problems';
import { TimelineViewProvider } from './timeline/provider';
import { TraceSourceFileSystem, traceScheme } from './traceSources';
import { goToLive, WhereYouAre, WriterDecoration } from './where';

/** Requests after which the program runs until the next `stopped` event. */
const resumingRequests = new Set([
  'continue',
  'next',
  'stepIn',
  'stepOut',
  'stepBack',
  'reverseContinue',
  'restartFrame',
  'scanback/seek',
  'scanback/stepBackIn',
  'scanback/stepBackOut',
  'scanback/goToLive',
]);

export function activate(context: vscode.ExtensionContext): void {
  const timeline = new TimelineViewProvider(context.extensionUri, context.workspaceState);
  const problems = new BuildProblems();
  const where = new WhereYouAre();
  const writer = new WriterDecoration();
  timeline.onTimeline((session, body) => where.update(session, body));
  putBundledScanbackOnTerminalPath(context);

  const updateContext = () => {
    const session = activeScanbackSession();
    void vscode.commands.executeCommand('setContext', 'scanback.replay', replayedTrace(session) !== undefined);
    void vscode.commands.executeCommand('setContext', 'scanback.reloadable', isReloadable(session));
  };

  context.subscriptions.push(
    timeline,
    vscode.debug.registerDebugConfigurationProvider(debugType, new ScanbackConfigurationProvider()),
    vscode.debug.registerDebugAdapterDescriptorFactory(debugType, new ScanbackAdapterFactory(context.extensionPath)),
    vscode.debug.registerDebugAdapterTrackerFactory(debugType, {
      createDebugAdapterTracker: (session) => ({
        onWillReceiveMessage: (message: { type?: string; command?: string }) => {
          if (message.type === 'request' && resumingRequests.has(message.command ?? '')) {
            timeline.resumed(session);
            writer.clear();
            where.clear(session); // where it goes is known at the stop
          }
        },
        onDidSendMessage: (message: TrackedMessage) => {
          if (message.type === 'response' && message.success === false && (message.command === 'launch' || message.command === 'attach')) {
            // Before VS Code reads it: its own dialog would offer "Open launch.json" where there may be none.
            const failure = takeOverStartFailure(message as FailedResponse, isFromLaunchJson(session.configuration, session.workspaceFolder));
            problems.set(failure.diagnostics);
            void showStartFailure(failure);
            return;
          }
          // Before VS Code reads it: it draws no `forced` attribute, so the value itself says it.
          if (message.type === 'response' && message.command === 'variables' && message.success !== false)
            markForced(message.body?.variables);
          if (message.type !== 'event') return;
          if (message.event === 'stopped') {
            void timeline.stopped(session, message.body?.reason);
            void writer.stopped(message.body ?? {}, session.configuration.cwd);
          } else if (message.event === 'continued') {
            timeline.resumed(session);
            writer.clear();
            where.clear(session);
          } else if (message.event === 'capabilities') timeline.capabilitiesChanged(session, message.body?.capabilities ?? {});
        },
      }),
    }),
    problems,
    where,
    writer,
    vscode.workspace.registerFileSystemProvider(
      traceScheme,
      new TraceSourceFileSystem(() =>
        resolveScanbackBinary({
          configuredPath: vscode.workspace.getConfiguration('scanback').get<string>('path', ''),
          extensionPath: context.extensionPath,
          searchPath: process.env.PATH,
        }),
      ),
      {
        isCaseSensitive: true,
        isReadonly: new vscode.MarkdownString('The text recorded in the trace: edit the program\'s own files, then record again.'),
      },
    ),
    vscode.window.registerWebviewViewProvider(TimelineViewProvider.viewType, timeline, {
      webviewOptions: { retainContextWhenHidden: false },
    }),
    vscode.debug.onDidStartDebugSession((session) => {
      if (session.type !== debugType) return;
      problems.clear(); // it compiled
      void vscode.commands.executeCommand('setContext', 'scanback.everStarted', true);
      timeline.sessionStarted(session);
      updateContext();
    }),
    vscode.debug.onDidTerminateDebugSession((session) => {
      timeline.sessionEnded(session);
      where.clear(session);
      writer.clear();
      updateContext();
    }),
    vscode.debug.onDidChangeActiveDebugSession(() => updateContext()),
    // Also at every stop: a session that has just started may not be the active one yet when its
    // start is announced (seen end to end: Compare With Recording… missing from the palette of a
    // replay opened right after another session had ended).
    vscode.debug.onDidChangeActiveStackItem(() => updateContext()),
    vscode.workspace.onDidSaveTextDocument((document) => {
      const session = activeScanbackSession();
      if (shouldReloadOnSave(document, session)) void reloadRuntime(session);
    }),
    vscode.commands.registerCommand('scanback.reloadRuntime', () => reloadRuntime()),
    vscode.commands.registerCommand('scanback.openTrace', () => openTrace()),
    vscode.commands.registerCommand('scanback.attach', () => attachToRuntime()),
    vscode.commands.registerCommand('scanback.goToCycle', (position?: unknown) => goToCycle(position)),
    vscode.commands.registerCommand('scanback.stepBackInto', () => stepBack('in')),
    vscode.commands.registerCommand('scanback.stepBackOut', () => stepBack('out')),
    vscode.commands.registerCommand('scanback.addToTimeline', (context?: unknown) => addToScanTimeline(timeline, context)),
    vscode.commands.registerCommand('scanback.goToLive', () => goToLive(activeScanbackSession())),
    vscode.commands.registerCommand('scanback.checkProject', () => checkProject(context.extensionPath, problems)),
    vscode.commands.registerCommand('scanback.compareWithRecording', () => compareWithRecording(activeScanbackSession(), timeline)),
    vscode.commands.registerCommand('scanback.rerun', () =>
      rerunWithOpenProgram(
        activeScanbackSession(),
        resolveScanbackBinary({
          configuredPath: vscode.workspace.getConfiguration('scanback').get<string>('path', ''),
          extensionPath: context.extensionPath,
          searchPath: process.env.PATH,
        }),
        timeline,
      ),
    ),
  );
  updateContext();
  activateExplain(context);
  activateForcing(context);

  // The language server for .st files (scanback lsp), unless scanback.languageServer.enabled is off.
  languageClient = new ScanbackLanguageClient(context.extensionPath);
  context.subscriptions.push(languageClient);
  void languageClient.start();
}

let languageClient: ScanbackLanguageClient | undefined;

/** What the tracker reads of the messages the adapter sends. */
interface TrackedMessage {
  type?: string;
  event?: string;
  command?: string;
  success?: boolean;
  body?: {
    reason?: string;
    description?: string;
    capabilities?: { supportsStepBack?: boolean };
    variables?: { value?: string; presentationHint?: { attributes?: string[] } }[];
  };
}

async function showStartFailure(failure: ReturnType<typeof takeOverStartFailure>): Promise<void> {
  const buttons = [...(failure.showProblems ? ['Show Problems'] : []), ...(failure.openLaunchJson ? ['Open launch.json'] : [])];
  const chosen = await vscode.window.showErrorMessage(failure.text, ...buttons);
  if (chosen === 'Show Problems') await vscode.commands.executeCommand('workbench.actions.view.problems');
  else if (chosen === 'Open launch.json') await vscode.commands.executeCommand('workbench.action.debug.configure');
}

/**
 * Check Project: compiles the .st files F5 would debug (the active file's folder, else the
 * workspace folder's) with `scanback check`, puts every error and warning into Problems and says
 * how many there are.
 */
export async function checkProject(extensionPath: string, problems: BuildProblems): Promise<number | undefined> {
  const active = vscode.window.activeTextEditor?.document;
  const activeFile = active && active.uri.scheme === 'file' && active.uri.fsPath.toLowerCase().endsWith('.st') ? active.uri.fsPath : undefined;
  const files = projectFiles(activeFile, vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
  if (files.length === 0) {
    void vscode.window.showInformationMessage('scanback: Check Project found no .st file: open one of the project.');
    return undefined;
  }
  await vscode.workspace.saveAll(false);
  let binary: string;
  try {
    binary = resolveScanbackBinary({
      configuredPath: vscode.workspace.getConfiguration('scanback').get<string>('path', ''),
      extensionPath,
      searchPath: process.env.PATH,
    });
  } catch (error) {
    if (!(error instanceof BinaryNotFoundError)) throw error;
    void vscode.window.showErrorMessage(`scanback: ${error.message}`);
    return undefined;
  }
  try {
    const list = await runCheck(binary, files);
    problems.set(list);
    const folder = path.basename(path.dirname(files[0]));
    if (list.length === 0) {
      void vscode.window.showInformationMessage(`scanback: ${folder}: ${files.length} files compile without errors or warnings.`);
    } else {
      const chosen = await vscode.window.showWarningMessage(`scanback: ${folder}: ${countText(list)} in ${files.length} files; see Problems.`, 'Show Problems');
      if (chosen === 'Show Problems') await vscode.commands.executeCommand('workbench.actions.view.problems');
    }
    return list.length;
  } catch (error) {
    void vscode.window.showErrorMessage(`scanback: Check Project failed: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/** The bundled `scanback` on the integrated terminal's PATH, so that what the docs say to type works
 *  in VS Code's terminal after installing the .vsix. */
function putBundledScanbackOnTerminalPath(context: vscode.ExtensionContext) {
  const bundled = bundledBinaryPath(context.extensionPath);
  const collection = context.environmentVariableCollection;
  collection.description = 'Puts the scanback bundled with the extension on the PATH';
  if (isExecutableFile(bundled)) collection.prepend('PATH', path.dirname(bundled) + path.delimiter);
  else collection.clear();
}

export function deactivate(): Thenable<void> | undefined {
  return languageClient?.stop();
}
