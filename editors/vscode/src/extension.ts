import * as vscode from 'vscode';
import { ScanbackAdapterFactory } from './adapter';
import {
  activeScanbackSession,
  goToCycle,
  isReloadable,
  openTrace,
  reloadRuntime,
  shouldReloadOnSave,
  stepBack,
} from './commands';
import { debugType, ScanbackConfigurationProvider } from './configuration';
import { TimelineViewProvider } from './timeline/provider';

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
        onDidSendMessage: (message: { type?: string; event?: string }) => {
          if (message.type === 'event' && message.event === 'stopped') void timeline.stopped(session);
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
    vscode.debug.onDidChangeActiveDebugSession((session) => {
      timeline.activeSessionChanged(session);
      updateContext();
    }),
    vscode.workspace.onDidSaveTextDocument((document) => {
      const session = activeScanbackSession();
      if (shouldReloadOnSave(document, session)) void reloadRuntime(session);
    }),
    vscode.commands.registerCommand('scanback.reloadRuntime', () => reloadRuntime()),
    vscode.commands.registerCommand('scanback.openTrace', () => openTrace()),
    vscode.commands.registerCommand('scanback.goToCycle', (position?: unknown) => goToCycle(position)),
    vscode.commands.registerCommand('scanback.stepBackInto', () => stepBack('in')),
    vscode.commands.registerCommand('scanback.stepBackOut', () => stepBack('out')),
  );
  updateContext();
}

export function deactivate(): void {}
