import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { resolveAttach } from './attach';
import { traceSourceArguments } from './traceSources';

export const debugType = 'scanback';

/** The configuration F5 uses on an open .st file when there is no launch.json: all the .st files of
 *  its folder, run live from that folder. */
export function configurationForFile(file: string, exists: (file: string) => boolean = fs.existsSync): vscode.DebugConfiguration {
  const folder = path.dirname(file);
  const config: vscode.DebugConfiguration = {
    type: debugType,
    request: 'launch',
    name: `Debug ${path.basename(folder)} (ST)`,
    program: [path.join(folder, '*.st')],
    cwd: folder,
  };
  // The folder's stimulus, as `scanback run --inputs` would take it: a plant without its inputs sits
  // in whatever state no input puts it in.
  const stimulus = path.join(folder, stimulusFile);
  if (exists(stimulus)) config.inputs = stimulus;
  return config;
}

/** The stimulus F5 without a launch.json applies when the folder has one. */
export const stimulusFile = 'stimulus.csv';

/** Whether `config` is one of the launch.json configurations of `folder` (by name and type). */
export function isFromLaunchJson(config: vscode.DebugConfiguration, folder: vscode.WorkspaceFolder | undefined): boolean {
  const configurations = vscode.workspace.getConfiguration('launch', folder?.uri).get<unknown[]>('configurations', []);
  return (configurations ?? []).some(
    (c) => typeof c === 'object' && c !== null && (c as { name?: unknown }).name === config.name && (c as { type?: unknown }).type === config.type,
  );
}

function activeStFile(): string | undefined {
  const document = vscode.window.activeTextEditor?.document;
  if (!document || document.uri.scheme !== 'file') return undefined;
  if (document.languageId !== 'st' && path.extname(document.uri.fsPath).toLowerCase() !== '.st') return undefined;
  return document.uri.fsPath;
}

export class ScanbackConfigurationProvider implements vscode.DebugConfigurationProvider {
  resolveDebugConfiguration(
    folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): vscode.ProviderResult<vscode.DebugConfiguration> {
    const empty = !config.type && !config.request && !config.name;
    if (empty) {
      const file = activeStFile();
      if (!file) {
        void vscode.window.showInformationMessage(
          'scanback: open a Structured Text (.st) file to debug its folder, or add a scanback configuration to launch.json.',
        );
        return undefined; // cancels the launch
      }
      return configurationForFile(file);
    }
    const resolved: vscode.DebugConfiguration = { ...config };
    if (resolved.request === 'launch' && resolved.program === undefined && resolved.trace === undefined) {
      const file = activeStFile();
      if (!file) {
        void vscode.window.showErrorMessage(
          `scanback: the launch configuration "${config.name}" has neither "program" nor "trace", and no .st file is open to take them from.`,
        );
        return undefined;
      }
      Object.assign(resolved, { ...configurationForFile(file), name: config.name ?? `Debug (ST)` });
    }
    if (resolved.cwd === undefined && folder) resolved.cwd = folder.uri.fsPath;
    if (resolved.request === 'launch' && resolved.trace !== undefined && resolved.sourceScheme === undefined) {
      // A replayed trace's sources: the workspace's files with the recorded text, else the trace's
      // own text under the extension's scheme (traceSources.ts).
      const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
      Object.assign(resolved, traceSourceArguments(resolved.sourceFolders ?? folders));
    }
    return resolved;
  }

  /** Attach is checked once its variables are substituted: the endpoint and the token file may be
   *  written with ${workspaceFolder} or ${input:…}. */
  resolveDebugConfigurationWithSubstitutedVariables(
    folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): vscode.ProviderResult<vscode.DebugConfiguration> {
    if (config.request !== 'attach') return config;
    const attach = resolveAttach(config, folder?.uri.fsPath);
    if ('error' in attach) {
      void vscode.window.showErrorMessage(`scanback: ${attach.error}`);
      return undefined; // cancels the attach
    }
    return attach.config as vscode.DebugConfiguration;
  }
}
