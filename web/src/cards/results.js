// The results: headline numbers, cost of a run, where the step goes, memory per stage, the
// pipeline timeline and the communication census. Every number carries its unit; exact values
// sit in data-value attributes (the browser tests compare them with the CLI's).
import { $, fill, h } from '../ui/dom.js';
import { csvButton, pngButton, save } from '../ui/download.js';
import { bytes, count, duration, gib, integer, money, num, percent, rate } from '../ui/format.js';
import { fullName } from '../scenario/frameworks.js';
import { groupColor, groupTextColor } from '../scenario/groups.js';
import * as tl from './timeline_chart.js';
import { tip } from '../ui/tooltip.js';

// The report's breakdown_s parts, in its order. A part with a third entry, the schema path of the
// input it needs ("model.moe": the token exchange of experts), is not listed among the parts that
// are zero when the scenario lacks that input (a dense model has no expert comm to speak of).
const PARTS = [
  ['forward', 'Forward'], ['backward', 'Backward'], ['recompute', 'Recompute'],
  ['tp_comm', 'TP comm'], ['cp_comm', 'CP comm'], ['ep_comm', 'Expert comm', 'model.moe'], ['pp_comm', 'PP send/recv'],
  ['bubble', 'Pipeline bubble'], ['dp_comm', 'DP sync'], ['optimizer', 'Optimizer'],
  ['other', 'Other comm'], ['host', 'CPU launches'],
];
const MEMORY = [
  ['weights', 'Weights', 'weights'], ['gradients', 'Gradients', 'gradients'],
  ['optimizer', 'Optimizer state', 'optimizer_mem'], ['activations', 'Activations', 'activations'],
  ['other', 'Other', 'other_mem'],
];

let report = null;
let censusStage = null;
let timelineState = null;
// The groups of the cluster the report is for (groups.js describeGroups), and its layout:
// 'stages', 'replicas' or 'none' (one group, even split).
let groups = [];
let layoutKind = 'none';
// Whether the scenario of the report gives the input at a schema path (context.given).
let given = () => true;
// The link presets (the census names a link by its id; the table shows its name).
let links = [];
const linkName = (id) => links.find((l) => l.id === id)?.name.replace(/\s*\(.*\)$/, '') ?? id;
const many = () => groups.length > 1;
const gpuOf = (g) => groups[g]?.gpu ?? `group ${g}`;
/** "A100 SXM4 80GB" -> "A100": the row labels of the timeline. */
const gpuWord = (g) => gpuOf(g).split(' ')[0];
const swatch = (g) => h('span', { class: 'swatch', style: { background: groupColor(g) } });

// Rows the page draws per stage at most. A plan may have thousands of stages (the engine allows
// them); drawing each would build tens of thousands of elements and stall the page, and no reader
// scans them all. Past this, the rows that answer the questions a reader has are kept.
const MAX_STAGE_ROWS = 48;

/**
 * The stages to draw as rows, in order: all of them when few, else the first and the last, the
 * bottleneck, those that do not fit and then the most loaded by `load(stage)`, up to
 * MAX_STAGE_ROWS. `note`: what was left out, in words, or null.
 */
function shownStages(r, load) {
  const n = r.stages.length;
  if (n <= MAX_STAGE_ROWS) return { stages: r.stages, note: null };
  const keep = new Set([0, n - 1, r.bottleneck_stage].filter((i) => Number.isInteger(i) && i >= 0 && i < n));
  for (const s of r.stages) if (!s.fits && keep.size < MAX_STAGE_ROWS / 2) keep.add(s.index);
  const byLoad = r.stages.map((s) => s.index).sort((a, b) => load(r.stages[b]) - load(r.stages[a]) || a - b);
  for (const i of byLoad) { if (keep.size >= MAX_STAGE_ROWS) break; keep.add(i); }
  return {
    stages: [...keep].sort((a, b) => a - b).map((i) => r.stages[i]),
    note: `${integer(keep.size)} of ${integer(n)} stages shown: the first, the last, the bottleneck, ` +
      'those that do not fit and the most loaded.',
  };
}

/**
 * A stage's layers in words: "20 layers", "16 layers + embedding" (the plan counts the input
 * embedding as a layer of the first stage, the output layer and loss as one of the last).
 */
function layersOf(r, s) {
  const extra = [r.plan?.embedding_in_split && s.index === 0 ? ' + embedding' : '',
    r.plan?.loss_in_split && s.index === r.stages.length - 1 ? ' + loss' : ''].join('');
  return `${s.layers} layers${extra}`;
}

/** A "?" with the term's formula worked out with this estimate's numbers under it. */
function worked(button, text) {
  if (button && text) button.dataset.more = `Here: ${text}`;
  return button;
}

/** A headline number: `shown` is "12.3 s" (split at the first space into value and unit). */
function metric(key, label, value, shown, sub, term = key, workedOut = '') {
  const cut = shown.indexOf(' ');
  const big = cut < 0 ? shown : shown.slice(0, cut);
  const unit = cut < 0 ? '' : shown.slice(cut + 1);
  // The formula with this estimate's numbers in it, under the formula itself.
  const help = worked(tip(term, label), workedOut);
  return h('div', { class: 'metric', 'data-metric': key, 'data-value': String(value) },
    h('div', { class: 'metric-label' }, label, help),
    h('div', { class: `metric-value${big.length > 6 ? ' long' : ''}` }, h('span', { class: 'metric-num' }, big),
      unit ? h('span', { class: 'metric-unit' }, ` ${unit}`) : null),
    sub ? h('div', { class: 'metric-sub' }, sub) : null);
}

function renderMetrics(r) {
  const tokens = r.tokens_per_s * r.iteration_time_s;
  const p = r.plan ?? {};
  const b = r.breakdown_s ?? {};
  const parts = PARTS.map(([k, name]) => [name, b[k] ?? 0]).filter(([, v]) => v > 0);
  fill($('#metrics'),
    metric('iteration_time_s', 'Iteration time', r.iteration_time_s, duration(r.iteration_time_s),
      `per step of ${count(tokens)} tokens` +
      `${r.stages.length > 1 ? ` · bottleneck: stage ${r.bottleneck_stage}` : ''}`, undefined,
      `${parts.map(([name, v]) => `${name.toLowerCase()} ${duration(v)}`).join(' + ')} = ${duration(r.iteration_time_s)}`),
    metric('tokens_per_s', 'Throughput', r.tokens_per_s, rate(r.tokens_per_s, 'tokens/s'),
      `${num(r.samples_per_s)} samples/s`, undefined,
      `${integer(p.global_batch)} × ${integer(Math.round(tokens / p.global_batch))} tokens ÷ ${duration(r.iteration_time_s)} = ${rate(r.tokens_per_s, 'tokens/s')}`),
    metric('mfu', 'MFU', r.mfu, percent(r.mfu), `HFU ${percent(r.hfu)}`, undefined,
      `${num(r.model_tflops_per_gpu)} ÷ ${num(r.peak_tflops_per_gpu)} TFLOP/s = ${percent(r.mfu)}`),
    metric('model_tflops_per_gpu', 'Model TFLOP/s per GPU', r.model_tflops_per_gpu,
      `${num(r.model_tflops_per_gpu)} TFLOP/s`, `of ${num(r.peak_tflops_per_gpu)} TFLOP/s dense peak`, undefined,
      `${num((r.model_tflops_per_gpu * r.gpus * r.iteration_time_s) / 1e3)} PFLOP per iteration ÷ ${duration(r.iteration_time_s)} ÷ ${integer(r.gpus)} GPUs`),
    metric('micro_batches', 'Micro-batches', r.micro_batches, integer(r.micro_batches),
      `per iteration and replica, on ${integer(r.gpus)} GPUs`, undefined,
      p.global_batch && p.dp && layoutKind !== 'replicas' ? `${integer(p.global_batch)} ÷ (${p.micro_batch} × ${p.dp}) = ${integer(r.micro_batches)}` : ''),
    metric('parameters', 'Parameters', r.parameters, count(r.parameters), 'in the model'));
}

/**
 * Names the training software the estimate assumes (the report's plan.framework): "Training
 * software: Megatron-Core (…), the default · change" (the button goes to the menu).
 */
export function renderSoftware(id, isDefault) {
  const el = $('#software');
  const key = `${id}|${isDefault}`;
  if (el.dataset.key === key) return;
  el.dataset.key = key;
  fill(el, 'Training software: ', h('strong', null, fullName(id)), isDefault ? ', the default' : '',
    h('span', { class: 'software-change' }, ' · ', h('button', { type: 'button', class: 'link', onclick: () => {
      const menu = $('#f-framework');
      menu?.scrollIntoView({ block: 'center' });
      menu?.focus({ preventScroll: true });
    } }, 'change')));
}

export function renderCost() {
  const out = $('#cost-out');
  if (!report || report.error) return;
  const tokens = Number($('#f-tokens').value) * 1e9;
  const price = Number($('#f-price').value);
  const valid = $('#f-tokens').value !== '' && $('#f-price').value !== '' && tokens >= 0 && price >= 0;
  const seconds_ = tokens / report.tokens_per_s;
  const gpuHours = report.gpus * seconds_ / 3600;
  const cost = gpuHours * price;
  fill(out,
    metric('train_time_s', 'Time to train', valid ? seconds_ : NaN, valid ? duration(seconds_) : '–',
      valid ? `at ${rate(report.tokens_per_s, 'tokens/s')}` : 'enter tokens and price', 'train_time',
      valid ? `${count(tokens)} tokens ÷ ${rate(report.tokens_per_s, 'tokens/s')} = ${duration(seconds_)}` : ''),
    metric('gpu_hours', 'GPU-hours', valid ? gpuHours : NaN, valid ? `${integer(gpuHours)} GPU-hours` : '–',
      valid ? `${integer(report.gpus)} GPUs × ${num(seconds_ / 3600)} h` : '', 'gpu_hours',
      valid ? `${integer(report.gpus)} GPUs × ${num(seconds_ / 3600)} h = ${integer(gpuHours)} GPU-hours` : ''),
    metric('cost_usd', 'Cost', valid ? cost : NaN, valid ? money(cost) : '–',
      valid ? `at $${num(price)} per GPU-hour` : '', 'cost',
      valid ? `${integer(gpuHours)} GPU-hours × $${num(price)} = ${money(cost)}` : ''));
}

function renderBreakdown(r) {
  const total = r.iteration_time_s;
  const parts = PARTS.map(([k, label]) => [k, label, r.breakdown_s[k] ?? 0]).filter(([, , v]) => v > 0);
  const bar = h('div', { class: 'stack', 'aria-hidden': 'true' },
    parts.map(([k, label, v]) => h('span', {
      class: 'seg', style: { width: `${(100 * v) / total}%`, background: `var(--c-${k})` },
      title: `${label}: ${duration(v)} (${percent(v / total)})`,
    })));
  const rows = parts.map(([k, label, v]) => h('tr', { 'data-part': k, 'data-value': String(v) },
    h('th', { scope: 'row' }, h('span', { class: 'swatch', style: { background: `var(--c-${k})` } }), label,
      worked(tip(k, label), `${duration(v)} of the ${duration(total)} step = ${percent(v / total)}`)),
    h('td', null, duration(v)),
    h('td', null, percent(v / total)),
    h('td', { class: 'bar-cell' }, h('span', { class: 'mini', style: { width: `${(100 * v) / total}%`, background: `var(--c-${k})` } }))));
  const zero = PARTS.filter(([k, , needs]) => !(r.breakdown_s[k] > 0) && (!needs || given(needs)))
    .map(([, l]) => l.toLowerCase());
  fill($('#breakdown'), bar,
    h('table', { class: 'parts' },
      h('caption', { class: 'sr-only' }, 'Time per iteration by part'),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Part'), h('th', { scope: 'col' }, 'Time'),
        h('th', { scope: 'col' }, 'Share'), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Bar')))),
      h('tbody', null, rows),
      h('tfoot', null, h('tr', null, h('th', { scope: 'row' }, 'Iteration'), h('td', null, duration(total)),
        h('td', null, '100 %'), h('td')))),
    zero.length ? h('p', { class: 'hint' }, `Zero in this plan: ${zero.join(', ')}.`) : null,
    h('p', { class: 'buttons' }, 'Download ', csvButton('breakdown.csv', () => [['part', 'seconds', 'share'],
      ...parts.map(([k, , v]) => [k, v, v / total]), ['iteration', total, 1]])));
}

function renderMemory(r) {
  const scale = Math.max(...r.stages.map((s) => Math.max(s.memory_bytes.total, s.memory_bytes.capacity)));
  const legend = h('ul', { class: 'legend' }, MEMORY.map(([k, label, term]) => h('li', null,
    h('span', { class: 'swatch', style: { background: `var(--m-${k})` } }), label, tip(term, label))),
  h('li', null, h('span', { class: 'swatch capacity-swatch' }), 'GPU capacity', tip('capacity')));
  const shown = shownStages(r, (s) => s.memory_bytes.total);
  const rows = shown.stages.map((s) => {
    const m = s.memory_bytes;
    const pct = m.total / m.capacity;
    return h('div', {
      class: `mem-row${s.fits ? '' : ' oom'}`, 'data-stage': s.index, 'data-fits': String(s.fits),
      'data-total': String(m.total), 'data-capacity': String(m.capacity),
    },
    h('div', { class: 'mem-label' }, many() ? swatch(s.group ?? 0) : null, `Stage ${s.index}`,
      h('span', { class: 'hint' }, ` ${layersOf(r, s)}${many() ? ` · ${gpuWord(s.group ?? 0)}` : ''}`)),
    h('div', {
      class: 'mem-bar', role: 'img',
      'aria-label': `stage ${s.index}: ${gib(m.total)} of ${gib(m.capacity)}` +
        MEMORY.map(([k, label]) => `, ${label.toLowerCase()} ${gib(m[k])}`).join(''),
    },
    MEMORY.map(([k, label]) => h('span', {
      class: 'seg', style: { width: `${(100 * m[k]) / scale}%`, background: `var(--m-${k})` },
      title: `${label}: ${gib(m[k])}`,
    })),
    m.headroom > 0 ? h('span', { class: 'headroom', title: `Headroom kept free: ${gib(m.headroom)}`,
      style: { left: `${(100 * (m.capacity - m.headroom)) / scale}%`, width: `${(100 * m.headroom) / scale}%` } }) : null,
    h('span', { class: 'capacity', style: { left: `${(100 * m.capacity) / scale}%` } })),
    h('div', { class: 'mem-value' },
      `${gib(m.total)} / ${gib(m.capacity, 0)}`,
      h('span', { class: s.fits ? 'ok' : 'bad' }, s.fits ? ` ${percent(pct, 0)}` : ' does not fit')));
  });
  const room = r.stages[0]?.memory_bytes.headroom ?? 0;
  const headroomNote = room > 0 ? h('p', { class: 'hint', id: 'headroom-note' },
    `A stage fits when it leaves the memory headroom free (hatched): ${percent(r.plan?.memory_headroom ?? 0, 0)} of the GPU, ` +
    `${gib(room)} here, for allocator spikes the model does not count. Set it under Advanced; the faster plans keep it free too.`) : null;
  fill($('#memory'), legend, headroomNote, h('div', { class: `mem-rows${many() ? ' with-groups' : ''}` }, rows),
    shown.note ? h('p', { class: 'hint', 'data-capped': 'memory' }, shown.note) : null,
    memoryTable(shown.stages),
    h('p', { class: 'buttons' }, 'Download ', csvButton('memory.csv', () => memoryRows(r.stages)),
      h('button', { type: 'button', class: 'small', 'data-download': 'memory.svg', onclick: () => save('memory.svg', memorySvg(r), 'image/svg+xml') }, 'SVG')));
}

const GIB = 2 ** 30;

/** Memory per GPU of each stage, in GiB, part by part (the CSV's rows). */
function memoryRows(stages) {
  return [['stage', 'layers', ...MEMORY.map(([k]) => `${k}_gib`), 'total_gib', 'capacity_gib', 'fits'],
    ...stages.map((s) => [s.index, s.layers, ...MEMORY.map(([k]) => s.memory_bytes[k] / GIB),
      s.memory_bytes.total / GIB, s.memory_bytes.capacity / GIB, s.fits])];
}

/** The bars' numbers as a table (what each part of each stage holds, in GiB). */
function memoryTable(stages) {
  const g = (x) => (x / GIB).toFixed(1);
  return h('details', { class: 'mem-table' }, h('summary', null, 'Memory per stage as a table (GiB)'),
    h('div', { class: 'table-scroll' }, h('table', { class: 'memory-table' },
      h('caption', { class: 'sr-only' }, 'Memory per GPU of each pipeline stage, GiB'),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Stage'), MEMORY.map(([, label]) => h('th', { scope: 'col', class: 'num' }, label)),
        h('th', { scope: 'col', class: 'num' }, 'Total'), h('th', { scope: 'col', class: 'num' }, 'Capacity'))),
      h('tbody', null, stages.map((s) => h('tr', { class: s.fits ? '' : 'oom' }, h('th', { scope: 'row' }, `Stage ${s.index}`),
        MEMORY.map(([k]) => h('td', { class: 'num' }, g(s.memory_bytes[k]))),
        h('td', { class: 'num' }, g(s.memory_bytes.total)), h('td', { class: 'num' }, g(s.memory_bytes.capacity))))))));
}

/** The memory chart as an SVG document: a stacked bar per stage against its capacity. */
function memorySvg(r) {
  const style = getComputedStyle(document.documentElement);
  const colour = (k) => style.getPropertyValue(`--m-${k}`).trim() || '#888';
  const rowH = 22;
  const left = 90;
  const width = 640;
  const scale = Math.max(...r.stages.map((s) => Math.max(s.memory_bytes.total, s.memory_bytes.capacity)));
  const x = (b) => left + (b / scale) * (width - left - 80);
  const esc = (t) => String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const bars = r.stages.map((s, i) => {
    let at = 0;
    const y = 10 + i * rowH;
    const segs = MEMORY.map(([k, label]) => {
      const w = x(at + s.memory_bytes[k]) - x(at);
      const seg = `<rect x="${x(at).toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${rowH - 6}" fill="${colour(k)}"><title>${esc(label)}: ${gib(s.memory_bytes[k])}</title></rect>`;
      at += s.memory_bytes[k];
      return seg;
    }).join('');
    return `<text x="4" y="${y + 12}" font-size="11">Stage ${s.index}</text>${segs}` +
      `<line x1="${x(s.memory_bytes.capacity).toFixed(1)}" x2="${x(s.memory_bytes.capacity).toFixed(1)}" y1="${y - 2}" y2="${y + rowH - 4}" stroke="#000" stroke-width="2"/>` +
      `<text x="${(x(s.memory_bytes.capacity) + 6).toFixed(1)}" y="${y + 12}" font-size="11">${esc(gib(s.memory_bytes.total))}</text>`;
  }).join('\n');
  const height = 20 + r.stages.length * rowH;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">` +
    `<title>Memory per GPU by pipeline stage</title>\n${bars}\n</svg>\n`;
}

function renderCensus(r) {
  const n = r.stages.length;
  if (censusStage === null || censusStage >= n) censusStage = 0;
  // A menu of the stages; past MAX_STAGE_ROWS, the shown ones and the one picked.
  const listed = shownStages(r, (s) => s.forward_s + s.backward_s + s.recompute_s).stages;
  if (!listed.some((s) => s.index === censusStage)) listed.push(r.stages[censusStage]);
  const select = h('select', { id: 'census-stage', 'data-local': 'true' },
    listed.sort((a, b) => a.index - b.index).map((s) => h('option', { value: s.index },
      `Stage ${s.index}${many() ? ` (${gpuOf(s.group ?? 0)})` : ''}${s.index === r.bottleneck_stage ? ' (bottleneck)' : ''}`)));
  select.value = String(censusStage);
  select.addEventListener('change', () => { censusStage = Number(select.value); renderCensus(report); });
  const st = r.stages[censusStage];
  const head = [['Kind', 'census_kind'], ['Group', 'census_group'], ['Phase'], ['Count', 'census_count'],
    ['Size each', 'census_bytes'], ['Link', 'census_link'], ['Time each', 'census_time'], ['Total']];
  const numeric = new Set(['Count', 'Size each', 'Time each', 'Total']);
  const total = st.communication.reduce((a, op) => a + op.total_time_s, 0);
  fill($('#census'),
    h('div', { class: 'field inline' }, h('label', { for: 'census-stage' }, 'Pipeline stage'), select,
      h('span', { class: 'hint' }, `${st.communication.length} kinds of operation, ${duration(total)} in all per iteration (before overlap)`)),
    h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'Communication census table' },
      h('table', { class: 'census' },
        h('caption', { class: 'sr-only' }, `Communication per GPU per iteration, stage ${censusStage}`),
        h('thead', null, h('tr', null, head.map(([t, term]) => h('th', { scope: 'col', class: numeric.has(t) ? 'num' : '' },
          t, term ? tip(term, t) : null)))),
        h('tbody', null, st.communication.map((op) => h('tr', null,
          h('td', { class: 'op' }, h('span', { class: 'kind' }, op.kind), h('span', { class: 'what' }, op.what)),
          h('td', { 'data-label': 'Group' }, `${op.group} (${op.group_size})`),
          h('td', { 'data-label': 'Phase' }, op.phase.replace('_', ' ')),
          h('td', { class: 'num', 'data-label': 'Count' }, integer(op.count)),
          h('td', { class: 'num', 'data-label': 'Size each' }, bytes(op.bytes)),
          h('td', { 'data-label': 'Link', title: op.link }, linkName(op.link)),
          h('td', { class: 'num', 'data-label': 'Time each' }, duration(op.time_s)),
          h('td', { class: 'num', 'data-label': 'Total', 'data-value': String(op.total_time_s) }, duration(op.total_time_s))))),
        h('tfoot', null, h('tr', null, h('th', { scope: 'row', colspan: 7 }, 'All operations, before overlap'),
          h('td', { class: 'num', 'data-label': 'Total' }, duration(total)))))),
    h('p', { class: 'buttons' }, 'Download ', csvButton(`census-stage-${censusStage}.csv`, () => [
      ['kind', 'what', 'group', 'group_size', 'phase', 'count', 'bytes', 'link', 'time_s', 'total_time_s'],
      ...st.communication.map((op) => [op.kind, op.what, op.group, op.group_size, op.phase, op.count, op.bytes, op.link, op.time_s, op.total_time_s])])));
}

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
    h('p', { class: 'buttons' }, 'Download ', pngButton('timeline.png', () => canvas)),
    h('details', { class: 'idle-details' }, h('summary', null, 'Idle time per stage'),
      h('table', { class: 'idle' },
        h('caption', { class: 'sr-only' }, 'Idle time per stage'),
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Stage'), h('th', { scope: 'col' }, 'Busy'),
          h('th', { scope: 'col' }, 'Idle'), h('th', { scope: 'col' }, 'Idle share'))),
        idleBody)));
  const note = h('p', { class: 'hint', hidden: true });
  const bandNote = h('p', { class: 'hint band-note', hidden: true },
    'Each stage\'s steady state (alternating forward and backward) is drawn as one band with its count: ' +
    'the blocks would be narrower than a pixel. Zoom in to see every block.');
  fill($('#timeline'), note, chart);
  chart.insertBefore(bandNote, scroller);
  tlDom = { canvas, hover, zoom, colorBy, set, colorTool, setTool, scroller, legend, idleBody, chart, note, bandNote, width: 0, legendKey: '', setKey: '' };
  zoom.addEventListener('change', drawTimeline);
  colorBy.addEventListener('change', () => { if (report) renderTimeline(report); });
  set.addEventListener('change', () => { if (report) renderTimeline(report); });
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

function renderTimeline(r) {
  const dom = timelineDom();
  timelineState = null;
  let cols = r.timeline ? tl.toColumns(r.timeline) : null;
  // Too many blocks for the engine to lay out: a schematic of the same pipeline from the stages'
  // times (warm-up and drain in full, the steady state a band), said to be one.
  let schematic = null;
  if (r.timeline?.truncated || (cols && cols.length === 0)) {
    const b = r.breakdown_s ?? {};
    schematic = tl.schematic(r.stages, r.micro_batches, r.iteration_time_s - (b.dp_comm ?? 0) - (b.optimizer ?? 0));
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
    dom.note.textContent = `This schedule has ${integer(2 * r.micro_batches * r.stages.length)} or more blocks, more ` +
      'than the engine lays out: below is a schematic of it from each stage\'s times (warm-up and drain in full, ' +
      'the steady state as one band per stage), not the engine\'s schedule. The breakdown above is exact.';
  }
  // Replica sets on different groups: a row per set and stage (or one set, chosen).
  const sets = layoutKind === 'replicas' ? Math.max(1, r.replicas?.length ?? 1) : 1;
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
  const lay = tl.layout(cols, { stages: r.stages.length, replicas: schematic ? 1 : sets, only: schematic ? -1 : only }, r.iteration_time_s);
  if (schematic) {
    lay.rows.forEach((row, k) => {
      row.band = schematic.bands[k];
      row.shown = row.events;
      if (row.group < 0) row.group = r.stages[k]?.group ?? 0; // a stage with no warm-up or drain block
      row.busy += row.band.busy;
      row.idle = Math.max(0, lay.span - row.busy);
    });
  }
  else tl.aggregate(cols, lay);
  const names = (form) => lay.rows.map((row) => rowName(row.replica, row.stage, row.group, sets > 1, form));
  const labels = names('row');
  dom.canvas.setAttribute('aria-label', `Pipeline timeline of one iteration: ${r.stages.length} stages` +
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
        kinds.filter(([k]) => !['forward', 'backward', 'send'].includes(k))
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
  timelineState = { cols, lay, hit: null, colorBy, labels: [labels, names('plain'), names('short')], sets, schematic: !!schematic };
  drawTimeline();
}

/** (Re)draws the timeline at the current width, zoom and colour scheme. */
export function drawTimeline() {
  const st = timelineState;
  if (!st || !tlDom) return;
  if (!tlDom.width) tlDom.width = tlDom.scroller.clientWidth;
  const width = Math.max(280, tlDom.width);
  const zoom = Number(tlDom.zoom.value) || 1;
  const cssWidth = Math.min(16000, width * zoom);
  // Blocks narrower than a few pixels: the steady state as a band (zoom in for every block).
  const banded = st.schematic || tl.dense(st.cols, st.lay, cssWidth * 0.6);
  st.hit = tl.draw(tlDom.canvas, st.cols, st.lay, cssWidth, { colorBy: st.colorBy, labels: st.labels, banded });
  tlDom.canvas.dataset.banded = String(banded);
  tlDom.bandNote.hidden = !banded || st.schematic;
}

// The stage map: which group each stage (or replica set) runs on, and the balance the engine chose.
function renderStageMap(r) {
  const card = $('#stagemap-card');
  // Also for one group when its stages differ: layers of the first and last stage set, or the
  // embedding and loss counted as layers.
  const uneven = r.stages.some((s) => s.layers !== r.stages[0].layers) || r.plan?.embedding_in_split || r.plan?.loss_in_split;
  const show = many() || layoutKind !== 'none' || uneven;
  card.hidden = !show;
  if (!show) return;
  const legend = h('ul', { class: 'legend' }, groups.map((g) => h('li', { 'data-group': g.index }, swatch(g.index),
    `group ${g.index}: ${g.title}`)));
  if (layoutKind === 'replicas') {
    const sets = r.replicas ?? [];
    const slowest = Math.max(...sets.map((x) => x.pipeline_s));
    const onShow = sets.findIndex((x) => x.group === (r.stages[0]?.group ?? 0) && x.pipeline_s === slowest);
    const worst = onShow >= 0 ? onShow : sets.findIndex((x) => x.pipeline_s === slowest);
    const rows = sets.map((x, k) => h('div', {
      class: `sm-set${k === worst ? ' slowest' : ''}`, 'data-replica': k, 'data-group': x.group, 'data-count': x.count,
      'data-micro-batches': x.micro_batches, 'data-pipeline': String(x.pipeline_s),
    },
    h('div', { class: 'sm-name' }, swatch(x.group), `Set ${k}`,
      h('span', { class: 'hint' }, ` ${x.count} × ${gpuWord(x.group)} pipeline${x.count === 1 ? '' : 's'}`)),
    h('div', { class: 'sm-track', role: 'img', 'aria-label': `set ${k}: pipeline ${duration(x.pipeline_s)} of ${duration(r.iteration_time_s)}` },
      h('span', { class: 'sm-fill', style: { width: `${(100 * x.pipeline_s) / r.iteration_time_s}%`, background: groupColor(x.group) } })),
    h('div', { class: 'sm-value' }, `${integer(x.micro_batches)} micro-batches each · ${duration(x.pipeline_s)}`,
      k === worst ? h('strong', { class: 'sm-tag' }, ' slowest') : null)));
    fill($('#stagemap'), legend,
      h('p', { class: 'hint' }, 'Replica sets: each replica is a whole pipeline on one group. ' +
        'Micro-batches per replica as the engine shared them (bars: pipeline time of one iteration, before the gradient sync).'),
      h('div', { class: 'sm-rows' }, rows),
      worst >= 0 ? h('p', { class: 'hint' }, `Breakdown, memory and census below are for set ${worst} (the slowest).`) : null);
    return;
  }
  const total = r.stages.reduce((a, s) => a + s.layers, 0);
  const computeOf = (s) => s.forward_s + s.backward_s + s.recompute_s;
  const shown = shownStages(r, computeOf);
  const per = shown.stages.map(computeOf);
  const maxPer = r.stages.reduce((a, s) => Math.max(a, computeOf(s)), 0);
  const labelled = r.stages.length <= MAX_STAGE_ROWS; // past it, a block too narrow to read
  const strip = h('div', { class: 'sm-strip', role: 'img',
    'aria-label': labelled ? `Stages: ${r.stages.map((s) => `stage ${s.index} on group ${s.group ?? 0}, ${layersOf(r, s)}`).join('; ')}`
      : `${integer(r.stages.length)} stages` },
  labelled ? r.stages.map((s) => h('span', {
    class: 'sm-block', style: { flexGrow: String(s.layers), background: groupColor(s.group ?? 0), color: groupTextColor(s.group ?? 0) },
    title: `stage ${s.index}: ${layersOf(r, s)} on ${gpuOf(s.group ?? 0)}`,
  }, h('span', null, `${s.layers}`))) : stripRuns(r));
  const rows = shown.stages.map((s, k) => h('div', {
    class: `sm-stage${s.index === r.bottleneck_stage ? ' slowest' : ''}`, 'data-stage': s.index,
    'data-group': s.group ?? 0, 'data-layers': s.layers, 'data-compute': String(per[k]),
  },
  h('div', { class: 'sm-name' }, swatch(s.group ?? 0), `Stage ${s.index}`,
    h('span', { class: 'hint' }, ` ${layersOf(r, s)} · ${gpuWord(s.group ?? 0)}`)),
  h('div', { class: 'sm-track', role: 'img', 'aria-label': `stage ${s.index}: ${duration(per[k])} per micro-batch` },
    h('span', { class: 'sm-fill', style: { width: `${(100 * per[k]) / maxPer}%`, background: groupColor(s.group ?? 0) } })),
  h('div', { class: 'sm-value' }, `${duration(per[k])} per micro-batch`,
    s.index === r.bottleneck_stage ? h('strong', { class: 'sm-tag' }, ' bottleneck') : null)));
  fill($('#stagemap'), legend,
    h('div', { class: 'sm-strip-wrap' }, strip, h('div', { class: 'hint' }, `${integer(total)} layers in ${r.stages.length} stages`)),
    h('p', { class: 'hint' }, 'Compute per micro-batch (forward + backward + recompute): the slowest stage sets the pace, ' +
      'the others wait (the idle time in the timeline).'),
    h('div', { class: 'sm-rows' }, rows),
    shown.note ? h('p', { class: 'hint', 'data-capped': 'stages' }, shown.note) : null);
}

/** The strip of many stages: one block per run of consecutive stages on the same group. */
function stripRuns(r) {
  const runs = [];
  for (const s of r.stages) {
    const last = runs[runs.length - 1];
    if (last && last.group === (s.group ?? 0)) { last.layers += s.layers; last.to = s.index; }
    else runs.push({ group: s.group ?? 0, layers: s.layers, from: s.index, to: s.index });
  }
  return runs.map((x) => h('span', {
    class: 'sm-block', style: { flexGrow: String(x.layers), background: groupColor(x.group), color: groupTextColor(x.group) },
    title: `stages ${x.from}–${x.to}: ${integer(x.layers)} layers on ${gpuOf(x.group)}`,
  }));
}

function renderWarnings(r) {
  const box = $('#warnings');
  box.hidden = r.warnings.length === 0;
  fill($('#warnings-list'), r.warnings.map((w) => h('li', null, w)));
}

/** The bar that mirrors the headline numbers at the bottom of narrow screens. */
export function renderSummaryBar(kind, text) {
  const bar = $('#summary-bar');
  bar.className = `summary-bar ${kind}`;
  bar.textContent = text;
}

export function summaryText(r) {
  return `${duration(r.iteration_time_s)} per step · ${rate(r.tokens_per_s, 'tokens/s')} · MFU ${percent(r.mfu)}`;
}

/**
 * Renders a report (not an error) into every results section. `context`: the groups of the
 * cluster (groups.js describeGroups) and the layout ('none', 'stages', 'replicas') it was for,
 * and given(path): whether its scenario gives the input at a schema path ("model.moe").
 */
export function renderReport(r, context = {}) {
  report = r;
  groups = context.groups ?? [];
  layoutKind = context.layout ?? 'none';
  given = context.given ?? (() => true);
  links = context.links ?? [];
  renderMetrics(r);
  renderStageMap(r);
  renderCost();
  renderBreakdown(r);
  renderMemory(r);
  renderTimeline(r);
  renderCensus(r);
  renderWarnings(r);
}
