// Records the `scanback/timeline` and `scanback/signals` bodies the browser test feeds the Scan
// Timeline view, from real sessions of examples/plant. Rerun when the adapter's answer changes:
//   node test/webview/record-fixtures.mjs [path/to/scanback] [--only replay,signals,live,fault]
// (the live fixture depends on timing: --only keeps it when the others are recorded again).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DapClient } from './dap-client.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../../..');
const args = process.argv.slice(2);
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? new Set(args.splice(onlyAt, 2)[1].split(',')) : undefined;
const wanted = (name) => !only || only.has(name);
const binary = resolve(args[0] ?? join(root, 'build/scanback'));
const plant = join(root, 'examples/plant');
const work = mkdtempSync(join(tmpdir(), 'scanback-fixtures-'));
const save = (name, body) => writeFileSync(join(here, 'fixtures', name), `${JSON.stringify(body, null, 2)}\n`);

async function session(launch, steps) {
  const dap = new DapClient(binary);
  try {
    await dap.request('initialize', { adapterID: 'scanback', linesStartAt1: true, columnsStartAt1: true });
    await dap.request('launch', launch);
    await dap.request('configurationDone', {});
    await dap.event('stopped');
    return await steps(dap);
  } finally {
    await dap.close();
  }
}

try {
  // A replay of a 2000-cycle recording, moved to 400:50.
  const trace = join(work, 'plant.trace');
  execFileSync(binary, ['run', ...['config.st', 'fbs.st', 'programs.st', 'types.st'].map((f) => join(plant, f)),
    '--cycles', '2000', '--inputs', join(plant, 'stimulus.csv'), '--record', trace, '--quiet']);
  if (wanted('replay'))
    save('replay.json', await session({ trace, startAt: 'start' }, async (dap) => {
      await dap.request('scanback/seek', { cycle: 400, step: 50 });
      await dap.event('stopped');
      return dap.request('scanback/timeline');
    }));

  // Lanes of that recording, one of each kind and one unknown variable: over all of it, about a
  // hundred and fifty points (gTank.level is downsampled), and over a zoomed range (every change).
  if (wanted('signals')) {
    const variables = ['Line.conveyorOut', 'gTank.level', 'Line.state', 'gStatusText', 'Line.nope'];
    save('signals.json', await session({ trace, startAt: 'start' }, (dap) =>
      dap.request('scanback/signals', { variables, firstCycle: 0, lastCycle: 1999, maxPoints: 150 })));
    save('signals-zoomed.json', await session({ trace, startAt: 'start' }, (dap) =>
      dap.request('scanback/signals', { variables, firstCycle: 250, lastCycle: 400, maxPoints: 396 })));
  }

  // A live session paused after running a while: the live edge and cycle-time statistics.
  if (wanted('live')) save('live.json', await session(
    { program: [join(plant, '*.st')], cwd: plant, inputs: join(plant, 'stimulus.csv'), stopOnEntry: true, realtime: false, cycles: 100000 },
    async (dap) => {
      await dap.request('setBreakpoints', { source: { path: join(plant, 'programs.st') }, breakpoints: [{ line: 154 }] });
      for (let i = 0; i < 3; ++i) {
        await dap.request('continue', { threadId: 1 });
        await dap.event('stopped');
      }
      await dap.request('setBreakpoints', { source: { path: join(plant, 'programs.st') }, breakpoints: [] });
      await dap.request('continue', { threadId: 1 });
      await new Promise((r) => setTimeout(r, 300)); // let it run: a recorded stretch, not a wait for a condition
      await dap.request('pause', { threadId: 1 });
      await dap.event('stopped');
      return dap.request('scanback/timeline');
    },
  ));

  // A recording that ends in a fault: the faulting program divides by zero at cycle 57.
  if (wanted('fault')) await recordFault();
  console.log(`recorded fixtures in ${join(here, 'fixtures')}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}

async function recordFault() {
  const faulty = join(work, 'fault.st');
  writeFileSync(faulty, 'PROGRAM Main\nVAR n : INT; d : INT := 1; q : INT; END_VAR\nn := n + 1;\nIF n = 57 THEN d := 0; END_IF;\nq := 100 / d;\nEND_PROGRAM\n');
  const faultTrace = join(work, 'fault.trace');
  try {
    execFileSync(binary, ['run', faulty, '--cycles', '200', '--record', faultTrace, '--quiet'], { stdio: 'ignore' });
  } catch {
    // exit code 3: the fault is the point
  }
  const fault = await session({ trace: faultTrace }, (dap) => dap.request('scanback/timeline'));
  // The temporary folder's name changes every run.
  fault.fault.message = fault.fault.message.replaceAll(`${work}/`, '');
  fault.fault.file = fault.fault.file.replaceAll(`${work}/`, '');
  save('fault.json', fault);
}
