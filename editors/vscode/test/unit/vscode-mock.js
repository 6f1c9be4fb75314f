// A small stand-in for the `vscode` module: just what the extension's logic uses, with every call
// recorded so tests can assert on what the extension asked VS Code to do.
'use strict';
const path = require('node:path');
const Module = require('node:module');

class EventEmitter {
  constructor() {
    this.listeners = [];
    this.event = (listener) => {
      this.listeners.push(listener);
      return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
    };
  }
  fire(value) {
    for (const l of this.listeners) l(value);
  }
}

const Uri = {
  file: (p) => ({ scheme: 'file', fsPath: p, path: p, toString: () => `file://${p}` }),
  parse: (text) => Uri.file(text.replace(/^file:\/\//, '')),
  joinPath: (base, ...parts) => Uri.file(path.join(base.fsPath, ...parts)),
};

let state;
let calls;
let events;
function reset() {
  state = {
    settings: {},
    activeTextEditor: undefined,
    activeDebugSession: undefined,
    activeStackItem: undefined,
    inputBoxAnswer: undefined,
    openDialogAnswer: undefined,
    // quickPickAnswer(items, options) picks; undefined: the pick is cancelled.
    quickPickAnswer: undefined,
    files: [],
    workspaceFolders: [],
  };
  calls = { info: [], error: [], warning: [], inputBox: [], openDialog: [], quickPick: [], startDebugging: [], setContext: [], registered: {}, statusBarItems: [], diagnosticCollections: [], decorations: [], console: [] };
  events = {
    didSave: new EventEmitter(),
    didChangeActiveTextEditor: new EventEmitter(),
    didChangeTextDocument: new EventEmitter(),
    didChangeConfiguration: new EventEmitter(),
    didStartSession: new EventEmitter(),
    didTerminateSession: new EventEmitter(),
    didChangeActiveSession: new EventEmitter(),
    didChangeActiveStackItem: new EventEmitter(),
    didChangeVisibleTextEditors: new EventEmitter(),
  };
}
reset();

const disposable = { dispose() {} };
const register = (kind) => (id, value) => {
  calls.registered[kind] = calls.registered[kind] ?? new Map();
  calls.registered[kind].set(id, value);
  return disposable;
};

const commands = new Map();
const vscode = {
  Uri,
  EventEmitter,
  ProgressLocation: { Notification: 15 },
  RelativePattern: class {
    constructor(base, pattern) {
      Object.assign(this, { base, pattern });
    }
  },
  Disposable: class {
    constructor(fn) {
      this.dispose = fn;
    }
  },
  MarkdownString: class {
    constructor(value) {
      this.value = value;
    }
  },
  FileType: { File: 1, Directory: 2 },
  FilePermission: { Readonly: 1 },
  FileSystemError: Object.assign(class extends Error {}, {
    FileNotFound: (what) => Object.assign(new Error(String(what)), { code: 'FileNotFound' }),
    FileNotADirectory: (what) => Object.assign(new Error(String(what)), { code: 'FileNotADirectory' }),
    NoPermissions: (what) => Object.assign(new Error(String(what)), { code: 'NoPermissions' }),
  }),
  DebugAdapterExecutable: class {
    constructor(command, args, options) {
      Object.assign(this, { command, args, options });
    }
  },
  window: {
    get activeTextEditor() {
      return state.activeTextEditor;
    },
    onDidChangeActiveTextEditor: (l) => events.didChangeActiveTextEditor.event(l),
    showInformationMessage: (message) => (calls.info.push(message), Promise.resolve(undefined)),
    showErrorMessage: (message) => (calls.error.push(message), Promise.resolve(undefined)),
    showWarningMessage: (message) => (calls.warning.push(message), Promise.resolve(undefined)),
    // inputBoxAnswer answers every input box; an array answers one box each, in order.
    showInputBox: (options) => (
      calls.inputBox.push(options),
      Promise.resolve(Array.isArray(state.inputBoxAnswer) ? state.inputBoxAnswer.shift() : state.inputBoxAnswer)
    ),
    showOpenDialog: (options) => (calls.openDialog.push(options), Promise.resolve(state.openDialogAnswer)),
    showQuickPick: (items, options) => (
      calls.quickPick.push({ items, options }), Promise.resolve(state.quickPickAnswer?.(items, options))
    ),
    withProgress: (options, task) => task({ report() {} }),
    registerWebviewViewProvider: register('webviewViewProvider'),
    createStatusBarItem: (id) => {
      const item = { id, text: '', tooltip: undefined, command: undefined, visible: false, show() { this.visible = true; }, hide() { this.visible = false; }, dispose() {} };
      calls.statusBarItems.push(item);
      return item;
    },
    // issue 33 (src/explain): the Why? tree, flow decorations, the list of logged positions.
    createTreeView: (id, options) => (register('treeView')(id, options.treeDataProvider), disposable),
    createTextEditorDecorationType: (options) => ({ options, dispose() {} }),
    visibleTextEditors: [],
    onDidChangeVisibleTextEditors: (l) => events.didChangeVisibleTextEditors.event(l),
  },
  languages: {
    registerInlineValuesProvider: (selector, provider) => (register('inlineValuesProvider')(selector.language, provider), disposable),
    createDiagnosticCollection: (name) => {
      const entries = new Map();
      const collection = {
        name,
        entries,
        set: (uri, list) => entries.set(uri.toString(), list),
        delete: (uri) => entries.delete(uri.toString()),
        clear: () => entries.clear(),
        dispose() {},
      };
      calls.diagnosticCollections.push(collection);
      return collection;
    },
    getDiagnostics: () => [],
  },
  Range: class {
    constructor(startLine, startCharacter, endLine, endCharacter) {
      this.start = { line: startLine, character: startCharacter };
      this.end = { line: endLine, character: endCharacter };
    }
  },
  Diagnostic: class {
    constructor(range, message, severity) {
      Object.assign(this, { range, message, severity });
    }
  },
  DiagnosticSeverity: { Error: 0, Warning: 1 },
  ThemeColor: class {
    constructor(id) {
      this.id = id;
    }
  },
  StatusBarAlignment: { Left: 1, Right: 2 },
  OverviewRulerLane: { Left: 1 },
  workspace: {
    getConfiguration: (section) => ({
      get: (key, fallback) => {
        const value = state.settings[`${section}.${key}`];
        return value === undefined ? fallback : value;
      },
    }),
    onDidSaveTextDocument: (l) => events.didSave.event(l),
    onDidChangeTextDocument: (l) => events.didChangeTextDocument.event(l),
    onDidChangeConfiguration: (l) => events.didChangeConfiguration.event(l),
    getWorkspaceFolder: () => state.workspaceFolders[0],
    textDocuments: [],
    registerFileSystemProvider: (scheme, provider, options) => (register('fileSystemProvider')(scheme, { provider, options }), disposable),
    findFiles: () => Promise.resolve(state.files.map((f) => Uri.file(f))),
    asRelativePath: (uri) => {
      const folder = state.workspaceFolders[0];
      return folder ? path.relative(folder.uri.fsPath, uri.fsPath) : uri.fsPath;
    },
    get workspaceFolders() {
      return state.workspaceFolders;
    },
  },
  debug: {
    get activeDebugSession() {
      return state.activeDebugSession;
    },
    get activeStackItem() {
      return state.activeStackItem;
    },
    startDebugging: (folder, config) => (calls.startDebugging.push({ folder, config }), Promise.resolve(true)),
    registerDebugConfigurationProvider: register('configurationProvider'),
    registerDebugAdapterDescriptorFactory: register('adapterFactory'),
    registerDebugAdapterTrackerFactory: register('trackerFactory'),
    onDidStartDebugSession: (l) => events.didStartSession.event(l),
    onDidTerminateDebugSession: (l) => events.didTerminateSession.event(l),
    onDidChangeActiveDebugSession: (l) => events.didChangeActiveSession.event(l),
    onDidChangeActiveStackItem: (l) => events.didChangeActiveStackItem.event(l),
    activeDebugConsole: { appendLine: (line) => calls.console.push(line) },
  },
  TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
  TreeItem: class {
    constructor(label, collapsibleState) {
      Object.assign(this, { label, collapsibleState });
    }
  },
  Range: class {
    constructor(startLine, startCharacter, endLine, endCharacter) {
      this.start = { line: startLine, character: startCharacter };
      this.end = { line: endLine, character: endCharacter };
    }
  },
  InlineValueText: class {
    constructor(range, text) {
      Object.assign(this, { range, text });
    }
  },
  ThemeColor: class {
    constructor(id) {
      this.id = id;
    }
  },
  OverviewRulerLane: { Left: 1 },
  commands: {
    registerCommand: (id, fn) => (commands.set(id, fn), disposable),
    executeCommand: (id, ...args) => {
      if (id === 'setContext') {
        calls.setContext.push(args);
        return Promise.resolve();
      }
      const fn = commands.get(id);
      if (!fn) return Promise.reject(new Error(`command '${id}' not found`));
      return Promise.resolve(fn(...args));
    },
  },
};

/** A debug session whose customRequest records the request and answers with `respond`. */
function fakeSession(configuration, respond = () => ({})) {
  return {
    id: `session-${Math.random()}`,
    type: 'scanback',
    name: configuration.name ?? 'test',
    configuration,
    requests: [],
    async customRequest(command, args) {
      this.requests.push({ command, args });
      return respond(command, args);
    },
  };
}

function fakeEditor(file, languageId = 'st') {
  return { document: { uri: Uri.file(file), languageId } };
}

vscode.__mock = {
  reset,
  commands,
  fakeSession,
  fakeEditor,
  get state() {
    return state;
  },
  get calls() {
    return calls;
  },
  get events() {
    return events;
  },
};

// require('vscode') anywhere in the code under test gets this module.
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'vscode') return __filename;
  return resolve.call(this, request, ...rest);
};

module.exports = vscode;
