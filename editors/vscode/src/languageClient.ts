import * as vscode from 'vscode';
// Types only: the module itself is loaded when the server starts (start()), so that the rest of the
// extension loads without it (its unit tests run against a mock of `vscode` it cannot use).
import type { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import { BinaryNotFoundError } from './binary';
import { languageServerCommand, languageServerDocuments, languageServerSetting } from './languageServer';

/**
 * Runs `scanback lsp` for `.st` files through vscode-languageclient: errors in Problems and as
 * squiggles while typing, outline, go to definition, references, hover, completion, signature help,
 * rename (docs/lsp.md). Started at activation, restarted when scanback.path or
 * scanback.languageServer.enabled changes.
 */
export class ScanbackLanguageClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly listener: vscode.Disposable;

  constructor(private readonly extensionPath: string) {
    this.listener = vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`scanback.${languageServerSetting}`) || e.affectsConfiguration('scanback.path'))
        void this.restart();
    });
  }

  async start(): Promise<void> {
    let command;
    try {
      command = languageServerCommand(this.extensionPath);
    } catch (error) {
      if (error instanceof BinaryNotFoundError)
        void vscode.window.showWarningMessage?.(`scanback language server not started: ${error.message}`);
      else throw error;
      return;
    }
    if (!command) return;
    try {
      const { LanguageClient: Client } = await import('vscode-languageclient/node');
      // No `transport`: with TransportKind.stdio the client would add `--stdio` to the arguments;
      // without one it talks over stdin/stdout all the same.
      const server: ServerOptions = { command: command.command, args: command.args };
      const options: LanguageClientOptions = {
        documentSelector: languageServerDocuments,
        diagnosticCollectionName: 'scanback',
      };
      this.client = new Client('scanback', 'scanback (Structured Text)', server, options);
      await this.client.start();
    } catch (error) {
      this.client = undefined;
      const message = error instanceof Error ? error.message : String(error);
      void vscode.window.showWarningMessage?.(`scanback language server not started: ${message}`);
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) await client.stop();
  }

  dispose(): void {
    this.listener.dispose();
    void this.stop();
  }
}
