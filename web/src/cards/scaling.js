// The Scaling card: the plan on show estimated again by the engine at other node counts (DP
// follows, the global batch stays) and at other TP degrees (same nodes): iteration time and
// tokens/s against nodes, beside perfect scaling from the plan on show, so a user sees where adding
// nodes stops paying. The sweep is the engine's (`stepcast scaling`, its scaling() binding, run in
// the search worker); this draws its answer as an SVG chart, which downloads as it is, and a table.
import { $, fill, h } from '../ui/dom.js';
import { save } from '../ui/download.js';
import { duration, integer, percent, rate } from '../ui/format.js';
import { plainProblem } from '../ui/plain.js';

const W = 560;
const H = 220;
const M = { left: 64, right: 56, top: 16, bottom: 34 };

/** The chart as SVG text: tokens/s (bars) and perfect scaling from the plan on show (dashed) against nodes. */
export function chartSvg(data) {
  const ok = data.nodes.filter((p) => !p.error);
  const base = ok.find((p) => p.nodes === data.base.nodes);
  if (!ok.length || !base) return '';
  const lo = Math.log2(ok[0].nodes);
  const hi = Math.log2(ok[ok.length - 1].nodes);
  const top = Math.max(...ok.map((p) => Math.max(p.tokens_per_s, (base.tokens_per_s * p.nodes) / base.nodes))) * 1.1;
  const x = (n) => M.left + (hi > lo ? (Math.log2(n) - lo) / (hi - lo) : 0.5) * (W - M.left - M.right);
  const y = (v) => H - M.bottom - (v / top) * (H - M.top - M.bottom);
  const bw = Math.min(28, (W - M.left - M.right) / (ok.length * 1.6));
  const esc = (t) => String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const bars = ok.map((p) => `<rect x="${(x(p.nodes) - bw / 2).toFixed(1)}" y="${y(p.tokens_per_s).toFixed(1)}" ` +
    `width="${bw.toFixed(1)}" height="${(H - M.bottom - y(p.tokens_per_s)).toFixed(1)}" ` +
    `fill="${p.fits ? '#3b82f6' : 'none'}" stroke="${p.fits ? 'none' : '#c01b1b'}" stroke-width="1.5" ` +
    `data-nodes="${p.nodes}"><title>${esc(`${p.nodes} nodes: ${rate(p.tokens_per_s, 'tokens/s')}, ` +
      `${duration(p.iteration_time_s)} per step${p.fits ? '' : ', does not fit in memory'}`)}</title></rect>`).join('');
  const ideal = ok.map((p, i) => `${i ? 'L' : 'M'}${x(p.nodes).toFixed(1)} ${y((base.tokens_per_s * p.nodes) / base.nodes).toFixed(1)}`).join(' ');
  const ticks = ok.map((p) => `<text x="${x(p.nodes).toFixed(1)}" y="${H - M.bottom + 14}" text-anchor="middle">${p.nodes}</text>`).join('');
  const yTicks = [0, 0.5, 1].map((f) => `<text x="${M.left - 6}" y="${(y(top * f / 1.1) + 4).toFixed(1)}" text-anchor="end">` +
    `${esc(rate((top * f) / 1.1, ''))}</text>`).join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif" font-size="11" role="img">` +
    `<title>Tokens per second against nodes, with perfect scaling from ${data.base.nodes} nodes</title>` +
    `<line x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}" stroke="#999"/>${bars}` +
    `<path d="${ideal}" fill="none" stroke="#666" stroke-dasharray="4 3"/>${ticks}${yTicks}` +
    `<text x="${(W + M.left - M.right) / 2}" y="${H - 4}" text-anchor="middle">nodes</text>` +
    `<text x="12" y="${M.top}" >tokens/s</text></svg>`;
}

/** Draws `data` (the engine's scaling() answer) into #scaling. */
export function render(data) {
  const box = $('#scaling');
  if (!box) return;
  if (!data || data.error) {
    fill(box, h('p', { class: 'hint' }, data?.error ? `No scaling chart: ${plainProblem(data.error).message}.` : ''));
    return;
  }
  const svg = chartSvg(data);
  const chart = h('div', { class: 'scaling-chart' });
  chart.innerHTML = svg; // built above from numbers and escaped text only
  const row = (label, p, extra) => h('tr', { class: p.error ? 'refused' : p.fits ? '' : 'oom', 'data-value': String(p.tokens_per_s ?? '') },
    h('th', { scope: 'row' }, label),
    p.error ? h('td', { colspan: 4, class: 'hint' }, plainProblem(p.error).message)
      : [h('td', null, duration(p.iteration_time_s)), h('td', null, rate(p.tokens_per_s, 'tokens/s')),
        h('td', null, percent(p.mfu)), h('td', null, extra(p))]);
  fill(box,
    h('p', { class: 'hint' }, `The plan on show (${data.base.nodes} node${data.base.nodes === 1 ? '' : 's'}, TP ${data.base.tp}) at other ` +
      'sizes: DP follows the GPUs, the global batch stays. Hollow red bars do not fit in memory; the dashed line is perfect scaling.'),
    chart,
    h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'Scaling table' }, h('table', { class: 'scaling-table' },
      h('caption', { class: 'sr-only' }, 'Iteration time and throughput at other node counts and TP degrees'),
      h('thead', null, h('tr', null, ['Nodes', 'Iteration time', 'Throughput', 'MFU', 'Scaling efficiency'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', null, data.nodes.map((p) => row(`${integer(p.nodes)}${p.nodes === data.base.nodes ? ' (on show)' : ''}`, p,
        (q) => (p.nodes === data.base.nodes ? '100 %' : percent(q.scaling_efficiency ?? NaN, 0))))),
      h('thead', null, h('tr', null, ['TP', 'Iteration time', 'Throughput', 'MFU', 'Fits'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', null, data.tp.map((p) => row(`${p.tp}${p.tp === data.base.tp ? ' (on show)' : ''}`, p, (q) => (q.fits ? 'yes' : 'no')))))),
    h('p', { class: 'buttons' }, 'Download ',
      h('button', { type: 'button', class: 'small', 'data-download': 'scaling.svg', onclick: () => save('scaling.svg', svg, 'image/svg+xml') }, 'SVG')));
}
