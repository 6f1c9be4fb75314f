// ScanbackClient: @vscode/debugadapter-testsupport's DebugClient running `scanback dap` as a
// separate process (stdin/stdout), extended to see every message the adapter sends.
//
// How messages are captured: DebugClient (ProtocolClient) parses the Content-Length framed stream
// and hands each message body, in the order it arrived, to its `dispatch(body)` method, which then
// emits events or resolves the pending request's promise. ScanbackClient overrides `dispatch`: it
// parses the body, records the message in `messages` (wire order), checks it against the official
// schema (lib/schema.js) and the `seq` rule, and only then lets DebugClient dispatch it. The
// requests the tests send are recorded (and validated) by overriding `doSend`.
//
// The helpers below wait on the recorded log, not on EventEmitter listeners, so an event that
// arrived before a test started waiting for it is not lost, and "A came before B" can be asserted
// by comparing positions in `messages`.
'use strict';

const assert = require('assert');
const path = require('path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');
const { validate } = require('./schema');

const E2E_DIR = path.resolve(__dirname, '..');
const REPO = path.resolve(E2E_DIR, '..', '..', '..');
const BINARY = path.resolve(E2E_DIR, process.env.SCANBACK_BINARY || path.join('..', '..', '..', 'build', 'scanback'));

const DEFAULT_TIMEOUT = 5000;

class ScanbackClient extends DebugClient {
  constructor() {
    // DebugClient.start() spawns `runtime [executable]`: here `<binary> dap`.
    super(BINARY, 'dap', 'scanback', { cwd: REPO });
    this.defaultTimeout = DEFAULT_TIMEOUT;
    this.messages = [];       // every message from the adapter, in wire order
    this.sent = [];           // every request sent, in order
    this.schemaErrors = [];   // "message: problem" for each adapter message the schema rejects
    this.requestSchemaErrors = [];
    this.seqErrors = [];      // adapter messages whose seq is not the previous one's + 1
    this.stderr = '';
    this._waiters = [];
    this._lastSeq = 0;
    this.exit = null;         // resolves to { code, signal } when the adapter process ends
  }

  async start() {
    await super.start();
    const proc = this._adapterProcess;
    proc.stderr.on('data', (d) => { this.stderr += d.toString(); });
    proc.stdin.on('error', () => {});   // a write after the adapter died: the request fails below
    this.exitStatus = null;
    // 'close': the process ended and its output was read to the end.
    this.exit = new Promise((resolve) => proc.on('close', (code, signal) => {
      this.exitStatus = { code, signal };
      this._failEverythingPending();
      resolve(this.exitStatus);
    }));
  }

  // The adapter is gone: whatever still waits for it fails now rather than at its timeout.
  _failEverythingPending() {
    const why = `the adapter exited (code ${this.exitStatus.code}, signal ${this.exitStatus.signal})` +
      (this.stderr ? `; its stderr: ${this.stderr.trim().slice(0, 500)}` : '');
    for (const w of [...this._waiters]) w.fail(new Error(`${why}, while waiting for ${w.what}`));
    for (const [seq, callback] of [...this.pendingRequests]) {
      this.pendingRequests.delete(seq);
      callback({ type: 'response', seq: 0, request_seq: seq, success: false, command: '', message: `${why}, before answering` });
    }
  }

  // ---- capture ----------------------------------------------------------------------------------

  dispatch(body) {
    let message;
    try {
      message = JSON.parse(body);
    } catch (e) {
      this.schemaErrors.push(`a message that is not JSON (${e.message}): ${body.slice(0, 200)}`);
      return;
    }
    message.__index = this.messages.length;
    Object.defineProperty(message, '__index', { enumerable: false });
    this.messages.push(message);
    const problems = validate(message);
    for (const p of problems) this.schemaErrors.push(`${summary(message)}: ${p}`);
    if (message.seq !== this._lastSeq + 1)
      this.seqErrors.push(`${summary(message)} has seq ${message.seq} after seq ${this._lastSeq}`);
    this._lastSeq = message.seq;
    super.dispatch(body);
    for (const w of [...this._waiters]) w.check();
  }

  doSend(command, args, callback) {
    if (this.exitStatus) {
      callback({ type: 'response', seq: 0, request_seq: this.sequence++, success: false, command,
        message: `the adapter has exited (code ${this.exitStatus.code}); '${command}' was not sent` });
      return;
    }
    const request = { type: 'request', seq: this.sequence, command };
    if (args && Object.keys(args).length > 0) request.arguments = args;
    this.sent.push(request);
    if (!this._allowInvalidRequest)
      for (const p of validate(request)) this.requestSchemaErrors.push(`request ${command}: ${p}`);
    super.doSend(command, args, callback);
  }

  // The DAP: "The `seq` for the first message sent by a client or debug adapter is 1, and for each
  // subsequent message is 1 greater than the previous message sent by that actor." [] when the
  // adapter's messages carried 1, 2, 3, ... in the order they arrived.
  seqProblems() {
    return [...this.seqErrors];
  }

  // ---- requests ---------------------------------------------------------------------------------

  // Sends a request and resolves to its response, successful or not.
  request(command, args, { invalid = false } = {}) {
    return new Promise((resolve) => {
      this._allowInvalidRequest = invalid;
      try {
        this.doSend(command, args, resolve);
      } finally {
        this._allowInvalidRequest = false;
      }
    });
  }

  // Sends a request at once, without waiting for its response; returns its seq.
  post(command, args) {
    const seq = this.sequence;
    this.doSend(command, args, () => {});
    return seq;
  }

  // A request that must succeed: its response.
  async ok(command, args) {
    const r = await this.request(command, args);
    assert.strictEqual(r.success, true, `${command} failed: ${r.message}`);
    return r;
  }

  // A request that must fail: its (error) response.
  async fails(command, args, options) {
    const r = await this.request(command, args, options);
    assert.strictEqual(r.success, false, `${command} should have failed: ${JSON.stringify(r.body)}`);
    assert.ok(typeof r.message === 'string' && r.message.length > 0, `${command}: an error response needs a message`);
    return r;
  }

  // ---- the recorded log -------------------------------------------------------------------------

  mark() { return this.messages.length; }

  indexOfResponse(requestSeq) {
    return this.messages.findIndex((m) => m.type === 'response' && m.request_seq === requestSeq);
  }

  indexOfEvent(name, from = 0) {
    for (let i = from; i < this.messages.length; ++i)
      if (this.messages[i].type === 'event' && this.messages[i].event === name) return i;
    return -1;
  }

  eventsSince(name, from = 0) {
    return this.messages.slice(from).filter((m) => m.type === 'event' && m.event === name);
  }

  // Resolves to the first message at or after index `from` that satisfies `predicate`.
  waitFor(predicate, { from = 0, timeout = this.defaultTimeout, what = 'a message' } = {}) {
    for (let i = from; i < this.messages.length; ++i)
      if (predicate(this.messages[i])) return Promise.resolve(this.messages[i]);
    return new Promise((resolve, reject) => {
      const waiter = {
        what,
        fail: (e) => {
          done();
          reject(e);
        },
        check: () => {
          for (let i = from; i < this.messages.length; ++i) {
            if (predicate(this.messages[i])) {
              done();
              resolve(this.messages[i]);
              return;
            }
          }
        },
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${what} within ${timeout} ms; received since #${from}: ` +
          this.messages.slice(from).map(summary).join(', ')));
      }, timeout);
      const done = () => {
        clearTimeout(timer);
        this._waiters = this._waiters.filter((w) => w !== waiter);
      };
      this._waiters.push(waiter);
    });
  }

  // The first `name` event at or after index `from`.
  event(name, from = 0, timeout) {
    return this.waitFor((m) => m.type === 'event' && m.event === name, { from, timeout, what: `'${name}' event` });
  }

  // Waits `ms` and asserts that no `name` event came at or after index `from`.
  async noEvent(name, from, ms) {
    await new Promise((r) => setTimeout(r, ms));
    const got = this.eventsSince(name, from);
    assert.deepStrictEqual(got.map(summary), [], `unexpected '${name}' event(s)`);
  }

  // ---- session helpers --------------------------------------------------------------------------

  // initialize.
  async init(initArgs) {
    const r = await this.initializeRequest(initArgs ||
      { adapterID: 'scanback', clientID: 'e2e', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
    if (r.body && r.body.supportsConfigurationDoneRequest) this._supportsConfigurationDoneRequest = true;
    return r;
  }

  // initialize, launch (which must succeed), then the initialized event, which the adapter sends
  // after the launch response (breakpoints resolve against the launched program): the client may
  // then configure (setBreakpoints, ..., configurationDone), as VS Code does.
  async startSession(launchArgs, initArgs) {
    await this.init(initArgs);
    const from = this.mark();
    const seq = this.post('launch', launchArgs);
    const initialized = await this.event('initialized', from);
    const response = this.messages[this.indexOfResponse(seq)];
    assert.ok(response, 'the launch response comes before the initialized event');
    assert.strictEqual(response.success, true, `launch failed: ${response.message}`);
    return response;
  }

  // Sends a request that resumes the target and waits for the `stopped` event it causes; asserts
  // that the response came first. Resolves to the stopped event.
  async resumeToStop(command, args, timeout) {
    const from = this.mark();
    const seq = this.post(command, args);
    let stopped;
    try {
      stopped = await this.event('stopped', from, timeout);
    } catch (e) {
      throw await this._diagnoseLostStop(e, command, args, seq);
    }
    const response = this.indexOfResponse(seq);
    assert.ok(response >= 0, `no response to ${command} before the stopped event`);
    assert.strictEqual(this.messages[response].success, true, `${command} failed: ${this.messages[response].message}`);
    assert.ok(response < stopped.__index,
      `the ${command} response (#${response}) must come before the stopped event (#${stopped.__index})`);
    return stopped;
  }

  // A resume was answered but no stop followed. If a pause does not stop the program either, its
  // thread has quit (as it once did when a resume came before the target's thread waited again,
  // see 'a resume that arrives the moment a stop is reported is never lost'): say so, so that such
  // a failure is not mistaken for a slow adapter.
  async _diagnoseLostStop(error, command, args, seq) {
    const response = this.messages[this.indexOfResponse(seq)];
    if (!response || !response.success || this.eventsSince('terminated').length) return error;
    const from = this.mark();
    const pause = await this.request('pause', { threadId: (args && args.threadId) || 1 });
    try {
      await this.event('stopped', from, 1000);
    } catch (_) {
      return new Error(`${error.message}\n  ... and a pause (${pause.success ? 'answered' : pause.message}) does not stop ` +
        `it either: the adapter's target thread no longer runs the program after '${command}'.`);
    }
    return error;
  }

  // configurationDone, then the first stop.
  async configureToStop(timeout) {
    return this.resumeToStop('configurationDone', undefined, timeout);
  }

  async frames(threadId = 1, extra = {}) {
    return (await this.stackTraceRequest({ threadId, ...extra })).body;
  }

  async topFrame(threadId = 1) {
    const body = await this.frames(threadId);
    assert.ok(body.stackFrames.length > 0, `thread ${threadId} has no frames`);
    return body.stackFrames[0];
  }

  async evaluate(expression, frameId = 1, context = 'watch') {
    const r = await this.request('evaluate', { expression, frameId, context });
    assert.strictEqual(r.success, true, `evaluate '${expression}' failed: ${r.message}`);
    return r.body.result;
  }

  async scopes(frameId = 1) {
    const body = (await this.scopesRequest({ frameId })).body;
    const byName = {};
    for (const s of body.scopes) byName[s.name] = s;
    return { list: body.scopes, byName };
  }

  async variables(variablesReference, extra = {}) {
    const list = (await this.variablesRequest({ variablesReference, ...extra })).body.variables;
    const byName = {};
    for (const v of list) byName[v.name] = v;
    return { list, byName };
  }

  // ---- replay sessions --------------------------------------------------------------------------

  // The scanback/timeline body (replay sessions): the recorded range, the position, the tasks.
  async timeline() {
    return (await this.ok('scanback/timeline', {})).body;
  }

  // The current position in history as 'CYCLE:STEP' (from scanback/timeline).
  async position() {
    const t = await this.timeline();
    return `${t.cycle}:${t.step}`;
  }

  // The text of every `output` event at or after index `from`.
  outputsSince(from = 0) {
    return this.eventsSince('output', from).map((o) => o.body.output);
  }

  // Ends the session (disconnect, then the process is killed if it is still there).
  async close() {
    if (this._adapterProcess && !this.exitStatus) {
      await Promise.race([this.stop(), new Promise((r) => setTimeout(r, 2000))]);
    }
    this.stopAdapter();
  }
}

function summary(m) {
  if (!m) return String(m);
  if (m.type === 'event') {
    const b = m.body || {};
    const extra = m.event === 'stopped' ? `(${b.reason}, thread ${b.threadId})`
      : m.event === 'output' ? `(${JSON.stringify(String(b.output).slice(0, 60))})`
        : m.event === 'exited' ? `(${b.exitCode})` : '';
    return `#${m.__index ?? '?'} event ${m.event}${extra}`;
  }
  if (m.type === 'response') return `#${m.__index ?? '?'} response ${m.command}#${m.request_seq} ${m.success ? 'ok' : `failed: ${m.message}`}`;
  return `${m.type} ${m.command || ''}`;
}

module.exports = { ScanbackClient, BINARY, REPO, E2E_DIR, summary };
