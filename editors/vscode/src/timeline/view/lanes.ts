// Waveform lanes: one per variable of the last `signals` message, drawn in SVG on the strip's cycle
// axis. BOOL as a 0/1 step trace, numbers as a scaled step line with their min and max, enums and
// strings as bus segments with the value written in when it fits. Every shape is plain SVG with
// its cycles in data attributes, so the browser test reads what was drawn. While a compare is
// active each lane also draws the other recording's values (`compared`), dashed in another colour,
// with an A/B legend in its header.
import type { ComparedSignals, Signal, SignalChange, SignalsBody } from '../protocol';
import { fractionOf, type CycleWindow } from './axis';
import { nearestEdge, numberRange, segmentsOf, valueAt, writerPosition, type Segment } from './lane-model';

const svgNs = 'http://www.w3.org/2000/svg';
/** Pixels either side of an edge that still hit it. */
export const edgeReach = 5;
const height = { bool: 18, number: 34, bus: 20 };

export interface LaneContext {
  window: CycleWindow;
  /** The current position, marked in every lane. */
  position?: { cycle: number; step: number };
  seek(position: { cycle: number; step: number }): void;
  remove(variable: string): void;
}

function svg<K extends keyof SVGElementTagNameMap>(name: K, attributes: Record<string, string | number>) {
  const e = document.createElementNS(svgNs, name);
  for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, String(v));
  return e;
}

function element<K extends keyof HTMLElementTagNameMap>(name: K, className: string, text?: string) {
  const e = document.createElement(name);
  e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Pixels, rounded to tenths: short paths, and the same numbers the test computes. */
const px = (x: number) => Math.round(x * 10) / 10;

let measure: CanvasRenderingContext2D | null | undefined;
function textWidth(text: string, font: string): number {
  if (measure === undefined) measure = document.createElement('canvas').getContext('2d');
  if (!measure) return text.length * 7;
  measure.font = font;
  return measure.measureText(text).width;
}

export class Lanes {
  private body: SignalsBody | undefined;
  private compared: ComparedSignals | undefined;
  private readonly tip: HTMLElement;

  constructor(
    private readonly root: HTMLElement,
    private readonly empty: HTMLElement,
  ) {
    this.tip = element('div', 'lane-tip');
    this.tip.id = 'lane-tip';
    this.tip.setAttribute('role', 'tooltip');
    this.tip.hidden = true;
    document.body.append(this.tip);
  }

  get variables(): string[] {
    return this.body?.signals.map((s) => s.variable) ?? [];
  }

  set(body: SignalsBody | undefined, compared?: ComparedSignals) {
    this.body = body;
    this.compared = compared;
  }

  /** The letters of the session's recording and of the other one, while a compare is active. */
  private sides(): { own: 'A' | 'B'; other: 'A' | 'B' } | undefined {
    if (!this.compared) return undefined;
    return { own: this.compared.side === 'A' ? 'B' : 'A', other: this.compared.side };
  }

  /** The other recording's signal of `variable`, when it can be drawn over the session's own. */
  private otherOf(signal: Signal): Signal | undefined {
    const other = this.compared?.signals.signals.find((s) => s.variable === signal.variable);
    return other && other.error === undefined && other.initial && other.kind === signal.kind ? other : undefined;
  }

  /** Draws every lane for the window; `width` is the strip's width in pixels. */
  render(context: LaneContext, width: number) {
    const signals = this.body?.signals ?? [];
    this.empty.hidden = signals.length > 0;
    // The cycles the data covers, for a test to wait on after a zoom.
    this.root.dataset.firstCycle = String(this.body?.firstCycle ?? '');
    this.root.dataset.lastCycle = String(this.body?.lastCycle ?? '');
    this.tip.hidden = true;
    this.root.replaceChildren(...signals.map((s) => this.lane(s, context, width)));
  }

  private lane(signal: Signal, context: LaneContext, width: number): HTMLElement {
    const lane = element('div', 'lane');
    lane.dataset.variable = signal.variable;
    const head = element('div', 'lane-head');
    head.append(element('span', 'lane-name', signal.variable));
    if (signal.type) head.append(element('span', 'lane-type', signal.type));
    const sides = this.sides();
    const other = sides ? this.otherOf(signal) : undefined;
    if (sides && signal.error === undefined) {
      // Which line is which recording: the session's solid, the other dashed.
      const legend = element('span', 'lane-legend');
      const own = element('span', 'lane-legend-own', sides.own);
      own.title = `${sides.own}: this session's recording (solid)`;
      const theirs = element('span', 'lane-legend-other', sides.other);
      const otherError = this.compared?.signals.signals.find((s) => s.variable === signal.variable)?.error;
      theirs.title = `${sides.other}: ${this.compared?.trace} (dashed)${otherError ? ` — not drawn: ${otherError}` : ''}`;
      if (!other) theirs.classList.add('lane-legend-missing');
      legend.append(own, theirs);
      head.append(legend);
    }
    const at = context.position;
    const now = at && signal.initial ? valueAt(signal, at.cycle, at.step) : undefined;
    if (now) {
      // The other recording's value at the same cycle and step: shown beside when it differs.
      const then = at && other ? valueAt(other, at.cycle, at.step) : undefined;
      const both = sides && then && then.text !== now.text;
      const text = both ? `${sides.own} ${now.text} · ${sides.other} ${then.text}` : now.text;
      const value = element('span', both ? 'lane-value lane-value-differs' : 'lane-value', text);
      value.title = `the value at the current position ${at?.cycle}:${at?.step}${both ? ` in ${sides.own} and in ${sides.other}` : ''}`;
      head.append(value);
    }
    if (signal.complete === false) {
      const thinned = element('span', 'lane-thinned', '≈');
      thinned.title = 'More changes than pixels: each stretch shows its first change, its minimum and its maximum. Zoom in for every change.';
      head.append(thinned);
    }
    const remove = element('button', 'lane-remove', '×');
    remove.type = 'button';
    remove.title = `Remove ${signal.variable} from the Scan Timeline`;
    remove.setAttribute('aria-label', remove.title);
    remove.addEventListener('click', () => context.remove(signal.variable));
    head.append(remove);
    lane.append(head);

    if (signal.error !== undefined) {
      const error = element('p', 'lane-error', signal.error);
      error.setAttribute('role', 'alert');
      lane.append(error);
      return lane;
    }
    if (!signal.initial || !this.body) {
      lane.append(element('p', 'lane-pending', 'asking the debugger…'));
      return lane;
    }
    lane.append(this.plot(signal, this.body, context, Math.max(1, width), other));
    return lane;
  }

  private plot(signal: Signal, body: SignalsBody, context: LaneContext, width: number, other?: Signal): SVGSVGElement {
    const kind = signal.kind === 'bool' ? 'bool' : signal.kind === 'enum' || signal.kind === 'string' ? 'bus' : 'number';
    const h = height[kind];
    const plot = svg('svg', { class: `lane-plot lane-${kind}`, width, height: h, viewBox: `0 0 ${width} ${h}` });
    plot.setAttribute('role', 'img');
    const xOf = (cycle: number) => fractionOf(cycle, context.window) * width;
    // Shapes far off screen are clamped just outside it, so a zoomed lane draws nothing huge.
    const clampX = (x: number) => px(Math.min(width + 2, Math.max(-2, x)));
    const segments = segmentsOf(signal, body.firstCycle, body.lastCycle).filter(
      (s) => xOf(s.to) >= -2 && xOf(s.from) <= width + 2,
    );
    plot.setAttribute(
      'aria-label',
      `${signal.variable}: ${segments.length} values in view; ←/→ go from edge to edge, Enter to the statement that wrote the value`,
    );
    // Cycles the body does not cover (a zoom or a scroll still being asked for): hatched.
    for (const [from, to] of [
      [context.window.first, body.firstCycle],
      [body.lastCycle, context.window.last],
    ]) {
      if (to > from)
        plot.append(svg('rect', { class: 'lane-unknown', x: clampX(xOf(from)), y: 0, width: clampX(xOf(to)) - clampX(xOf(from)), height: h }));
    }

    // The other recording's stretches over the same cycles (those its answer covers).
    const otherBody = this.compared?.signals;
    const otherSegments =
      other && otherBody
        ? segmentsOf(other, otherBody.firstCycle, otherBody.lastCycle).filter((s) => xOf(s.to) >= -2 && xOf(s.from) <= width + 2)
        : undefined;
    if (kind === 'bus') {
      this.bus(plot, segments, xOf, clampX, h);
      if (otherSegments) this.busOutline(plot, otherSegments, xOf, clampX, h);
    } else this.trace(plot, segments, kind, xOf, clampX, h, otherSegments);

    if (context.position) {
      const x = xOf(context.position.cycle);
      if (x >= 0 && x <= width) plot.append(svg('line', { class: 'lane-cursor', x1: px(x), x2: px(x), y1: 0, y2: h }));
    }
    const hover = svg('line', { class: 'lane-hover', x1: 0, x2: 0, y1: 0, y2: h, visibility: 'hidden' });
    plot.append(hover);
    this.interact(plot, hover, signal, context, xOf, width, other);
    return plot;
  }

  /** BOOL and numbers: one step line through the values, scaled between the lane's min and max. */
  private trace(
    plot: SVGSVGElement,
    segments: Segment[],
    kind: 'bool' | 'number',
    xOf: (cycle: number) => number,
    clampX: (x: number) => number,
    h: number,
    others?: Segment[],
  ) {
    // Scaled to the values in view (of both recordings while comparing, so that one scale reads
    // both), so a zoom shows the detail of its stretch.
    const range = kind === 'number' ? numberRange([...segments, ...(others ?? [])].map((s) => s.value)) : undefined;
    const top = 2;
    const bottom = h - 2;
    const yOf = (n: number | undefined): number => {
      if (n === undefined || !Number.isFinite(n)) return bottom;
      if (kind === 'bool') return n ? top : bottom;
      const min = range?.min.number ?? 0;
      const max = range?.max.number ?? 0;
      if (max <= min) return (top + bottom) / 2;
      return px(bottom - ((n - min) / (max - min)) * (bottom - top));
    };
    const stepLine = (of: Segment[]) => {
      let d = '';
      for (const s of of) {
        const x0 = clampX(xOf(s.from));
        const y = yOf(s.value.number);
        d += d ? `H${x0}V${y}` : `M${x0},${y}`;
      }
      const last = of.at(-1);
      if (last) d += `H${clampX(xOf(last.to))}`;
      return d;
    };
    let fill = '';
    for (const s of segments) {
      // BOOL: the TRUE stretches are filled too, so they read at a glance.
      if (kind === 'bool' && s.value.number) fill += `M${clampX(xOf(s.from))},${bottom}V${top}H${clampX(xOf(s.to))}V${bottom}Z`;
    }
    if (fill) plot.append(svg('path', { class: 'lane-high', d: fill }));
    plot.append(svg('path', { class: 'lane-trace', d: stepLine(segments) }));
    // The other recording over it: dashed, in its own colour, drawn last so it stays visible where
    // the two are equal.
    if (others && others.length > 0) plot.append(svg('path', { class: 'lane-trace lane-compared', d: stepLine(others) }));
    if (range && kind === 'number') {
      const max = svg('text', { class: 'lane-max', x: 2, y: 10 });
      max.textContent = range.max.text;
      const min = svg('text', { class: 'lane-min', x: 2, y: h - 3 });
      min.textContent = range.min.text;
      plot.append(max, min);
    }
  }

  /** Enums and strings: a segment per value, with the value written in when it fits. */
  private bus(plot: SVGSVGElement, segments: Segment[], xOf: (cycle: number) => number, clampX: (x: number) => number, h: number) {
    const font = getComputedStyle(plot).font || '11px sans-serif';
    const top = 2;
    const bottom = h - 2;
    const mid = h / 2;
    for (const s of segments) {
      const x0 = clampX(xOf(s.from));
      const x1 = clampX(xOf(s.to));
      const slope = Math.min(3, (x1 - x0) / 2);
      const shape = svg('polygon', {
        class: 'lane-segment',
        points: [
          [x0, mid],
          [x0 + slope, top],
          [x1 - slope, top],
          [x1, mid],
          [x1 - slope, bottom],
          [x0 + slope, bottom],
        ]
          .map(([x, y]) => `${px(x)},${px(y)}`)
          .join(' '),
        'data-from': s.from,
        'data-to': s.to,
      });
      plot.append(shape);
      const room = x1 - x0 - 2 * slope - 4;
      if (room > 0 && textWidth(s.value.text, font) <= room) {
        const text = svg('text', { class: 'lane-text', x: px((x0 + x1) / 2), y: px(mid + 4), 'text-anchor': 'middle' });
        text.textContent = s.value.text;
        plot.append(text);
      }
    }
  }

  /** The other recording's enum or string stretches: dashed outlines over the session's segments
   *  (their values in the hover and the header). */
  private busOutline(plot: SVGSVGElement, segments: Segment[], xOf: (cycle: number) => number, clampX: (x: number) => number, h: number) {
    for (const s of segments) {
      const x0 = clampX(xOf(s.from));
      const x1 = clampX(xOf(s.to));
      plot.append(
        svg('rect', { class: 'lane-compared lane-compared-segment', x: x0, y: 1, width: px(Math.max(0, x1 - x0)), height: h - 2, 'data-from': s.from, 'data-to': s.to }),
      );
    }
  }

  /** Hover shows the variable, the cycle and the value there; a click on an edge seeks to the
   *  statement that wrote the value. */
  private interact(
    plot: SVGSVGElement,
    hover: SVGLineElement,
    signal: Signal,
    context: LaneContext,
    xOf: (cycle: number) => number,
    width: number,
    other?: Signal,
  ) {
    const sides = this.sides();
    // Hovering a cycle while comparing: both recordings' values there, each with its letter.
    const valuesAt = (cycle: number) => {
      const own = valueAt(signal, cycle)?.text ?? '?';
      return other && sides ? `${sides.own} ${own} · ${sides.other} ${valueAt(other, cycle)?.text ?? '?'}` : own;
    };
    const at = (event: PointerEvent | MouseEvent) => {
      const box = plot.getBoundingClientRect();
      const x = ((event.clientX - box.left) / Math.max(1, box.width)) * width;
      const span = context.window.last - context.window.first;
      const cycle = Math.round(context.window.first + (span > 0 ? (x / width) * span : 0));
      return { x, cycle, edge: nearestEdge(signal, x, xOf, edgeReach) };
    };
    const edgeText = (edge: SignalChange, action: string) => {
      const before = valueAt(signal, edge.cycle, edge.step - 1)?.text ?? '?';
      return `${signal.variable}\ncycle ${edge.cycle}: ${before} → ${edge.value.text} (at ${edge.cycle}:${edge.step})\n${action}: go to the statement that wrote it`;
    };
    const show = (text: string, lineX: number, clientX: number, clientY: number) => {
      hover.setAttribute('x1', String(px(lineX)));
      hover.setAttribute('x2', String(px(lineX)));
      hover.setAttribute('visibility', 'visible');
      this.tip.textContent = text;
      this.tip.hidden = false;
      const tipBox = this.tip.getBoundingClientRect();
      const left = Math.min(clientX + 12, window.innerWidth - tipBox.width - 4);
      const top = clientY + 16 + tipBox.height > window.innerHeight ? clientY - tipBox.height - 8 : clientY + 16;
      this.tip.style.left = `${Math.max(0, left)}px`;
      this.tip.style.top = `${Math.max(0, top)}px`;
    };
    const hide = () => {
      this.tip.hidden = true;
      hover.setAttribute('visibility', 'hidden');
      plot.classList.remove('on-edge');
    };
    plot.addEventListener('pointermove', (event) => {
      const { x, cycle, edge } = at(event);
      plot.classList.toggle('on-edge', edge !== undefined);
      if (edge) show(edgeText(edge, 'click'), xOf(edge.cycle), event.clientX, event.clientY);
      else show(`${signal.variable}\ncycle ${cycle}: ${valuesAt(cycle)}`, x, event.clientX, event.clientY);
    });
    plot.addEventListener('pointerleave', hide);
    plot.addEventListener('click', (event) => {
      const { edge } = at(event);
      if (edge) context.seek(writerPosition(edge));
    });

    // From the keyboard: ←/→ go from edge to edge (starting at the current position), Enter seeks.
    const changes = signal.changes ?? [];
    if (changes.length === 0) return;
    plot.tabIndex = 0;
    let focused = -1;
    plot.addEventListener('keydown', (event) => {
      if (event.key === 'ArrowRight' || event.key === 'ArrowLeft') {
        event.preventDefault();
        const forward = event.key === 'ArrowRight';
        if (focused < 0) {
          const from = context.position ?? { cycle: context.window.first, step: 0 };
          const after = changes.findIndex((c) => c.cycle > from.cycle || (c.cycle === from.cycle && c.step > from.step));
          focused = forward ? (after < 0 ? changes.length - 1 : after) : (after < 0 ? changes.length : after) - 1;
        } else {
          focused += forward ? 1 : -1;
        }
        focused = Math.max(0, Math.min(changes.length - 1, focused));
        const edge = changes[focused];
        const box = plot.getBoundingClientRect();
        const x = xOf(edge.cycle);
        show(edgeText(edge, 'Enter'), x, box.left + (x / width) * box.width, box.top);
      } else if ((event.key === 'Enter' || event.key === ' ') && focused >= 0) {
        event.preventDefault();
        context.seek(writerPosition(changes[focused]));
      } else if (event.key === 'Escape') {
        focused = -1;
        hide();
      }
    });
    plot.addEventListener('blur', () => {
      focused = -1;
      hide();
    });
  }
}
