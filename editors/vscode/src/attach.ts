import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/** The size of sockaddr_un's sun_path on Linux: a longer socket path cannot be connected to. */
const unixPathLimit = 108;

/**
 * What is wrong with a control endpoint, as `scanback run --control` and the adapter's `attach`
 * read it (control/endpoint.cpp), or undefined when it is well formed. Checked in the extension so
 * that a typo is reported with what was expected before an adapter is started.
 */
export function endpointProblem(endpoint: string): string | undefined {
  const expected = 'expected unix:///absolute/path.sock or tcp://127.0.0.1:PORT (the runtime\'s --control endpoint)';
  if (endpoint.startsWith('unix://')) {
    const socket = endpoint.slice('unix://'.length);
    if (!socket.startsWith('/'))
      return `"${endpoint}" is not a unix socket endpoint with an absolute path: write three slashes, unix:///path/to/socket.sock`;
    if (Buffer.byteLength(socket) >= unixPathLimit)
      return `the socket path of "${endpoint}" is longer than a unix socket path can be (${unixPathLimit - 1} bytes)`;
    return undefined;
  }
  if (endpoint.startsWith('tcp://')) {
    const match = /^tcp:\/\/([^:]*):(.*)$/.exec(endpoint);
    if (!match) return `"${endpoint}" has no port: ${expected}`;
    const [, host, port] = match;
    if (!isIpv4(host)) return `the host of "${endpoint}" must be an IPv4 address such as 127.0.0.1`;
    if (!/^\d+$/.test(port) || Number(port) > 65535) return `the port of "${endpoint}" must be a number from 1 to 65535`;
    if (Number(port) === 0)
      return `"${endpoint}": port 0 asks the runtime for a free port; attach to the port it printed ("control endpoint tcp://…")`;
    return undefined;
  }
  return `"${endpoint}": ${expected}`;
}

function isIpv4(host: string): boolean {
  const parts = host.split('.');
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

/**
 * The token in `file`: its first line without the white space around it, as the runtime reads its
 * --auth-token-file (dap/transport/auth_token.h), so one file serves both. An error message when the
 * file cannot be read or holds no token.
 */
export function readAuthTokenFile(file: string): { token: string } | { error: string } {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'there is no such file' : (error as Error).message;
    return { error: `cannot read the authTokenFile ${file}: ${reason}` };
  }
  const token = text.split('\n', 1)[0].trim();
  if (token === '') return { error: `the authTokenFile ${file} holds no token (its first line is empty)` };
  return { token };
}

/** An attach configuration as VS Code has it after substituting its variables. */
export interface AttachConfiguration {
  name?: string;
  endpoint?: unknown;
  authToken?: unknown;
  authTokenFile?: unknown;
  cwd?: unknown;
  [key: string]: unknown;
}

/**
 * The attach arguments the adapter gets (`endpoint`, `authToken`, `cwd`), from a configuration
 * whose variables are substituted: the endpoint checked, `authTokenFile` (relative to `cwd`, else
 * the workspace folder) read into `authToken`, and an empty `authToken` (the attribute's default)
 * left out. A message for the user instead when the configuration cannot attach.
 */
export function resolveAttach(
  config: AttachConfiguration,
  folderPath: string | undefined,
): { config: AttachConfiguration } | { error: string } {
  const name = `the attach configuration "${config.name ?? 'attach'}"`;
  if (typeof config.endpoint !== 'string' || config.endpoint === '')
    return {
      error: `${name} needs an "endpoint" (unix:///path.sock or tcp://127.0.0.1:PORT: the runtime's --control endpoint).`,
    };
  const problem = endpointProblem(config.endpoint);
  if (problem) return { error: `${name}: "endpoint" ${problem}.` };
  const resolved: AttachConfiguration = { ...config };
  if (resolved.authToken === '') delete resolved.authToken;
  if (resolved.authToken !== undefined && typeof resolved.authToken !== 'string')
    return { error: `${name}: "authToken" must be a string (the first line of the runtime's --auth-token-file).` };
  if (resolved.authTokenFile === '') delete resolved.authTokenFile;
  if (resolved.authTokenFile !== undefined) {
    if (typeof resolved.authTokenFile !== 'string') return { error: `${name}: "authTokenFile" must be a path.` };
    if (resolved.authToken !== undefined)
      return { error: `${name} has both "authToken" and "authTokenFile": give the token one way.` };
    const base = typeof resolved.cwd === 'string' ? resolved.cwd : folderPath;
    const file = expandPath(resolved.authTokenFile, base);
    const read = readAuthTokenFile(file);
    if ('error' in read) return { error: `${name}: ${read.error}.` };
    resolved.authToken = read.token;
    delete resolved.authTokenFile;
  }
  return { config: resolved };
}

function expandPath(file: string, base: string | undefined): string {
  const expanded = file === '~' || file.startsWith('~/') ? path.join(os.homedir(), file.slice(1)) : file;
  if (path.isAbsolute(expanded) || base === undefined) return expanded;
  return path.resolve(base, expanded);
}
