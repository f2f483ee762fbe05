// The pipeline timeline of one iteration: a row per pipeline stage (per replica set and stage when
// replica sets run on different groups), a bar per block (forward, backward, blocking send,
// gradient sync, optimizer), and the gaps between them (the bubble) hatched. Bars are coloured by
// kind, or by the group (GPU type) the block runs on: faded forward, solid backward, a thin bar
// for a send. Drawn on a canvas (thousands of blocks stay fast); a table beside it gives the
// idle time per row.
import { duration, percent } from '../ui/format.js';
import { GROUP_COLORS } from '../scenario/groups.js';
import { KINDS } from '../engine/kinds.js';

const KIND_LABEL = { forward: 'forward', backward: 'backward (+ recompute)', send: 'blocking send',
  dp_sync: 'gradient sync', optimizer: 'optimizer', input_grad: 'backward, input gradients (B)',
  weight_grad: 'backward, weight gradients (W)', other: 'other' };
// B takes the backward's colour (it is what the previous stage waits for); W, which a zero-bubble
// schedule moves into the bubble, its own.
const KIND_COLOR = { forward: '--c-forward', backward: '--c-backward', send: '--c-pp_comm',
  dp_sync: '--c-dp_comm', optimizer: '--c-optimizer', input_grad: '--c-backward',
  weight_grad: '--c-weight_grad', other: '--c-other' };
const SEND = KINDS.indexOf('send');
const INPUT_GRAD = KINDS.indexOf('input_grad');
const PER_MICRO_BATCH = new Set(['forward', 'backward', 'send', 'input_grad', 'weight_grad']);

/** The timeline's typed columns (the worker's, see worker.js), with the names of their kinds. */
export function toColumns(timeline) {
  return timeline?.columns ? { ...timeline.columns, kinds: timeline.kinds ?? KINDS } : null;
}

/**
 * Rows of the chart: one per (replica set, stage) — all sets, or only set `only` — with its
 * events' indices in start order, the group it runs on, busy time (union of its blocks) and idle
 * time within the span [0, span].
 */
export function layout(cols, { stages, replicas = 1, only = -1 }, span) {
  const sets = only >= 0 ? [only] : Array.from({ length: replicas }, (_, r) => r);
  const rows = sets.flatMap((replica) => Array.from({ length: stages }, (_, stage) =>
    ({ replica, stage, group: -1, events: null, busy: 0, idle: 0 })));
  // Each event's row (-1: none shown), counted, then every row's events as a slice of one array in
  // the engine's order: no array grown an event at a time (16,896 events for DeepSeek-V3 on 256
  // GPUs, each edit).
  const n = cols.length;
  const rowOf = new Int32Array(n);
  const counts = new Int32Array(rows.length);
  let end = 0;
  for (let i = 0; i < n; i++) {
    const s = cols.stage[i];
    const r = cols.replica[i];
    end = Math.max(end, cols.end[i]);
    let k = -1;
    if (s >= 0 && s < stages) {
      if (only >= 0) k = r === only ? s : -1;
      else k = r >= 0 && r < replicas ? r * stages + s : -1;
    }
    rowOf[i] = k;
    if (k >= 0) counts[k]++;
  }
  const all = new Int32Array(counts.reduce((a, c) => a + c, 0));
  const filled = new Int32Array(rows.length);
  for (let k = 0, at = 0; k < rows.length; at += counts[k], k++) {
    rows[k].events = all.subarray(at, at + counts[k]);
  }
  for (let i = 0; i < n; i++) {
    const k = rowOf[i];
    if (k < 0) continue;
    const row = rows[k];
    if (row.group < 0) row.group = cols.group[i];
    row.events[filled[k]++] = i;
  }
  const total = Math.max(span ?? 0, end);
  for (const row of rows) {
    // (The engine lists a stage's events in the order they start: sorted only when they are not,
    // a pass instead of a sort's 14 comparator calls an event.)
    if (!inOrder(row.events, cols.start)) row.events.sort((a, b) => cols.start[a] - cols.start[b]);
    row.busy = covered(cols, row.events);
    row.idle = Math.max(0, total - row.busy);
  }
  return { rows, span: total };
}

/** Whether `events` (indices) start in order: their times in `start` never decrease. */
function inOrder(events, start) {
  for (let k = 1; k < events.length; k++) if (start[events[k]] < start[events[k - 1]]) return false;
  return true;
}

const FORWARD = KINDS.indexOf('forward');
const BACKWARD = KINDS.indexOf('backward');

/**
 * The steady state of each row as one band: from its first backward to its last forward the
 * schedule alternates forward and backward (1F1B, interleaved or not), and at hundreds of
 * micro-batches those blocks are narrower than a pixel (a solid stripe). Sets row.band = {start,
 * end, count (forwards in it), busy (the time its blocks take: the rest of the band the stage
 * waits, for a slower stage's blocks)} and row.shown = the events outside it (warm-up, drain,
 * gradient sync, optimizer), drawn in full. Rows without both kinds keep every event.
 */
export function aggregate(cols, lay) {
  for (const row of lay.rows) {
    let first = Infinity;
    let last = -Infinity;
    for (const i of row.events) {
      if (cols.kind[i] === BACKWARD) first = Math.min(first, cols.start[i]);
      if (cols.kind[i] === FORWARD) last = Math.max(last, cols.end[i]);
    }
    if (!(last > first)) { row.band = null; row.shown = row.events; continue; }
    const inside = (i) => cols.start[i] >= first && cols.end[i] <= last;
    const within = row.events.filter(inside);
    row.band = { start: first, end: last, count: within.filter((i) => cols.kind[i] === FORWARD).length, busy: covered(cols, within) };
    row.shown = row.events.filter((i) => !inside(i));
  }
  return lay;
}

/** The time `events` (indices, in the order they start) cover, overlaps counted once. */
function covered(cols, events) {
  let busy = 0;
  let reach = -Infinity;
  for (const i of events) {
    const a = Math.max(cols.start[i], reach);
    if (cols.end[i] > a) busy += cols.end[i] - a;
    reach = Math.max(reach, cols.end[i]);
  }
  return busy;
}

/** Average blocks per row: the chart is dense when they are narrower than `px` pixels at `width`. */
export function dense(cols, lay, width, px = 3) {
  const perRow = cols.length / Math.max(1, lay.rows.length);
  return perRow > 0 && (width / perRow) < px;
}

/**
 * A schematic of a schedule too large for the engine to lay out (no events): per stage of a 1F1B
 * pipeline of `pp` stages and `m` micro-batches, its warm-up forwards, the steady band and the
 * drain backwards, from the stage's forward and backward times per micro-batch; the pipeline ends
 * at `end` (seconds). Returns columns shaped like toColumns' (and each stage's band, by its index).
 * Only the stages in `keep` (a Set of indices; all when null) are drawn, so only theirs are built;
 * a warm-up or drain of more than WARM_BLOCKS blocks (thousands of stages: each block under a
 * pixel) is one block of its kind, so a row costs at most that many rectangles.
 */
const WARM_BLOCKS = 64;
export function schematic(stages, pp, m, end, keep = null) {
  const ev = { start: [], end: [], stage: [], replica: [], group: [], kind: [], microBatch: [], chunk: [] };
  const push = (stage, group, kind, a, b, mb) => {
    ev.start.push(a); ev.end.push(b); ev.stage.push(stage); ev.replica.push(0); ev.group.push(group);
    ev.kind.push(kind); ev.microBatch.push(mb); ev.chunk.push(0);
  };
  const bands = [];
  // The report's per-micro-batch compute leaves out what runs on the critical path with it (TP
  // communication, launches): scale every block so the bottleneck stage's (m + pp - 1) blocks
  // fill the pipeline's time, as they do in the engine's own schedule.
  const slowest = Math.max(...stages.map((st) => st.forward_s + st.backward_s + st.recompute_s));
  const k = slowest > 0 ? end / ((m + pp - 1) * slowest) : 1;
  for (const st of stages) {
    const s = st.index;
    if (keep && !keep.has(s)) continue;
    const f = st.forward_s * k; // per micro-batch, as the report gives them
    const b = (st.backward_s + st.recompute_s) * k;
    const warm = Math.min(pp - 1 - s, m);
    const t0 = s * f;
    const last = end - s * b; // stage 0 finishes last: the backward wave returns to it
    if (warm > WARM_BLOCKS) {
      push(s, st.group ?? 0, FORWARD, t0, t0 + warm * f, 0);
      push(s, st.group ?? 0, BACKWARD, last - warm * b, last, m - warm);
    } else {
      for (let k = 0; k < warm; k++) push(s, st.group ?? 0, FORWARD, t0 + k * f, t0 + (k + 1) * f, k);
      for (let k = 0; k < warm; k++) push(s, st.group ?? 0, BACKWARD, last - (warm - k) * b, last - (warm - k - 1) * b, m - warm + k);
    }
    bands[s] = { start: t0 + warm * f, end: last - warm * b, count: m - warm, busy: (m - warm) * (f + b) };
  }
  const cols = Object.fromEntries(Object.entries(ev).map(([k, v]) => [k, Float64Array.from(v)]));
  return { cols: { ...cols, length: ev.start.length, kinds: KINDS }, bands };
}

function niceStep(span, target) {
  const raw = span / target;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

const ROW = 22;
const AXIS = 20;
const RIGHT = 62;

// Colours come from CSS custom properties; read once per colour scheme.
let palette = null;
export function resetColors() { palette = null; }

function rgb(text) {
  const t = text.trim();
  const m = /^#([0-9a-f]{6})$/i.exec(t) ?? /^#([0-9a-f]{3})$/i.exec(t);
  if (!m) return null;
  const hex = m[1].length === 3 ? [...m[1]].map((c) => c + c).join('') : m[1];
  return [0, 2, 4].map((k) => parseInt(hex.slice(k, k + 2), 16));
}

/** `a` mixed with `b` (CSS colours, hex): share `t` of b. */
function mix(a, b, t) {
  const x = rgb(a);
  const y = rgb(b);
  if (!x || !y) return a;
  return `rgb(${x.map((v, k) => Math.round(v + (y[k] - v) * t)).join(' ')})`;
}

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
  const panel = v('--panel');
  const text = v('--text');
  palette = {
    muted: v('--muted'), grid: v('--grid'), hatch, bandText: v('--panel'),
    fills: [...KINDS, 'other'].map((k) => v(KIND_COLOR[k])),
    // Per group: forward (light), backward (full), send (dark).
    groups: Array.from({ length: GROUP_COLORS }, (_, g) => {
      const c = v(`--g${g}`);
      return [mix(c, panel, 0.45), c, mix(c, text, 0.45)];
    }),
  };
  return palette;
}

/** The CSS colours of group g: [forward, backward, send] (after the first draw). */
export function groupShades(g) {
  return palette?.groups[g % GROUP_COLORS] ?? null;
}

/**
 * Draws the chart into `canvas` at `cssWidth`; returns a hit-test function (x, y) -> event index.
 * opts: colorBy ('kind' or 'group'), labels (one per row; or a list of such lists, longest
 * first: the first that fits in a third of the width is drawn).
 */
export function draw(canvas, cols, lay, cssWidth, { colorBy = 'kind', labels, banded = false } = {}) {
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
  g.font = '11px system-ui, sans-serif';
  const choices = Array.isArray(labels?.[0]) ? labels : [labels ?? lay.rows.map((row) => `stage ${row.stage}`)];
  const room = Math.max(58, cssWidth * 0.34);
  let names;
  let left;
  for (const option of choices) {
    names = option;
    left = 58;
    for (const name of names) left = Math.max(left, Math.ceil(g.measureText(name).width) + 16);
    if (left <= room) break;
  }
  left = Math.min(left, room);
  const plotW = Math.max(10, cssWidth - left - RIGHT);
  const scale = plotW / lay.span;

  // Axis.
  g.fillStyle = c.muted;
  g.strokeStyle = c.grid;
  g.lineWidth = 1;
  const step = niceStep(lay.span, Math.max(2, Math.floor(plotW / 90)));
  g.textAlign = 'center';
  g.textBaseline = 'middle';
  g.beginPath();
  for (let t = 0; t <= lay.span * 1.0001; t += step) {
    const px = Math.round(left + t * scale) + 0.5;
    g.moveTo(px, AXIS - 4);
    g.lineTo(px, height - 2);
    g.fillText(duration(t), Math.min(Math.max(px, left + 14), left + plotW - 14), AXIS / 2);
  }
  g.stroke();

  // Rows: the bubble (hatched) underneath, blocks on top, one path per colour. A blocking send is
  // a thinner bar in the middle of its row.
  g.fillStyle = g.createPattern(c.hatch, 'repeat');
  for (let s = 0; s < n; s++) g.fillRect(left, AXIS + s * ROW + 3, plotW, ROW - 6);
  const kindCount = c.fills.length;
  const byGroup = colorBy === 'group';
  const fills = [...c.fills, ...(byGroup ? c.groups.flat() : [])];
  const paths = fills.map(() => new Path2D());
  const h = ROW - 6;
  const bands = [];
  for (let s = 0; s < n; s++) {
    const y = AXIS + s * ROW + 3;
    const row = lay.rows[s];
    if (banded && row.band) bands.push([s, row.band]);
    for (const i of banded && row.band ? row.shown : row.events) {
      const x0 = left + cols.start[i] * scale;
      const full = (cols.end[i] - cols.start[i]) * scale;
      const w = full > 3 ? full - 0.8 : Math.max(0.6, full); // a hairline between wide blocks
      const kind = Math.min(cols.kind[i], kindCount - 1);
      let p = kind;
      if (byGroup && (kind <= SEND || kind === INPUT_GRAD)) {
        p = kindCount + (cols.group[i] % GROUP_COLORS) * 3 + (kind === INPUT_GRAD ? BACKWARD : kind);
      }
      if (kind === SEND) paths[p].rect(x0, y + h * 0.3, w, h * 0.4);
      else paths[p].rect(x0, y, w, h);
    }
  }
  for (let k = 0; k < fills.length; k++) {
    g.fillStyle = fills[k];
    g.fill(paths[k]);
  }
  // Steady-state bands: forward over backward (half each) for the time the blocks take, then the
  // time the stage waits in it (the hatched bubble beneath: a stage faster than the slowest waits
  // for its blocks each round, and drawn solid its whole band looked busy beside its idle share),
  // the count written in when it fits.
  for (const [s, band] of bands) {
    const y = AXIS + s * ROW + 3;
    const x0 = left + band.start * scale;
    const span = band.end - band.start;
    const busy = Math.min(span, band.busy ?? span);
    const w = Math.max(1, busy * scale);
    const group = lay.rows[s].group;
    const shade = byGroup && group >= 0 ? c.groups[group % GROUP_COLORS] : [c.fills[FORWARD], c.fills[BACKWARD]];
    g.fillStyle = shade[0];
    g.fillRect(x0, y, w, h / 2);
    g.fillStyle = shade[1];
    g.fillRect(x0, y + h / 2, w, h / 2);
    const waiting = span > 0 ? 1 - busy / span : 0;
    const text = `${band.count.toLocaleString('en-US')} × (forward + backward)${waiting >= 0.01 ? ` · waits ${percent(waiting)}` : ''}`;
    if (g.measureText(text).width + 12 < w) {
      g.fillStyle = c.bandText;
      g.textAlign = 'center';
      g.textBaseline = 'middle';
      g.fillText(text, x0 + w / 2, y + h / 2);
    }
  }

  // Labels: row names on the left, idle share on the right.
  g.fillStyle = c.muted;
  g.textAlign = 'left';
  g.fillText('idle', left + plotW + 8, AXIS / 2);
  for (let s = 0; s < n; s++) {
    const y = AXIS + s * ROW + ROW / 2;
    g.textAlign = 'right';
    g.fillText(names[s], left - 8, y);
    g.textAlign = 'left';
    g.fillText(percent(lay.rows[s].idle / lay.span), left + plotW + 8, y);
  }

  return (px, py) => {
    const s = Math.floor((py - AXIS) / ROW);
    if (s < 0 || s >= n || px < left) return -1;
    const t = (px - left) / scale;
    const slack = 2 / scale;
    let best = -1;
    const row = lay.rows[s];
    if (banded && row.band && t >= row.band.start && t <= row.band.end) return -1;
    for (const i of banded && row.band ? row.shown : row.events) {
      if (cols.start[i] - slack <= t && t <= cols.end[i] + slack) {
        best = i;
        if (cols.start[i] <= t && t <= cols.end[i]) break;
      }
    }
    return best;
  };
}

/** One block in words; `where` names its row ("stage 1 (H100 SXM5 80GB)"). */
export function describe(cols, i, where = `stage ${cols.stage[i]}`) {
  const kind = cols.kinds[cols.kind[i]] ?? 'other';
  const what = KIND_LABEL[kind] ?? kind;
  const mb = PER_MICRO_BATCH.has(kind)
    ? `, micro-batch ${cols.microBatch[i]}${cols.chunk[i] ? `, chunk ${cols.chunk[i]}` : ''}` : '';
  return `${where}: ${what}${mb}, ${duration(cols.start[i])} → ${duration(cols.end[i])}` +
    ` (${duration(cols.end[i] - cols.start[i])})`;
}

export function legendKinds(cols) {
  // Marked by kind number, then named (a Set of names per block cost DeepSeek-V3's ~10,000 blocks
  // 1-2 ms an edit).
  const seen = new Uint8Array(256);
  for (let i = 0; i < cols.length; i++) seen[cols.kind[i]] = 1;
  const present = new Set();
  seen.forEach((on, kind) => { if (on) present.add(cols.kinds[kind] ?? 'other'); });
  return [...KINDS, 'other'].filter((k) => present.has(k)).map((k) => [k, KIND_LABEL[k], KIND_COLOR[k]]);
}
