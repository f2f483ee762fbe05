// The Traffic card: the engine's traffic matrix (traffic(), `stepcast traffic`) as a heatmap of
// bytes per iteration, GPU x GPU up to 1,024 GPUs and node x node above (the engine picks the
// level), the bytes on each link tier and by group kind, where each kind of group sits, and the
// nonzero cells as CSV; the MoE all-to-all as a range (expected under uniform routing, up to the
// imbalance times it); the link load over the iteration (link_load.js) and effective bandwidth
// against message size (bandwidth_curve.js). The heatmap is one pixel per cell, scaled up by CSS: its sum is kept
// (stats) so tests can check that it adds up to the census.
import { $, fill, h } from '../ui/dom.js';
import { save } from '../ui/download.js';
import { bandwidthChart } from './bandwidth_curve.js';
import { bytes, integer, num } from '../ui/format.js';
import { plainProblem } from '../ui/plain.js';
import { loadChart } from './link_load.js';

const DECADES = 6; // the colour scale spans the largest cell down to a millionth of it
export const HEATMAP_PX = 360; // the heatmap's widest, in CSS pixels (.traffic-heatmap, style.css)
let current = null; // {data, csv}

/** Bytes of a cell, all kinds. */
const cellTotal = (c) => Object.values(c.bytes).reduce((a, b) => a + b, 0);

/** The nonzero cells as CSV, a column per group kind present (as `stepcast traffic --format csv`). */
function toCsv(data) {
  const kinds = Object.keys(data.bytes_by_kind);
  const lines = [['from', 'to', 'tier', ...kinds.map((k) => `${k}_bytes`), 'total_bytes'].join(',')];
  for (const c of data.cells)
    lines.push([c.from, c.to, c.tier, ...kinds.map((k) => c.bytes[k] ?? 0), cellTotal(c)].join(','));
  return `${lines.join('\n')}\n`;
}

/** Draws the matrix, one pixel per cell; returns the sum of what it drew. */
function drawHeatmap(canvas, data) {
  const n = data.level === 'gpu' ? data.gpus : data.nodes;
  const sums = new Float64Array(n * n);
  for (const c of data.cells) sums[c.from * n + c.to] += cellTotal(c);
  let max = 0;
  let total = 0;
  for (const v of sums) {
    total += v;
    if (v > max) max = v;
  }
  canvas.width = n;
  canvas.height = n;
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(n, n);
  const px = img.data;
  for (let i = 0; i < n * n; i++) {
    const v = sums[i];
    // Log scale: 1 at the largest cell, 0 at a millionth of it or less (and for no traffic).
    const t = v > 0 ? Math.max(0, 1 + Math.log10(v / max) / DECADES) : 0;
    const o = 4 * i;
    px[o] = Math.round(250 - 230 * t);
    px[o + 1] = Math.round(250 - 170 * t);
    px[o + 2] = Math.round(252 - 92 * t);
    px[o + 3] = 255;
  }
  ctx.putImageData(img, 0, 0);
  return total;
}

/** One sentence per inexact kind: "EP all-to-all: expected X per GPU pair, up to Y with imbalance Z". */
function rangeText(r) {
  const kind = r.kind.toUpperCase();
  const flex = r.flex_remote_scale < 1 ? ` (flex sends ${num(100 * r.flex_remote_scale)} % of the cross-node share)` : '';
  if (r.imbalance <= 1)
    return `${kind} all-to-all: expected ${bytes(r.expected_pair_bytes)} per GPU pair, ${bytes(r.expected_gpu_bytes)} into each GPU per iteration (uniform routing, imbalance 1)${flex}.`;
  return `${kind} all-to-all: expected ${bytes(r.expected_pair_bytes)} per GPU pair, up to ${bytes(r.max_pair_bytes)} with imbalance ${+r.imbalance.toPrecision(3)}; into the busiest GPU up to ${bytes(r.max_gpu_bytes)} (expected ${bytes(r.expected_gpu_bytes)}) per iteration${flex}. Dense traffic is exact.`;
}

/** Renders the engine's traffic() answer into the card; `stats` records what the heatmap shows. */
export function renderTraffic(data, stats) {
  const root = $('#traffic');
  if (!root) return;
  if (data.error) {
    current = null;
    stats.traffic = { error: data.error.message };
    // In the page's words (its labels for the paths), without the command's "traffic:" prefix.
    fill(root, h('p', { class: 'hint' }, `No traffic matrix: ${plainProblem(data.error).message.replace(/^Traffic: /, '')}`));
    return;
  }
  const canvas = h('canvas', { class: 'traffic-heatmap', role: 'img' });
  const heatmapTotal = drawHeatmap(canvas, data);
  const n = data.level === 'gpu' ? data.gpus : data.nodes;
  const what = data.level === 'gpu' ? 'GPU' : 'node';
  canvas.setAttribute('aria-label', `Bytes sent per iteration from each ${what} (rows) to each ${what} (columns), ${n} × ${n}`);
  current = { data, csv: null };
  stats.traffic = { level: data.level, endpoints: n, total: data.total_bytes, heatmapTotal, cells: data.cells.length };
  const tiers = data.bytes_by_tier;
  const kinds = Object.entries(data.bytes_by_kind);
  const download = h('button', { type: 'button', id: 'traffic-csv' }, 'Download CSV');
  download.addEventListener('click', () => {
    current.csv ??= toCsv(current.data);
    save('traffic.csv', current.csv, 'text/csv');
  });
  const ranges = (data.ranges ?? []).map(rangeText);
  const load = data.load ? loadChart(data.load) : null;
  const curves = bandwidthChart(data);
  stats.traffic.ranges = ranges;
  stats.traffic.load = load?.shown ?? null;
  stats.traffic.bandwidth = curves.shown;
  fill(root,
    h('div', { class: 'metrics' },
      h('div', { class: 'metric', 'data-traffic': 'total', 'data-value': String(data.total_bytes) },
        h('span', { class: 'metric-label' }, 'All traffic'), h('div', { class: 'metric-value' }, bytes(data.total_bytes))),
      h('div', { class: 'metric', 'data-traffic': 'scale_up', 'data-value': String(tiers.scale_up) },
        h('span', { class: 'metric-label' }, 'Inside nodes (scale-up)'), h('div', { class: 'metric-value' }, bytes(tiers.scale_up))),
      h('div', { class: 'metric', 'data-traffic': 'scale_out', 'data-value': String(tiers.scale_out) },
        h('span', { class: 'metric-label' }, 'Between nodes (scale-out)'), h('div', { class: 'metric-value' }, bytes(tiers.scale_out)))),
    h('div', { class: 'traffic-body' },
      h('figure', { class: 'traffic-figure' }, canvas,
        h('figcaption', { class: 'hint' }, `${integer(n)} ${what}s, rank order ${data.rank_order}`)),
      h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'Traffic by group kind' },
        h('table', { class: 'census' },
          h('thead', null, h('tr', null, h('th', null, 'Group'), h('th', null, 'Inside nodes'), h('th', null, 'Between nodes'),
            h('th', null, 'Placement'))),
          h('tbody', null, kinds.map(([kind, t]) => {
            const g = data.groups.find((x) => x.kind === kind);
            const where = !g ? '' : g.inside_node ? `${g.groups} × ${g.size}, inside a node`
              : `${g.groups} × ${g.size}, ${g.spanning_groups} across nodes`;
            return h('tr', null, h('td', null, kind), h('td', null, bytes(t.scale_up)), h('td', null, bytes(t.scale_out)),
              h('td', null, where));
          }))))),
    ranges.map((t) => h('p', { class: 'traffic-range' }, t)),
    h('div', { class: 'traffic-charts' },
      h('figure', { class: 'traffic-chart', id: 'traffic-load' },
        load ? load.canvas : h('p', { class: 'hint' }, 'No link load: the schedule has more blocks than a timeline reports.'),
        h('figcaption', { class: 'hint' }, 'Link load over one iteration against capacity (dashed): each phase\'s bytes spread over its timeline blocks, a coarse view.')),
      h('figure', { class: 'traffic-chart', id: 'traffic-bandwidth' }, curves.canvas,
        h('figcaption', { class: 'hint' }, 'Bus bandwidth against message size on each path (lines) and the census\'s operations (points).'))),
    h('div', { class: 'buttons' }, download));
}
