// The Pipeline timeline card: one iteration on each pipeline stage (timeline_chart.js draws it
// on a canvas), its legend, zoom, colour by kind or by group, one replica set or all, the idle
// time per row as a table, and a PNG. Past the blocks the engine lays out, a schematic of the
// same pipeline from the stages' times, said to be one.
import { $, fill, h } from '../ui/dom.js';
import { pngButton } from '../ui/download.js';
import { duration, integer, percent } from '../ui/format.js';
import { tip } from '../ui/tooltip.js';
import { gpuOf, gpuWord, many, shown, swatch } from './context.js';
import { shownStages, stageAt, stageCount } from './stages.js';
import * as tl from './timeline_chart.js';

let timelineState = null;

// The schedule's events are asked of the engine only while the card is near the screen (issue
// 39: DeepSeek-V3 on 256 GPUs lays out 16,000 events, most of the module's time for an edit, and
// the card's layout of them): a report estimated away from it comes without them ({omitted:
// true}), the card keeps the last plan's chart greyed (its element `pending`), and asks for this
// plan's as it comes within a screen's height of the viewport. Printed meanwhile, it says so.
let drawnFrom = null; // the report (with events) the chart shows
// The report on show when it came without events, and how to ask for them: its context's (taken
// when the card draws it: between the slices of a newer report's cards, shown.timeline is already
// the newer plan's, whose own draw asks again).
let pending = null;
let askPending = null;
let asking = null; // {report, done}: the events of `report` on their way

// The timeline's elements are built once and updated in place: a change re-draws the canvas
// without re-creating it or forcing a layout (the width comes from a ResizeObserver).
let tlDom = null;

function timelineDom() {
  if (tlDom) return tlDom;
  const canvas = h('canvas', { class: 'timeline-canvas', role: 'img' });
  const hover = h('div', { class: 'timeline-hover', hidden: true, 'aria-hidden': 'true' });
  const zoom = h('select', { id: 'timeline-zoom', 'data-local': 'true' },
    [1, 2, 4, 8, 16, 32].map((z) => h('option', { value: z }, `${z}×`)));
  const colorBy = h('select', { id: 'timeline-color', 'data-local': 'true' },
    h('option', { value: 'group' }, 'GPU type (group)'), h('option', { value: 'kind' }, 'kind of block'));
  const set = h('select', { id: 'timeline-set', 'data-local': 'true' });
  const colorTool = h('label', { class: 'inline-check', hidden: true }, 'Colour by ', colorBy);
  const setTool = h('label', { class: 'inline-check', hidden: true }, 'Replica sets ', set);
  const scroller = h('div', { class: 'timeline-scroll' }, canvas, hover);
  const legend = h('ul', { class: 'legend' });
  const idleBody = h('tbody');
  const chart = h('div', { class: 'timeline-chart' },
    h('div', { class: 'timeline-tools' }, legend,
      h('div', { class: 'timeline-selects' }, setTool, colorTool, h('label', { class: 'inline-check' }, 'Zoom ', zoom))),
    scroller,
    h('p', { class: 'buttons' }, 'Download ', pngButton('timeline.png', async () => { await askForEvents(); drawTimeline({ now: true }); return canvas; })),
    h('details', { class: 'idle-details' }, h('summary', null, 'Idle time per stage'),
      h('table', { class: 'idle' },
        h('caption', { class: 'sr-only' }, 'Idle time per stage'),
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Stage'), h('th', { scope: 'col' }, 'Busy'),
          h('th', { scope: 'col' }, 'Idle'), h('th', { scope: 'col' }, 'Idle share'))),
        idleBody)));
  const note = h('p', { class: 'hint', hidden: true });
  const capNote = h('p', { class: 'hint', hidden: true, 'data-capped': '' });
  const bandNote = h('p', { class: 'hint band-note', hidden: true },
    'Each stage\'s steady state (alternating forward and backward) is drawn as one band with its count, ' +
    'the time its blocks take solid and the time it waits for slower stages hatched after them: the blocks ' +
    'would be narrower than a pixel. Zoom in to see every block.');
  const pendingNote = h('p', { class: 'hint timeline-pending' },
    'This plan\'s timeline was not drawn yet (it is computed as its card comes on screen): print again to include it.');
  fill($('#timeline'), note, chart, pendingNote);
  chart.insertBefore(bandNote, scroller);
  chart.insertBefore(capNote, scroller);
  tlDom = { canvas, hover, zoom, colorBy, set, colorTool, setTool, scroller, legend, idleBody, chart, note, bandNote, capNote, width: 0, legendKey: '', setKey: '', visible: false, stale: false, near: false };
  // A zoom chosen on the card is drawn at once, wherever the chart sits against the viewport.
  zoom.addEventListener('change', () => drawTimeline({ now: true }));
  // (While this plan's events are on their way, the choice applies when they come.)
  colorBy.addEventListener('change', () => { if (drawnFrom && !pending) renderTimeline(drawnFrom); });
  set.addEventListener('change', () => { if (drawnFrom && !pending) renderTimeline(drawnFrom); });
  canvas.addEventListener('mousemove', (e) => {
    const st = timelineState;
    if (!st?.hit) return;
    const rect = canvas.getBoundingClientRect();
    const i = st.hit(e.clientX - rect.left, e.clientY - rect.top);
    if (i < 0) { hover.hidden = true; return; }
    hover.textContent = tl.describe(st.cols, i, rowName(st.cols.replica[i], st.cols.stage[i], st.cols.group[i], st.sets > 1, 'long'));
    hover.hidden = false;
    const left = e.clientX - scroller.getBoundingClientRect().left + scroller.scrollLeft;
    hover.style.left = `${Math.max(0, Math.min(left + 12, scroller.scrollWidth - hover.offsetWidth - 4))}px`;
    hover.style.top = `${e.clientY - rect.top + 14}px`;
  });
  canvas.addEventListener('mouseleave', () => { hover.hidden = true; });
  new ResizeObserver((entries) => {
    const w = Math.round(entries[entries.length - 1].contentRect.width);
    if (w && w !== tlDom.width) { tlDom.width = w; drawTimeline(); }
  }).observe(scroller);
  // Drawn when on screen (issue 39): below the fold a redraw per edit cost ~27 ms of the main thread
  // for DeepSeek-V3 on 256 GPUs; the chart is drawn as it scrolls into view (or is printed or saved).
  new IntersectionObserver((entries) => {
    tlDom.visible = entries[entries.length - 1].isIntersecting;
    if (tlDom.visible && tlDom.stale) drawTimeline();
  }).observe(scroller);
  // Near the screen: within its height above or below.
  new IntersectionObserver((entries) => {
    tlDom.near = entries[entries.length - 1].isIntersecting;
    if (tlDom.near) askForEvents();
  }, { rootMargin: '100% 0px' }).observe($('#timeline'));
  // (Printing cannot wait for the engine: a plan's events not yet asked for are asked for now,
  // and the print says to print again.)
  window.addEventListener('beforeprint', () => { askForEvents(); drawTimeline({ now: true }); });
  return tlDom;
}

/**
 * A timeline row's name: "stage 1", "set 1 · stage 0 · H100" (GPU with several groups); `form`:
 * 'long' (the GPU's full name, for the hover), 'row', 'plain' (no GPU) or 'short' ("1 · s0").
 */
function rowName(replica, stage, group, sets, form = 'row') {
  if (form === 'short') return sets ? `${replica} · s${stage}` : `s${stage}`;
  const gpu = !many() || group < 0 || form === 'plain' ? '' : form === 'long' ? ` (${gpuOf(group)})` : ` · ${gpuWord(group)}`;
  return `${sets ? `set ${replica} · ` : ''}stage ${stage}${gpu}`;
}

/** Whether an estimate should bring the schedule's events: the card is near the screen (or not built yet). */
export const timelineWanted = () => !tlDom || tlDom.near;

/**
 * Asks the engine for this plan's events when the report on show came without them, once; resolves
 * when they are drawn (or were not needed, or a newer report came meanwhile: it asks for its own).
 */
function askForEvents() {
  const r = pending;
  if (!r) return Promise.resolve();
  if (asking?.report === r) return asking.done;
  const done = askPending().then((answer) => {
    // (A refusal cannot come for a plan just estimated; an engine that failed says so elsewhere.)
    if (pending === r && answer?.report?.timeline && !answer.report.timeline.omitted) renderTimeline(answer.report);
  }, () => {});
  asking = { report: r, done };
  return done;
}

function markPending(on) {
  $('#timeline').classList.toggle('pending', on);
  $('#timeline').setAttribute('aria-busy', String(on));
}

export function renderTimeline(r) {
  const dom = timelineDom();
  if (r.timeline?.omitted) {
    pending = r;
    askPending = shown.timeline;
    markPending(true);
    if (dom.near) askForEvents();
    return;
  }
  pending = null;
  drawnFrom = r;
  markPending(false);
  timelineState = null;
  let cols = r.timeline ? tl.toColumns(r.timeline) : null;
  // Too many blocks for the engine to lay out: a schematic of the same pipeline from the stages'
  // times (warm-up and drain in full, the steady state a band), said to be one.
  // Thousands of stages: the rows a reader looks for (stages.js), as every card draws them.
  const capped = shownStages(r, 'compute');
  const keep = capped.note ? new Set(capped.stages.map((s) => s.index)) : null;
  let schematic = null;
  if (r.timeline?.truncated || (cols && cols.length === 0)) {
    const b = r.breakdown_s ?? {};
    schematic = tl.schematic(r.stages, stageCount(r), r.micro_batches, r.iteration_time_s - (b.dp_comm ?? 0) - (b.optimizer ?? 0), keep);
    cols = schematic.cols;
  }
  if (!cols) {
    dom.chart.hidden = true;
    dom.note.hidden = false;
    dom.note.dataset.timeline = 'absent';
    dom.note.textContent = 'This engine build reports no timeline.';
    return;
  }
  dom.chart.hidden = false;
  dom.note.hidden = !schematic;
  dom.note.dataset.timeline = schematic ? 'schematic' : 'events';
  if (schematic) {
    dom.note.textContent = `This schedule has ${integer(2 * r.micro_batches * stageCount(r))} or more blocks, more ` +
      'than the engine lays out: below is a schematic of it from each stage\'s times (warm-up and drain in full, ' +
      'the steady state as one band per stage), not the engine\'s schedule. The breakdown above is exact.';
  }
  // Replica sets on different groups: a row per set and stage (or one set, chosen).
  const sets = shown.layout === 'replicas' ? Math.max(1, r.replicas?.length ?? 1) : 1;
  const setKey = String(sets);
  if (setKey !== dom.setKey) {
    dom.setKey = setKey;
    fill(dom.set, h('option', { value: '-1' }, 'all'),
      Array.from({ length: sets }, (_, k) => h('option', { value: k },
        `set ${k} (${gpuOf(r.replicas[k]?.group ?? 0)})`)));
  }
  dom.setTool.hidden = sets < 2;
  dom.colorTool.hidden = !many();
  const only = sets > 1 ? Number(dom.set.value) : -1;
  const colorBy = many() ? dom.colorBy.value : 'kind';
  const lay = tl.layout(cols, { stages: stageCount(r), replicas: schematic ? 1 : sets, only: schematic ? -1 : only }, r.iteration_time_s);
  if (schematic) {
    if (keep) lay.rows = lay.rows.filter((row) => keep.has(row.stage));
    lay.rows.forEach((row) => {
      row.band = schematic.bands[row.stage];
      row.shown = row.events;
      if (row.group < 0) row.group = stageAt(r, row.stage)?.group ?? 0; // a stage with no warm-up or drain block
      row.busy += row.band.busy;
      row.idle = Math.max(0, lay.span - row.busy);
    });
  }
  else if (keep) {
    lay.rows = lay.rows.filter((row) => keep.has(row.stage));
  }
  dom.capNote.hidden = !keep;
  if (keep) dom.capNote.textContent = capped.note;
  const names = (form) => lay.rows.map((row) => rowName(row.replica, row.stage, row.group, sets > 1, form));
  const labels = names('row');
  dom.canvas.setAttribute('aria-label', `Pipeline timeline of one iteration: ${stageCount(r)} stages` +
    `${sets > 1 ? ` in each of ${sets} replica sets` : ''}, ${cols.length} blocks over ${duration(lay.span)}` +
    `${colorBy === 'group' ? ', coloured by GPU type' : ''}; idle per stage in the table below`);
  dom.canvas.dataset.colorBy = colorBy;
  dom.canvas.dataset.rows = String(lay.rows.length);
  const kinds = tl.legendKinds(cols);
  const present = [...new Set(lay.rows.map((row) => row.group).filter((g) => g >= 0))].sort((a, b) => a - b);
  const key = `${colorBy}|${kinds.map((k) => k[0]).join()}|${present.map(gpuOf).join()}`;
  if (key !== dom.legendKey) {
    dom.legendKey = key;
    const idle = h('li', null, h('span', { class: 'swatch bubble-swatch' }), 'idle (bubble)', tip('bubble', 'bubble'));
    if (colorBy === 'group') {
      const has = (k) => kinds.some(([x]) => x === k);
      fill(dom.legend,
        present.map((g) => h('li', { 'data-group': g }, swatch(g), `group ${g}: ${gpuOf(g)}`)),
        h('li', null, h('span', { class: 'swatch split-swatch' }), 'faded: forward, solid: backward'),
        has('send') ? h('li', null, h('span', { class: 'swatch send-swatch' }), 'thin: blocking send', tip('send')) : null,
        kinds.filter(([k]) => !['forward', 'backward', 'input_grad', 'send'].includes(k))
          .map(([, label, v]) => h('li', null, h('span', { class: 'swatch', style: { background: `var(${v})` } }), label)),
        idle);
    } else {
      fill(dom.legend,
        kinds.map(([k, label, v]) => h('li', null, h('span', {
          class: `swatch${k === 'send' ? ' thin-swatch' : ''}`, style: { background: `var(${v})` },
        }), label, k === 'send' ? tip('send') : null)),
        idle);
    }
  }
  fill(dom.idleBody, lay.rows.map((row, k) => h('tr', { 'data-replica': row.replica, 'data-stage': row.stage, 'data-group': row.group },
    h('th', { scope: 'row' }, many() && row.group >= 0 ? swatch(row.group) : null, labels[k]),
    h('td', null, duration(row.busy)), h('td', null, duration(row.idle)), h('td', null, percent(row.idle / lay.span)))));
  // (The steady state's bands, tl.aggregate, are found when the chart is first drawn: off screen
  // an edit needs only the rows' busy and idle times.)
  timelineState = { cols, lay, hit: null, colorBy, labels: [labels, names('plain'), names('short')], sets, schematic: !!schematic, aggregated: !!schematic };
  drawTimeline();
}

/** (Re)draws the timeline at the current width, zoom and colour scheme; off screen, once it is on it. */
export function drawTimeline({ now = false } = {}) {
  const st = timelineState;
  if (!st || !tlDom) return;
  tlDom.stale = !now && !tlDom.visible;
  if (tlDom.stale) return;
  if (!tlDom.width) tlDom.width = tlDom.scroller.clientWidth;
  const width = Math.max(280, tlDom.width);
  const zoom = Number(tlDom.zoom.value) || 1;
  const cssWidth = Math.min(16000, width * zoom);
  if (!st.aggregated) {
    tl.aggregate(st.cols, st.lay);
    st.aggregated = true;
  }
  // Blocks narrower than a few pixels: the steady state as a band (zoom in for every block).
  const banded = st.schematic || tl.dense(st.cols, st.lay, cssWidth * 0.6);
  st.hit = tl.draw(tlDom.canvas, st.cols, st.lay, cssWidth, { colorBy: st.colorBy, labels: st.labels, banded });
  tlDom.canvas.dataset.banded = String(banded);
  tlDom.bandNote.hidden = !banded || st.schematic;
}
