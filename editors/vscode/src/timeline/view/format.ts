// Text for the Scan Timeline: virtual times as IEC duration literals (as scanback prints them) and
// short durations for cycle-time statistics.

const units: [string, number][] = [
  ['d', 86_400e9],
  ['h', 3_600e9],
  ['m', 60e9],
  ['s', 1e9],
  ['ms', 1e6],
  ['us', 1e3],
  ['ns', 1],
];

/** A virtual time in ns as an IEC literal: 3_630_000_000 → "T#3s630ms", 0 → "T#0ms". */
export function formatVirtualTime(ns: number): string {
  if (!Number.isFinite(ns)) return 'T#?';
  let rest = Math.round(Math.abs(ns));
  let text = '';
  for (const [name, size] of units) {
    const count = Math.floor(rest / size);
    if (count > 0) {
      text += `${count}${name}`;
      rest -= count * size;
    }
  }
  return `T#${ns < 0 ? '-' : ''}${text || '0ms'}`;
}

/** A short duration for statistics: 146_000 → "146 µs", 1_250_000 → "1.25 ms". */
export function formatDuration(ns: number): string {
  if (!Number.isFinite(ns)) return '?';
  const abs = Math.abs(ns);
  const [unit, size] = abs >= 1e9 ? ['s', 1e9] : abs >= 1e6 ? ['ms', 1e6] : abs >= 1e3 ? ['µs', 1e3] : ['ns', 1];
  const value = ns / size;
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${Number(value.toFixed(digits))} ${unit}`;
}

export function formatPosition(cycle: number, step: number): string {
  return `${cycle}:${step}`;
}
