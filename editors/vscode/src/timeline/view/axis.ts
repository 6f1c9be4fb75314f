// The Scan Timeline's cycle axis: the window of cycles the view shows (all of the history, or a
// zoomed part of it), shared by the cycle strip and the lanes so both zoom and scroll together.
// Pure functions, so the unit tests can check them without a browser.

export interface CycleWindow {
  first: number;
  last: number;
}

/** Where `cycle` lies in the window, 0 at its first cycle and 1 at its last (unclamped). A window of
 *  one cycle puts it at 1, as the strip always has. */
export function fractionOf(cycle: number, w: CycleWindow): number {
  const span = w.last - w.first;
  if (span <= 0) return 1;
  return (cycle - w.first) / span;
}

/** The cycle at `fraction` of the window (not rounded). */
export function cycleAt(fraction: number, w: CycleWindow): number {
  return w.first + fraction * (w.last - w.first);
}

/** The fewest cycles a zoomed window shows: closer than this, edges of one cycle are far apart
 *  already. */
export const minimumSpan = 8;

/**
 * The window after zooming by `factor` (< 1 zooms in) around `anchor` (a cycle that stays where it
 * is on screen), kept inside `whole`. Returns undefined when the result shows everything (the view
 * then follows the history as it grows).
 */
export function zoomWindow(
  current: CycleWindow,
  whole: CycleWindow,
  factor: number,
  anchor: number,
): CycleWindow | undefined {
  const wholeSpan = whole.last - whole.first;
  const span = Math.max(Math.min(minimumSpan, wholeSpan), Math.round((current.last - current.first) * factor));
  if (span >= wholeSpan) return undefined;
  const at = fractionOf(anchor, current);
  const first = Math.round(anchor - at * span);
  return clampWindow({ first, last: first + span }, whole);
}

/** The window moved by `cycles` (negative: earlier), kept inside `whole`. */
export function scrollWindow(current: CycleWindow, whole: CycleWindow, cycles: number): CycleWindow {
  return clampWindow({ first: current.first + cycles, last: current.last + cycles }, whole);
}

/** The window inside `whole`, keeping its span when it can. */
export function clampWindow(w: CycleWindow, whole: CycleWindow): CycleWindow {
  const span = Math.min(w.last - w.first, whole.last - whole.first);
  let first = Math.round(Math.max(whole.first, Math.min(w.first, whole.last - span)));
  if (!Number.isFinite(first)) first = whole.first;
  return { first, last: first + Math.round(span) };
}

/** Up to about `count` round cycle numbers inside the window for the axis' ticks (steps of 1, 2 or
 *  5 times a power of ten), first to last. */
export function ticksOf(w: CycleWindow, count = 6): number[] {
  const span = w.last - w.first;
  if (span <= 0 || count < 1) return [w.first];
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const out: number[] = [];
  for (let c = Math.ceil(w.first / step) * step; c <= w.last; c += step) out.push(Math.round(c));
  return out;
}

/** The virtual time at `cycle`, between the history's two ends whose times are known (linear:
 *  exact for one task of a fixed interval, an estimate between its ends otherwise). */
export function timeAtCycle(cycle: number, ends: { firstCycle: number; lastCycle: number; firstTimeNs: number; lastTimeNs: number }): number {
  const span = ends.lastCycle - ends.firstCycle;
  if (span <= 0) return ends.firstTimeNs;
  return ends.firstTimeNs + ((cycle - ends.firstCycle) / span) * (ends.lastTimeNs - ends.firstTimeNs);
}
