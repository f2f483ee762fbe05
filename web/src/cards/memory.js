// The "Memory per GPU, by pipeline stage" card: each stage's memory by part (the report's
// memory_bytes) as a bar against the GPU's capacity and the headroom kept free, the same as a
// table with what PyTorch would report (peak allocated and reserved) and what offloading keeps on
// the host, and as CSV and SVG.
import { $, fill, h } from '../ui/dom.js';
import { csvButton, save } from '../ui/download.js';
import { gib, percent } from '../ui/format.js';
import { tip } from '../ui/tooltip.js';
import { allStages, gpuWord, many, swatch } from './context.js';
import { memoryParts, memorySums } from './parts.js';
import { layersOf, shownStages } from './stages.js';

/**
 * The parts of a stage's memory as one element, a gradient of hard stops (one element per part
 * made a plan of thousands of stages draw 600 more, issue 38); each part by name on hover.
 */
function partsBar(m, scale) {
  const parts = memoryParts();
  const sum = parts.reduce((a, [k]) => a + m[k], 0);
  let at = 0;
  const stops = parts.map(([k]) => `var(--m-${k}) ${((100 * at) / sum).toFixed(3)}% ${((100 * (at += m[k])) / sum).toFixed(3)}%`);
  return h('span', {
    class: 'segs', title: parts.map(([k, label]) => `${label}: ${gib(m[k])}`).join('\n'),
    style: { width: `${(100 * sum) / scale}%`, background: sum > 0 ? `linear-gradient(to right, ${stops.join(', ')})` : 'none' },
  });
}

// The legend, the same for every report (the engine's memory parts): built once, not with its
// thirteen "?" each edit.
let legend = null;
let legendParts = null;

function memoryLegend() {
  if (legend && legendParts === memoryParts()) return legend;
  legendParts = memoryParts();
  legend = h('ul', { class: 'legend' }, memoryParts().map(([k, label, term, doc]) => h('li', null,
    h('span', { class: 'swatch', style: { background: `var(--m-${k})` } }), label, tip(term, label, term ? undefined : doc))),
  h('li', null, h('span', { class: 'swatch capacity-swatch' }), 'GPU capacity', tip('capacity')));
  return legend;
}

export function renderMemory(r) {
  const scale = Math.max(...r.stages.map((s) => Math.max(s.memory_bytes.total, s.memory_bytes.capacity)));
  const legend = memoryLegend();
  const shown = shownStages(r, 'memory');
  // The parts this plan has (a dense model has no MoE dispatch or DeepEP buffers): the legend
  // and the bars' spoken list name only those, as the breakdown does.
  const present = new Set(memoryParts().filter(([k]) => shown.stages.some((s) => s.memory_bytes[k] > 0)).map(([k]) => k));
  memoryParts().forEach(([k], i) => { legend.children[i].hidden = !present.has(k); });
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
        memoryParts().filter(([k]) => present.has(k)).map(([k, label]) => `, ${label.toLowerCase()} ${gib(m[k])}`).join(''),
    },
    partsBar(m, scale),
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
  const host = r.host_memory_bytes_per_node ?? 0;
  const hostNote = host > 0 ? h('p', { class: 'hint', id: 'host-note' },
    `Offloaded activations and optimizer state are not in the bars: ${gib(Math.max(...r.stages.map((s) =>
      (s.memory_bytes.offloaded ?? 0) + (s.memory_bytes.optimizer_offloaded ?? 0))))} ` +
    `per GPU at most, ${gib(host)} of host memory per node.`) : null;
  fill($('#memory'), legend, headroomNote, hostNote, h('div', { class: `mem-rows${many() ? ' with-groups' : ''}` }, rows),
    shown.note ? h('p', { class: 'hint', 'data-capped': 'memory' }, shown.note) : null,
    memoryTable(shown.stages),
    h('p', { class: 'buttons' }, 'Download ', csvButton('memory.csv', async () => memoryRows(await allStages(r))),
      h('button', { type: 'button', class: 'small', 'data-download': 'memory.svg', onclick: async () => save('memory.svg', memorySvg(await allStages(r)), 'image/svg+xml') }, 'SVG')));
}

const GIB = 2 ** 30;

/** Memory per GPU of each stage, in GiB, part by part (the CSV's rows). */
function memoryRows(stages) {
  return [['stage', 'layers', ...memoryParts().map(([k]) => `${k}_gib`), ...memorySums().map(([k]) => `${k}_gib`), 'fits'],
    ...stages.map((s) => [s.index, s.layers, ...memoryParts().map(([k]) => s.memory_bytes[k] / GIB),
      ...memorySums().map(([k]) => (s.memory_bytes[k] ?? 0) / GIB), s.fits])];
}

/**
 * The bars' numbers as a table (what each part of each stage holds, in GiB), in a disclosure kept
 * from one report to the next (open, it stays open as the plan changes). Its rows are written
 * while it is open, or printed: closed, they were 300 cells a 16-stage plan built each edit for
 * no one to see (issue 39).
 */
let table = null;
let tableStages = [];
let tableStale = false;

function memoryTable(stages) {
  if (!table) {
    table = h('details', { class: 'mem-table' }, h('summary', null, 'Memory per stage as a table (GiB)'),
      h('div', { class: 'table-scroll' }));
    table.addEventListener('toggle', () => { if (table.open) writeTable(); });
    window.addEventListener('beforeprint', writeTable); // (printing opens every disclosure)
  }
  tableStages = stages;
  tableStale = true;
  if (table.open) writeTable();
  return table;
}

function writeTable() {
  if (!tableStale) return;
  tableStale = false;
  const stages = tableStages;
  const g = (x) => (x / GIB).toFixed(1);
  fill(table.lastChild, h('table', { class: 'memory-table' },
    h('caption', { class: 'sr-only' }, 'Memory per GPU of each pipeline stage, GiB'),
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Stage'), memoryParts().map(([, label]) => h('th', { scope: 'col', class: 'num' }, label)),
      memorySums().map(([, label, doc]) => h('th', { scope: 'col', class: 'num', title: doc }, label)))),
    h('tbody', null, stages.map((s) => h('tr', { class: s.fits ? '' : 'oom' }, h('th', { scope: 'row' }, `Stage ${s.index}`),
      memoryParts().map(([k]) => h('td', { class: 'num' }, g(s.memory_bytes[k]))),
      memorySums().map(([k]) => h('td', { class: 'num' }, g(s.memory_bytes[k] ?? 0))))))));
}

/** The memory chart as an SVG document: a stacked bar per stage against its capacity. */
function memorySvg(stages) {
  const style = getComputedStyle(document.documentElement);
  const colour = (k) => style.getPropertyValue(`--m-${k}`).trim() || '#888';
  const rowH = 22;
  const left = 90;
  const width = 640;
  const scale = Math.max(...stages.map((s) => Math.max(s.memory_bytes.total, s.memory_bytes.capacity)));
  const x = (b) => left + (b / scale) * (width - left - 80);
  const esc = (t) => String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const bars = stages.map((s, i) => {
    let at = 0;
    const y = 10 + i * rowH;
    const segs = memoryParts().map(([k, label]) => {
      const w = x(at + s.memory_bytes[k]) - x(at);
      const seg = `<rect x="${x(at).toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${rowH - 6}" fill="${colour(k)}"><title>${esc(label)}: ${gib(s.memory_bytes[k])}</title></rect>`;
      at += s.memory_bytes[k];
      return seg;
    }).join('');
    return `<text x="4" y="${y + 12}" font-size="11">Stage ${s.index}</text>${segs}` +
      `<line x1="${x(s.memory_bytes.capacity).toFixed(1)}" x2="${x(s.memory_bytes.capacity).toFixed(1)}" y1="${y - 2}" y2="${y + rowH - 4}" stroke="#000" stroke-width="2"/>` +
      `<text x="${(x(s.memory_bytes.capacity) + 6).toFixed(1)}" y="${y + 12}" font-size="11">${esc(gib(s.memory_bytes.total))}</text>`;
  }).join('\n');
  const height = 20 + stages.length * rowH;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">` +
    `<title>Memory per GPU by pipeline stage</title>\n${bars}\n</svg>\n`;
}
