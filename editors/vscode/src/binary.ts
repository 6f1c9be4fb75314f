import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/** Where to look for the scanback executable, and how to test a candidate (tests replace it). */
export interface BinaryLookup {
  /** The `scanback.path` setting ("" when unset). */
  configuredPath: string;
  /** The extension's install folder: the .vsix carries the binary at bin/scanback. */
  extensionPath: string;
  /** The PATH environment variable. */
  searchPath: string | undefined;
  isExecutableFile?: (file: string) => boolean;
}

export class BinaryNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BinaryNotFoundError';
  }
}

export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function bundledBinaryPath(extensionPath: string): string {
  return path.join(extensionPath, 'bin', process.platform === 'win32' ? 'scanback.exe' : 'scanback');
}

/**
 * The scanback executable to start the adapter with: the `scanback.path` setting when it is set
 * (and then only it: a wrong setting is an error, never silently replaced by another binary), else
 * the binary bundled in the .vsix, else `scanback` on the PATH. Throws BinaryNotFoundError with
 * what to do when there is none.
 */
export function resolveScanbackBinary(lookup: BinaryLookup): string {
  const executable = lookup.isExecutableFile ?? isExecutableFile;
  const configured = lookup.configuredPath.trim();
  if (configured !== '') {
    const expanded = configured.startsWith('~/') ? path.join(os.homedir(), configured.slice(2)) : configured;
    if (!path.isAbsolute(expanded))
      throw new BinaryNotFoundError(
        `The scanback.path setting must be an absolute path to the scanback executable, not "${configured}".`,
      );
    if (!executable(expanded))
      throw new BinaryNotFoundError(
        `The scanback.path setting names "${configured}", which is not an executable file. ` +
          'Fix the setting, or clear it to use the scanback bundled with the extension.',
      );
    return expanded;
  }
  const bundled = bundledBinaryPath(lookup.extensionPath);
  if (executable(bundled)) return bundled;
  for (const dir of (lookup.searchPath ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, 'scanback');
    if (executable(candidate)) return candidate;
  }
  throw new BinaryNotFoundError(
    `No scanback executable found: the extension carries none at ${bundled} (install the linux-x64 ` +
      '.vsix built by scripts/package-vscode.sh) and there is no scanback on the PATH. ' +
      'Set scanback.path to a scanback executable.',
  );
}
