// The pipeline timeline of one iteration: stages as rows, a bar per block (forward, backward,
// send, gradient sync, optimizer), and the gaps between them (the bubble) hatched. Drawn on a
// canvas (thousands of blocks stay fast); a table beside it gives the idle time per stage.
import { duration, percent } from './format.js';

export const KINDS = ['forward', 'backward', 'send', 'dp_sync', 'optimizer'];
const KIND_LABEL = { forward: 'forward', backward: 'backward (+ recompute)', send: 'send/receive',
  dp_sync: 'gradient sync', optimizer: 'optimizer', other: 'other' };
const KIND_COLOR = { forward: '--c-forward', backward: '--c-backward', send: '--c-pp_comm',
  dp_sync: '--c-dp_comm', optimizer: '--c-optimizer', other: '--c-other' };

/** Timeline columns from either the worker's typed columns or the report's {events: [...]}. */
export function toColumns(timeline) {
  if (!timeline) return null;
  if (timeline.columns) return { ...timeline.columns, kinds: timeline.kinds ?? KINDS };
  const ev = timeline.events ?? [];
  const n = ev.length;
  const c = {
    length: n, stage: new Int32Array(n), kind: new Uint8Array(n), microBatch: new Int32Array(n),
    chunk: new Int32Array(n), start: new Float64Array(n), end: new Float64Array(n), kinds: KINDS,
  };
  ev.forEach((e, i) => {
    c.stage[i] = e.stage;
    const k = KINDS.indexOf(e.kind);
    c.kind[i] = k < 0 ? KINDS.length : k;
    c.microBatch[i] = e.micro_batch ?? 0;
    c.chunk[i] = e.chunk ?? 0;
    c.start[i] = e.start_s;
    c.end[i] = e.end_s;
  });
  return c;
}

/**
 * Rows of the chart: per stage, its events' indices in start order, busy time (union of its
 * blocks) and idle time within the span [0, span].
 */
export function layout(cols, stages, span) {
  const rows = Array.from({ length: stages }, () => ({ events: [], busy: 0, idle: 0 }));
  let end = 0;
  for (let i = 0; i < cols.length; i++) {
    const s = cols.stage[i];
    if (s >= 0 && s < stages) rows[s].events.push(i);
    end = Math.max(end, cols.end[i]);
  }
  const total = Math.max(span ?? 0, end);
  for (const row of rows) {
    row.events.sort((a, b) => cols.start[a] - cols.start[b]);
    let busy = 0;
    let reach = 0;
    for (const i of row.events) {
      const a = Math.max(cols.start[i], reach);
      const b = cols.end[i];
      if (b > a) busy += b - a;
      reach = Math.max(reach, b);
    }
    row.busy = busy;
    row.idle = Math.max(0, total - busy);
  }
  return { rows, span: total };
}

function niceStep(span, target) {
  const raw = span / target;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

const ROW = 22;
const AXIS = 20;
const LEFT = 58;
const RIGHT = 62;

// Colours come from CSS custom properties; read once per colour scheme.
let palette = null;
export function resetColors() { palette = null; }

function colors(canvas) {
  if (palette) return palette;
  const style = getComputedStyle(canvas);
  const v = (name) => style.getPropertyValue(name).trim() || '#888';
  const hatch = document.createElement('canvas');
  hatch.width = hatch.height = 6;
  const hg = hatch.getContext('2d');
  hg.fillStyle = v('--c-bubble-bg');
  hg.fillRect(0, 0, 6, 6);
  hg.strokeStyle = v('--c-bubble');
  hg.lineWidth = 1.2;
  hg.beginPath();
  hg.moveTo(0, 6);
  hg.lineTo(6, 0);
  hg.stroke();
  palette = {
    muted: v('--muted'), grid: v('--grid'), hatch,
    fills: [...KINDS, 'other'].map((k) => v(KIND_COLOR[k])),
  };
  return palette;
}

/** Draws the chart into `canvas` at `cssWidth`; returns a hit-test function (x, y) -> event index. */
export function draw(canvas, cols, lay, cssWidth) {
  const c = colors(canvas);
  const n = lay.rows.length;
  const height = AXIS + n * ROW + 4;
  const dpr = window.devicePixelRatio || 1;
  const pw = Math.round(cssWidth * dpr);
  const ph = Math.round(height * dpr);
  if (canvas.width !== pw || canvas.height !== ph) {
    canvas.width = pw;
    canvas.height = ph;
    canvas.style.width = `${cssWidth}px`;
    canvas.style.height = `${height}px`;
  }
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, cssWidth, height);
  const plotW = Math.max(10, cssWidth - LEFT - RIGHT);
  const scale = plotW / lay.span;

  // Axis.
  g.font = '11px system-ui, sans-serif';
  g.fillStyle = c.muted;
  g.strokeStyle = c.grid;
  g.lineWidth = 1;
  const step = niceStep(lay.span, Math.max(2, Math.floor(plotW / 90)));
  g.textAlign = 'center';
  g.textBaseline = 'middle';
  g.beginPath();
  for (let t = 0; t <= lay.span * 1.0001; t += step) {
    const px = Math.round(LEFT + t * scale) + 0.5;
    g.moveTo(px, AXIS - 4);
    g.lineTo(px, height - 2);
    g.fillText(duration(t), Math.min(Math.max(px, LEFT + 14), LEFT + plotW - 14), AXIS / 2);
  }
  g.stroke();

  // Rows: the bubble (hatched) underneath, blocks on top, one path per kind.
  g.fillStyle = g.createPattern(c.hatch, 'repeat');
  for (let s = 0; s < n; s++) g.fillRect(LEFT, AXIS + s * ROW + 3, plotW, ROW - 6);
  const kindCount = c.fills.length;
  const paths = Array.from({ length: kindCount }, () => new Path2D());
  for (let s = 0; s < n; s++) {
    const y = AXIS + s * ROW + 3;
    for (const i of lay.rows[s].events) {
      const x0 = LEFT + cols.start[i] * scale;
      const full = (cols.end[i] - cols.start[i]) * scale;
      const w = full > 3 ? full - 0.8 : Math.max(0.6, full); // a hairline between wide blocks
      paths[Math.min(cols.kind[i], kindCount - 1)].rect(x0, y, w, ROW - 6);
    }
  }
  for (let k = 0; k < kindCount; k++) {
    g.fillStyle = c.fills[k];
    g.fill(paths[k]);
  }

  // Labels: stage names on the left, idle share on the right.
  g.fillStyle = c.muted;
  g.textAlign = 'left';
  g.fillText('idle', LEFT + plotW + 8, AXIS / 2);
  for (let s = 0; s < n; s++) {
    const y = AXIS + s * ROW + ROW / 2;
    g.textAlign = 'right';
    g.fillText(`stage ${s}`, LEFT - 8, y);
    g.textAlign = 'left';
    g.fillText(percent(lay.rows[s].idle / lay.span), LEFT + plotW + 8, y);
  }

  return (px, py) => {
    const s = Math.floor((py - AXIS) / ROW);
    if (s < 0 || s >= n || px < LEFT) return -1;
    const t = (px - LEFT) / scale;
    const slack = 2 / scale;
    let best = -1;
    for (const i of lay.rows[s].events) {
      if (cols.start[i] - slack <= t && t <= cols.end[i] + slack) {
        best = i;
        if (cols.start[i] <= t && t <= cols.end[i]) break;
      }
    }
    return best;
  };
}

export function describe(cols, i) {
  const kind = cols.kinds[cols.kind[i]] ?? 'other';
  const what = KIND_LABEL[kind] ?? kind;
  const mb = kind === 'forward' || kind === 'backward' || kind === 'send'
    ? `, micro-batch ${cols.microBatch[i]}${cols.chunk[i] ? `, chunk ${cols.chunk[i]}` : ''}` : '';
  return `stage ${cols.stage[i]}: ${what}${mb}, ${duration(cols.start[i])} → ${duration(cols.end[i])}` +
    ` (${duration(cols.end[i] - cols.start[i])})`;
}

export function legendKinds(cols) {
  const present = new Set();
  for (let i = 0; i < cols.length; i++) present.add(cols.kinds[cols.kind[i]] ?? 'other');
  return [...KINDS, 'other'].filter((k) => present.has(k)).map((k) => [k, KIND_LABEL[k], KIND_COLOR[k]]);
}
