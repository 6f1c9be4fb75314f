import * as vscode from 'vscode';
import { ScanbackAdapterFactory } from './adapter';
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
import { debugType, ScanbackConfigurationProvider } from './configuration';
import { activateExplain } from './explain';
import { ScanbackLanguageClient } from './languageClient';
import { TimelineViewProvider } from './timeline/provider';

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
]);

export function activate(context: vscode.ExtensionContext): void {
  const timeline = new TimelineViewProvider(context.extensionUri);

  const updateContext = () => {
    const session = activeScanbackSession();
    void vscode.commands.executeCommand('setContext', 'scanback.reloadable', isReloadable(session));
  };

  context.subscriptions.push(
    timeline,
    vscode.debug.registerDebugConfigurationProvider(debugType, new ScanbackConfigurationProvider()),
    vscode.debug.registerDebugAdapterDescriptorFactory(debugType, new ScanbackAdapterFactory(context.extensionPath)),
    vscode.debug.registerDebugAdapterTrackerFactory(debugType, {
      createDebugAdapterTracker: (session) => ({
        onWillReceiveMessage: (message: { type?: string; command?: string }) => {
          if (message.type === 'request' && resumingRequests.has(message.command ?? '')) timeline.resumed(session);
        },
        onDidSendMessage: (message: { type?: string; event?: string; body?: { capabilities?: { supportsStepBack?: boolean } } }) => {
          if (message.type !== 'event') return;
          if (message.event === 'stopped') void timeline.stopped(session);
          else if (message.event === 'continued') timeline.resumed(session);
          else if (message.event === 'capabilities') timeline.capabilitiesChanged(session, message.body?.capabilities ?? {});
        },
      }),
    }),
    vscode.window.registerWebviewViewProvider(TimelineViewProvider.viewType, timeline, {
      webviewOptions: { retainContextWhenHidden: false },
    }),
    vscode.debug.onDidStartDebugSession((session) => {
      if (session.type !== debugType) return;
      void vscode.commands.executeCommand('setContext', 'scanback.everStarted', true);
      timeline.sessionStarted(session);
      updateContext();
    }),
    vscode.debug.onDidTerminateDebugSession((session) => {
      timeline.sessionEnded(session);
      updateContext();
    }),
    vscode.debug.onDidChangeActiveDebugSession(() => updateContext()),
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
  );
  updateContext();
  activateExplain(context);

  // The language server for .st files (scanback lsp), unless scanback.languageServer.enabled is off.
  languageClient = new ScanbackLanguageClient(context.extensionPath);
  context.subscriptions.push(languageClient);
  void languageClient.start();
}

let languageClient: ScanbackLanguageClient | undefined;

export function deactivate(): Thenable<void> | undefined {
  return languageClient?.stop();
}
