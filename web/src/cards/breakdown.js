// The "Where the step goes" card: the iteration time by part (the report's breakdown_s) as a
// stacked bar and a table, the parts that are zero in this plan, and a CSV.
import { $, fill, h } from '../ui/dom.js';
import { csvButton } from '../ui/download.js';
import { duration, num, percent } from '../ui/format.js';
import { tip } from '../ui/tooltip.js';
import { gpuOf, shown } from './context.js';
import { worked } from './metric.js';
import { parts as reportParts } from './parts.js';
import { stageAt } from './stages.js';

// The compute rates the engine priced the bottleneck stage's layers at (its GPU, the plan's
// precision, the calibration's constants): what the forward, backward and recompute rows rest on.
function ratesOf(r) {
  const s = stageAt(r, r.bottleneck_stage) ?? r.stages[0];
  if (!s || !(s.gemm_tflops > 0)) return '';
  return ` Its GEMMs run at ${num(s.gemm_tflops)} TFLOP/s, ${percent(s.gemm_efficiency)} of the ${gpuOf(s.group ?? 0)}'s ` +
    `${r.plan?.precision ?? ''} dense peak where their traffic does not bind, and attention at ` +
    `${percent(s.attention_efficiency)} of its 16-bit peak on this sequence and head size (the constants fitted on published runs of its GPU family, ` +
    'or your calibration).';
}
const COMPUTE_PARTS = new Set(['forward', 'backward', 'recompute']);

export function renderBreakdown(r) {
  const total = r.iteration_time_s;
  const rates = ratesOf(r);
  const parts = reportParts().map(([k, label]) => [k, label, r.breakdown_s[k] ?? 0]).filter(([, , v]) => v > 0);
  const bar = h('div', { class: 'stack', 'aria-hidden': 'true' },
    parts.map(([k, label, v]) => h('span', {
      class: 'seg', style: { width: `${(100 * v) / total}%`, background: `var(--c-${k})` },
      title: `${label}: ${duration(v)} (${percent(v / total)})`,
    })));
  const rows = parts.map(([k, label, v]) => h('tr', { 'data-part': k, 'data-value': String(v) },
    h('th', { scope: 'row' }, h('span', { class: 'swatch', style: { background: `var(--c-${k})` } }), label,
      worked(tip(k, label), `${duration(v)} of the ${duration(total)} step = ${percent(v / total)}.` +
        (COMPUTE_PARTS.has(k) ? rates : ''))),
    h('td', null, duration(v)),
    h('td', null, percent(v / total)),
    h('td', { class: 'bar-cell' }, h('span', { class: 'mini', style: { width: `${(100 * v) / total}%`, background: `var(--c-${k})` } }))));
  const zero = reportParts().filter(([k, , needs]) => !(r.breakdown_s[k] > 0) && (!needs || shown.given(needs)))
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
