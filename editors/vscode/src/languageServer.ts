import * as vscode from 'vscode';
import { resolveScanbackBinary } from './binary';

/** The setting that turns the language server off (on by default). */
export const languageServerSetting = 'languageServer.enabled';

/** How the extension starts `scanback lsp`: the same binary as the debugger (binary.ts), on stdio. */
export interface LanguageServerCommand {
  command: string;
  args: string[];
}

/**
 * The language server to start for `.st` files, or undefined when the `scanback.languageServer.enabled`
 * setting is off. Throws BinaryNotFoundError (binary.ts) when there is no scanback to start.
 */
export function languageServerCommand(extensionPath: string): LanguageServerCommand | undefined {
  const settings = vscode.workspace.getConfiguration('scanback');
  if (!settings.get<boolean>(languageServerSetting, true)) return undefined;
  const command = resolveScanbackBinary({
    configuredPath: settings.get<string>('path', ''),
    extensionPath,
    searchPath: process.env.PATH,
  });
  return { command, args: ['lsp'] };
}

/** The documents the server serves: Structured Text files on disk, and unsaved ones. */
export const languageServerDocuments = [
  { scheme: 'file', language: 'st' },
  { scheme: 'untitled', language: 'st' },
];
