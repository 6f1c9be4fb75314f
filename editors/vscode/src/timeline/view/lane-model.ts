// What a waveform lane shows, computed from one `scanback/signals` Signal: the stretches of cycles
// with one value each, the value at a position, and the edge nearest to the pointer. Pure
// functions (no DOM), so the unit tests check them directly and the page only draws.
import type { Signal, SignalChange, SignalValue } from '../protocol';

/** Cycles `from`..`to` with one value; `change` is the change that began it (none for the first). */
export interface Segment {
  from: number;
  to: number;
  value: SignalValue;
  change?: SignalChange;
}

/** The signal's values over the cycles the body covers, oldest first. */
export function segmentsOf(signal: Signal, firstCycle: number, lastCycle: number): Segment[] {
  if (!signal.initial) return [];
  const out: Segment[] = [];
  let current: Segment = { from: firstCycle, to: lastCycle, value: signal.initial };
  for (const change of signal.changes ?? []) {
    if (change.cycle > lastCycle) break;
    current.to = Math.max(current.from, change.cycle);
    out.push(current);
    current = { from: Math.max(firstCycle, change.cycle), to: lastCycle, value: change.value, change };
  }
  out.push(current);
  return out;
}

/** The value at position (cycle, step): that of the last change at or before it. The default step
 *  is the end of the cycle. */
export function valueAt(signal: Signal, cycle: number, step = Number.POSITIVE_INFINITY): SignalValue | undefined {
  let value = signal.initial;
  for (const c of signal.changes ?? []) {
    if (c.cycle > cycle || (c.cycle === cycle && c.step > step)) break;
    value = c.value;
  }
  return value;
}

/** The smallest and largest of `values` that are numbers, with their texts. */
export function numberRange(values: (SignalValue | undefined)[]): { min: SignalValue; max: SignalValue } | undefined {
  let min: SignalValue | undefined;
  let max: SignalValue | undefined;
  for (const v of values) {
    if (v?.number === undefined || !Number.isFinite(v.number)) continue;
    if (!min || v.number < (min.number as number)) min = v;
    if (!max || v.number > (max.number as number)) max = v;
  }
  return min && max ? { min, max } : undefined;
}

/**
 * The change whose edge is nearest to `x` (pixels) within `reach` pixels; `xOf` maps a cycle to
 * pixels. Of several changes in one cycle (one edge on screen) the last is taken: its value is the
 * one the lane shows after the edge.
 */
export function nearestEdge(
  signal: Signal,
  x: number,
  xOf: (cycle: number) => number,
  reach: number,
): SignalChange | undefined {
  let best: SignalChange | undefined;
  let bestDistance = reach;
  for (const c of signal.changes ?? []) {
    const distance = Math.abs(xOf(c.cycle) - x);
    if (distance <= bestDistance) {
      best = c;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Where a click on an edge goes: the statement that wrote the value. A change's position is the
 * boundary right after the writing statement, so the boundary before it is one step earlier; a
 * change at step 0 (the scan inputs) is made before the cycle's first statement and goes there.
 */
export function writerPosition(change: SignalChange): { cycle: number; step: number } {
  return { cycle: change.cycle, step: Math.max(0, change.step - 1) };
}
