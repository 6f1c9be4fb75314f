import * as vscode from 'vscode';
import { resolveScanbackBinary } from './binary';

/** Starts `scanback dap` on stdin/stdout for each session. The binary is resolved per session, so a
 *  changed scanback.path applies to the next session without a reload of the window. */
export class ScanbackAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  constructor(private readonly extensionPath: string) {}

  createDebugAdapterDescriptor(): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
    const binary = resolveScanbackBinary({
      configuredPath: vscode.workspace.getConfiguration('scanback').get<string>('path', ''),
      extensionPath: this.extensionPath,
      searchPath: process.env.PATH,
    });
    return new vscode.DebugAdapterExecutable(binary, ['dap']);
  }
}
