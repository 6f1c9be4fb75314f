// A remote I/O device for scanback's Modbus TCP client tests: modbus-serial's ServerTCP (a Modbus
// server none of us wrote) on 127.0.0.1:PORT, unit 1, with 1000 coils, discrete inputs, holding and
// input registers; an address from 1000 on is answered with the exception "illegal data address".
// The test reads and changes its memory through JSON lines: one request on stdin, one answer on
// stdout.
//
//   node device.js PORT
//   {"set":"input","address":0,"values":[1,2]}     -> {"ok":true}
//   {"set":"discrete","address":0,"values":[true]}  -> {"ok":true}
//   {"get":"holding","address":0,"count":2}         -> {"values":[...]}   (also "coils")
//   {"writes":"holding","address":0}                -> {"count":N}  (times a client wrote it; also "coils")
"use strict";
const readline = require("readline");
const ModbusRTU = require("modbus-serial");

const port = Number(process.argv[2]);
const size = 1000;
const memory = {
  coils: new Array(size).fill(false),
  discrete: new Array(size).fill(false),
  holding: new Array(size).fill(0),
  input: new Array(size).fill(0),
};
const writes = { holding: new Array(size).fill(0), coils: new Array(size).fill(0) };

function check(address) {
  if (address >= size) throw { modbusErrorCode: 0x02, msg: "Illegal data address" };
}

const vector = {
  getCoil: (a) => (check(a), memory.coils[a]),
  getDiscreteInput: (a) => (check(a), memory.discrete[a]),
  getInputRegister: (a) => (check(a), memory.input[a]),
  getHoldingRegister: (a) => (check(a), memory.holding[a]),
  setRegister: (a, v) => {
    check(a);
    memory.holding[a] = v;
    writes.holding[a]++;
  },
  setCoil: (a, v) => {
    check(a);
    memory.coils[a] = v;
    writes.coils[a]++;
  },
};

const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const server = new ModbusRTU.ServerTCP(vector, { host: "127.0.0.1", port, unitID: 1 });
server.on("initialized", () => say({ listening: port }));
server.on("serverError", (e) => {
  say({ error: String(e) });
  process.exit(1);
});
server.on("socketError", () => {});  // a client that went away

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const r = JSON.parse(line);
  if (r.set) {
    r.values.forEach((v, i) => (memory[r.set][r.address + i] = v));
    say({ ok: true });
  } else if (r.get) {
    say({ values: memory[r.get].slice(r.address, r.address + r.count) });
  } else if (r.writes) {
    say({ count: writes[r.writes][r.address] });
  }
});
process.stdin.on("end", () => process.exit(0));
