// scanback run --io against a remote I/O device none of us wrote: modbus-serial's ServerTCP in a
// process of its own (device.js), and a stalled device (accepts, never answers). Values both ways
// in every word and byte order, changed-only and every-cycle writes, the device killed and
// restarted under each policy, exceptions, health in `ctl status`, and the recording verified and
// replayed with no network. Every wait is on a condition: a device's or the runtime's answer.
//
//   SCANBACK_BINARY=build/scanback node --test tests/io/peer/
"use strict";
const test = require("node:test");
const assert = require("node:assert");
const { spawn, execFile } = require("node:child_process");
const fs = require("node:fs");
const net = require("node:net");
const os = require("node:os");
const path = require("node:path");
const readline = require("node:readline");

const scanback = process.env.SCANBACK_BINARY || path.resolve(__dirname, "../../../build/scanback");

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Polls `holds` (async) until it is true; fails after `ms`. Each poll is a request to a process.
async function until(holds, what, ms = 15000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await holds();
    if (v) return v;
    if (Date.now() > deadline) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setImmediate(r));
  }
}

// The device process: requests and answers as JSON lines.
class Device {
  constructor(port) {
    this.port = port;
    this.proc = spawn(process.execPath, [path.join(__dirname, "device.js"), String(port)], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    this.waiting = [];
    this.exited = new Promise((r) => this.proc.on("exit", r));
    readline.createInterface({ input: this.proc.stdout }).on("line", (l) => this.waiting.shift()(JSON.parse(l)));
    this.ready = new Promise((r) => this.waiting.push(r));
  }
  request(o) {
    return new Promise((r) => {
      this.waiting.push(r);
      this.proc.stdin.write(JSON.stringify(o) + "\n");
    });
  }
  async set(area, address, values) {
    await this.request({ set: area, address, values });
  }
  async get(area, address, count) {
    return (await this.request({ get: area, address, count })).values;
  }
  async writes(area, address) {
    return (await this.request({ writes: area, address })).count;
  }
  async kill() {
    this.proc.kill("SIGKILL");
    await this.exited;
  }
}

// A device that accepts connections and never answers.
function stalledDevice(port) {
  const sockets = [];
  const server = net.createServer((s) => sockets.push(s));
  return new Promise((resolve) =>
    server.listen(port, "127.0.0.1", () =>
      resolve({
        close: () => {
          sockets.forEach((s) => s.destroy());
          server.close();
        },
      }),
    ),
  );
}

function run(args) {
  return new Promise((resolve) => {
    execFile(scanback, args, { maxBuffer: 64 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? error.code : 0, stdout, stderr }),
    );
  });
}

// `scanback run FILES --io TOML ...` in the background, with a control endpoint.
class Runtime {
  constructor(dir, files, toml, extra = []) {
    this.endpoint = "unix://" + path.join(dir, "rt.sock");
    this.stdout = "";
    this.stderr = "";
    this.proc = spawn(scanback, ["run", ...files, "--io", toml, "--realtime", "--control", this.endpoint, ...extra]);
    this.proc.stdout.on("data", (d) => (this.stdout += d));
    this.proc.stderr.on("data", (d) => (this.stderr += d));
    this.exited = new Promise((r) => this.proc.on("exit", (code) => r(code)));
  }
  async status() {
    const r = await run(["ctl", this.endpoint, "status", "--json"]);
    return r.code === 0 ? JSON.parse(r.stdout) : null;
  }
  async statusText() {
    return (await run(["ctl", this.endpoint, "status"])).stdout;
  }
  async device(name) {
    const s = await this.status();
    return s && s.io ? s.io.find((d) => d.device === name) : null;
  }
  async stop() {
    await run(["ctl", this.endpoint, "stop"]);
    return this.exited;
  }
}

function tempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), "scanback-modbus-"));
}

// A value's registers as a device holds them, in the given orders (Modbus's own: big, big).
const kinds = {
  INT: { regs: 1, write: (b, v) => b.writeInt16BE(v), read: (b) => b.readInt16BE() },
  DINT: { regs: 2, write: (b, v) => b.writeInt32BE(v), read: (b) => b.readInt32BE() },
  REAL: { regs: 2, write: (b, v) => b.writeFloatBE(v), read: (b) => b.readFloatBE() },
  LREAL: { regs: 4, write: (b, v) => b.writeDoubleBE(v), read: (b) => b.readDoubleBE() },
};
function encode(type, value, wordOrder, byteOrder) {
  const k = kinds[type];
  const b = Buffer.alloc(k.regs * 2);
  k.write(b, value);
  let words = [];
  for (let i = 0; i < k.regs; i++) words.push(byteOrder === "big" ? b.readUInt16BE(i * 2) : b.readUInt16LE(i * 2));
  return wordOrder === "big" ? words : words.reverse();
}
function decode(type, words, wordOrder, byteOrder) {
  const k = kinds[type];
  const w = wordOrder === "big" ? words : [...words].reverse();
  const b = Buffer.alloc(k.regs * 2);
  w.forEach((v, i) => (byteOrder === "big" ? b.writeUInt16BE(v, i * 2) : b.writeUInt16LE(v, i * 2)));
  return k.read(b);
}

// Four devices on one peer, one per combination of orders, each at registers k*100: an INT, a
// DINT, a REAL and an LREAL in, the program's results out at the same addresses.
const orders = [
  ["bb", "big", "big"],
  ["bl", "big", "little"],
  ["lb", "little", "big"],
  ["ll", "little", "little"],
];
const values = { INT: -1234, DINT: -123456789, REAL: 1500.25, LREAL: 3.141592653589793 };
const results = { INT: -1233, DINT: -246913578, REAL: 3000.5, LREAL: 3.141592653589793 + 0.25 };
const fields = [
  // type, register offset, image byte offset
  ["INT", 0, 0],
  ["DINT", 2, 4],
  ["REAL", 4, 8],
  ["LREAL", 8, 16],
];
const letter = { INT: "W", DINT: "D", REAL: "D", LREAL: "L" };
const size = { INT: 2, DINT: 4, REAL: 4, LREAL: 8 };

function ordersProgram() {
  let vars = "",
    body = "";
  orders.forEach(([name], k) => {
    const base = k * 24;
    for (const [type, , byte] of fields) {
      const at = (base + byte) / size[type];
      vars += `  i_${type}_${name} AT %I${letter[type]}${at} : ${type};\n  q_${type}_${name} AT %Q${letter[type]}${at} : ${type};\n`;
    }
    vars += `  health_${name} AT %IW${base / 2 + 1} : WORD;\n`;
    body +=
      `q_INT_${name} := i_INT_${name} + 1;\nq_DINT_${name} := i_DINT_${name} * 2;\n` +
      `q_REAL_${name} := i_REAL_${name} * 2.0;\nq_LREAL_${name} := i_LREAL_${name} + 0.25;\n`;
  });
  return `PROGRAM Orders
VAR
${vars}  b AT %IX96.0 : BOOL;
  nb AT %QX96.0 : BOOL;
END_VAR
${body}nb := NOT b;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#2ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Orders;
END_CONFIGURATION
`;
}

function ordersToml(port) {
  let t = "";
  orders.forEach(([name, word, byte], k) => {
    const base = k * 24;
    t += `[[device]]
name = "${name}"
endpoint = "tcp://127.0.0.1:${port}"
period = "10ms"
timeout = "500ms"
word_order = "${word}"
byte_order = "${byte}"
write = "${name === "ll" ? "every-cycle" : "changed"}"
status = "%IW${base / 2 + 1}"
`;
    for (const [type, reg, byte2] of fields) {
      const to = `${letter[type]}${(base + byte2) / size[type]}`;
      for (const [area, image] of [
        ["input_registers", "I"],
        ["holding_registers", "Q"],
      ])
        t += `[[device.map]]\narea = "${area}"\naddress = ${k * 100 + reg}\ncount = ${kinds[type].regs}\nto = "%${image}${to}"\ntype = "${type}"\n`;
    }
    if (k === 0)
      t += `[[device.map]]\narea = "discrete_inputs"\naddress = 0\ncount = 1\nto = "%IX96.0"\n[[device.map]]\narea = "coils"\naddress = 0\ncount = 1\nto = "%QX96.0"\n`;
  });
  return t;
}

test("values in every order, both ways; writes changed-only and every cycle; recorded, verified and replayed with no network", async () => {
  const dir = tempDir();
  const port = await freePort();
  const device = new Device(port);
  await device.ready;
  for (const [, word, byte] of orders.map((o) => o))
    for (const [type, reg] of fields) {
      const k = orders.findIndex((o) => o[1] === word && o[2] === byte);
      await device.set("input", k * 100 + reg, encode(type, values[type], word, byte));
    }
  await device.set("discrete", 0, [true]);
  fs.writeFileSync(path.join(dir, "orders.st"), ordersProgram());
  fs.writeFileSync(path.join(dir, "io.toml"), ordersToml(port));
  const trace = path.join(dir, "orders.trace");
  const rt = new Runtime(dir, [path.join(dir, "orders.st")], path.join(dir, "io.toml"), [
    "--record",
    trace,
    "--print-state",
  ]);
  try {
    // Every result comes back to the device, decoded and encoded in the device's orders.
    for (const [name, word, byte] of orders) {
      const k = orders.findIndex((o) => o[0] === name);
      for (const [type, reg] of fields) {
        await until(async () => {
          const got = decode(type, await device.get("holding", k * 100 + reg, kinds[type].regs), word, byte);
          return got === results[type] || (type === "REAL" && Math.abs(got - results[type]) < 1e-9);
        }, `${type} in ${name} order`);
      }
    }
    await until(async () => (await device.get("coils", 0, 1))[0] === false, "the coil (NOT a discrete input)");
    await device.set("discrete", 0, [false]);
    await until(async () => (await device.get("coils", 0, 1))[0] === true, "the coil following its input");

    // Changed-only ("bb") against every cycle ("ll"), over 20 more poll rounds of each.
    const writesBb = await device.writes("holding", 0);
    const writesLl = await device.writes("holding", 300);
    const requests = (await rt.device("ll")).requests;
    await until(async () => (await rt.device("ll")).requests >= requests + 20 * 8, "20 poll rounds");
    assert.strictEqual(await device.writes("holding", 0), writesBb, "unchanged outputs are not written again");
    assert.ok((await device.writes("holding", 300)) >= writesLl + 10, "every-cycle writes at every poll");

    // Health, as JSON and as text.
    const s = await rt.status();
    assert.strictEqual(s.io.length, 4);
    for (const d of s.io) {
      assert.strictEqual(d.state, "ok", JSON.stringify(d));
      assert.strictEqual(d.endpoint, `tcp://127.0.0.1:${port}`);
      assert.ok(d.requestRate > 0 && d.roundTripNs.p50 > 0 && d.roundTripNs.p99 >= d.roundTripNs.p50, JSON.stringify(d));
    }
    const text = await rt.statusText();
    assert.match(text, new RegExp(`io bb \\(tcp://127\\.0\\.0\\.1:${port}\\): ok, [0-9.]+ requests/s, round trip p50`));
  } finally {
    await rt.stop();
    await device.kill();
  }
  assert.match(rt.stderr, /scanback: I\/O device bb \(tcp:\/\/127\.0\.0\.1:\d+, unit 1, every 10ms, timeout 500ms\)/);
  // With no device anywhere: the trace verifies, replays to the state the run ended with, and
  // says which devices it was recorded with.
  const verify = await run(["trace", "verify", trace]);
  assert.strictEqual(verify.code, 0, verify.stdout + verify.stderr);
  const replay = await run(["replay", trace, "--to", "end", "--print-state"]);
  assert.strictEqual(replay.code, 0, replay.stderr);
  const ran = JSON.parse(rt.stdout);
  assert.deepStrictEqual(JSON.parse(replay.stdout), ran);
  assert.strictEqual(ran.Main.q_INT_ll, -1233);
  const info = await run(["trace", "info", trace]);
  assert.match(info.stdout, /I\/O +.*io\.toml, 4 devices/);
  assert.match(info.stdout, /ll \(tcp:\/\/127\.0\.0\.1:\d+, unit 1, every 10ms, timeout 500ms\): 8 maps, on_fault hold, write every-cycle/);
});

// Copies its input to its output; remembers what it read when the device stopped answering.
const watchProgram = `PROGRAM Watch
VAR
  x AT %IW0 : INT;
  health AT %IW1 : WORD;
  y AT %QW0 : INT;
  answered : BOOL;
  lost : BOOL;
  xWhenLost : INT;
  failures : WORD;
END_VAR
y := x;
IF (health AND 1) = 1 THEN answered := TRUE; END_IF;
IF answered AND (health AND 1) = 0 AND NOT lost THEN lost := TRUE; xWhenLost := x; failures := SHR(health, 8); END_IF;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#2ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Watch;
END_CONFIGURATION
`;
function watchToml(port, policy) {
  return `[[device]]
name = "dev"
endpoint = "tcp://127.0.0.1:${port}"
period = "5ms"
timeout = "200ms"
on_fault = "${policy}"
status = "%IW1"
[[device.map]]
area = "input_registers"
address = 0
count = 1
to = "%IW0"
type = "INT"
[[device.map]]
area = "holding_registers"
address = 0
count = 1
to = "%QW0"
type = "INT"
`;
}

for (const policy of ["hold", "zero"]) {
  test(`the device killed and restarted: on_fault = "${policy}", health reported, reconnected, the recording verifies`, async () => {
    const dir = tempDir();
    const port = await freePort();
    fs.writeFileSync(path.join(dir, "watch.st"), watchProgram);
    fs.writeFileSync(path.join(dir, "io.toml"), watchToml(port, policy));
    let device = new Device(port);
    await device.ready;
    await device.set("input", 0, [555]);
    const trace = path.join(dir, "watch.trace");
    const rt = new Runtime(dir, [path.join(dir, "watch.st")], path.join(dir, "io.toml"), ["--record", trace, "--print-state"]);
    try {
      await until(async () => (await device.get("holding", 0, 1))[0] === 555, "the loop closed");
      await device.kill();
      const failing = await until(async () => {
        const d = await rt.device("dev");
        return d && d.state === "failing" ? d : null;
      }, "the device reported failing");
      assert.match(failing.error, new RegExp(`^dev \\(tcp://127\\.0\\.0\\.1:${port}\\): `));
      assert.ok(failing.failures >= 1);
      const cycles = (await rt.status()).cycles;
      await until(async () => (await rt.status()).cycles > cycles + 10, "cycles going on without the device");
      device = new Device(port);
      await device.ready;
      await device.set("input", 0, [777]);
      await until(async () => (await device.get("holding", 0, 1))[0] === 777, "the loop closed again");
      assert.strictEqual((await rt.device("dev")).state, "ok");
    } finally {
      await rt.stop();
      await device.kill();
    }
    const state = JSON.parse(rt.stdout).Main;
    assert.strictEqual(state.lost, true);
    assert.strictEqual(state.xWhenLost, policy === "zero" ? 0 : 555);
    assert.ok(state.failures >= 1);
    assert.strictEqual(state.x, 777);
    const verify = await run(["trace", "verify", trace]);
    assert.strictEqual(verify.code, 0, verify.stdout + verify.stderr);
  });
}

test('the device killed: on_fault = "fault" ends the run with a message naming it', async () => {
  const dir = tempDir();
  const port = await freePort();
  fs.writeFileSync(path.join(dir, "watch.st"), watchProgram);
  fs.writeFileSync(path.join(dir, "io.toml"), watchToml(port, "fault"));
  const device = new Device(port);
  await device.ready;
  await device.set("input", 0, [1]);
  const proc = spawn(scanback, ["run", path.join(dir, "watch.st"), "--io", path.join(dir, "io.toml"), "--realtime"]);
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((r) => proc.on("exit", r));
  await until(async () => (await device.get("holding", 0, 1))[0] === 1, "the loop closed");
  await device.kill();
  assert.strictEqual(await exited, 3);
  assert.match(stderr, new RegExp(`scanback: I/O fault: dev \\(tcp://127\\.0\\.0\\.1:${port}\\): .*\\(device 'dev' has on_fault = "fault"\\)`));
});

test("a stalled device times out and an exception is reported; the scan keeps its cycle", async () => {
  const dir = tempDir();
  const stalledPort = await freePort();
  const stalled = await stalledDevice(stalledPort);
  const port = await freePort();
  const device = new Device(port);
  await device.ready;
  fs.writeFileSync(path.join(dir, "watch.st"), watchProgram);
  fs.writeFileSync(
    path.join(dir, "io.toml"),
    `[[device]]
name = "stalled"
endpoint = "tcp://127.0.0.1:${stalledPort}"
period = "5ms"
timeout = "50ms"
[[device.map]]
area = "input_registers"
address = 0
count = 1
to = "%IW0"
[[device]]
name = "refusing"
endpoint = "tcp://127.0.0.1:${port}"
period = "5ms"
[[device.map]]
area = "holding_registers"
address = 2000
count = 1
to = "%QW0"
`,
  );
  const rt = new Runtime(dir, [path.join(dir, "watch.st")], path.join(dir, "io.toml"));
  try {
    const stalledHealth = await until(async () => {
      const d = await rt.device("stalled");
      return d && d.state === "failing" ? d : null;
    }, "the stalled device failing");
    assert.strictEqual(stalledHealth.error, `stalled (tcp://127.0.0.1:${stalledPort}): reading input_registers 0..0: no answer within 50ms`);
    const refusing = await until(async () => {
      const d = await rt.device("refusing");
      return d && d.state === "failing" ? d : null;
    }, "the refusing device failing");
    assert.strictEqual(
      refusing.error,
      `refusing (tcp://127.0.0.1:${port}): writing holding_registers 2000..2000: the device answered with the Modbus exception 'Illegal data address'`,
    );
    // While the stalled device times out twice more (100 ms at least), the 2 ms task runs on.
    const before = await rt.status();
    const failures = (await rt.device("stalled")).failures;
    await until(async () => (await rt.device("stalled")).failures >= failures + 2, "two more timeouts");
    const after = await rt.status();
    assert.ok(after.cycles >= before.cycles + 10, `${before.cycles} -> ${after.cycles} cycles`);
    assert.strictEqual(after.state, "running");
  } finally {
    await rt.stop();
    await device.kill();
    stalled.close();
  }
});

test("a bad configuration is refused with its file:line:col", async () => {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, "watch.st"), watchProgram);
  fs.writeFileSync(path.join(dir, "io.toml"), watchToml(1502, "hold").replace('type = "INT"\n[[device.map]]', 'type = "DINT"\n[[device.map]]'));
  const r = await run(["run", path.join(dir, "watch.st"), "--io", path.join(dir, "io.toml"), "--cycles", "1"]);
  assert.strictEqual(r.code, 2);
  assert.match(r.stderr, /io\.toml:\d+:\d+: 'count' 1 is not a whole number of DINT values \(2 registers each\)/);
});
