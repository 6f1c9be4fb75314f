// A minimal DAP client over a child process's stdio, for recording fixtures and for checks that
// need a real `scanback dap`.
import { spawn } from 'node:child_process';

export class DapClient {
  constructor(binary, args = ['dap']) {
    this.process = spawn(binary, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    this.buffer = Buffer.alloc(0);
    this.seq = 1;
    this.pending = new Map();
    this.events = [];
    this.waiters = [];
    this.process.stdout.on('data', (chunk) => this.#read(chunk));
  }

  #read(chunk) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/Content-Length: (\d+)/i.exec(this.buffer.subarray(0, end).toString())[1]);
      if (this.buffer.length < end + 4 + length) return;
      const message = JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString());
      this.buffer = this.buffer.subarray(end + 4 + length);
      if (message.type === 'response') {
        const p = this.pending.get(message.request_seq);
        this.pending.delete(message.request_seq);
        if (message.success) p.resolve(message.body ?? {});
        else p.reject(new Error(`${message.command}: ${message.message}`));
      } else if (message.type === 'event') {
        this.events.push(message);
        this.waiters = this.waiters.filter((w) => !(w.match(message) && (w.resolve(message), true)));
      }
    }
  }

  request(command, args) {
    const seq = this.seq++;
    const body = JSON.stringify({ seq, type: 'request', command, arguments: args });
    this.process.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    return new Promise((resolve, reject) => this.pending.set(seq, { resolve, reject }));
  }

  /** The next event named `name` (one already received and not yet taken counts). */
  event(name, timeoutMs = 20000) {
    const index = this.events.findIndex((e) => e.event === name);
    if (index >= 0) return Promise.resolve(this.events.splice(index, 1)[0]);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no '${name}' event within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        match: (e) => e.event === name,
        resolve: (e) => {
          clearTimeout(timer);
          this.events.splice(this.events.indexOf(e), 1);
          resolve(e);
        },
      });
    });
  }

  async close() {
    try {
      await this.request('disconnect', { terminateDebuggee: true });
    } catch {
      // the adapter may already be gone
    }
    this.process.stdin.end();
    await new Promise((resolve) => (this.process.exitCode !== null ? resolve() : this.process.on('exit', resolve)));
  }
}
