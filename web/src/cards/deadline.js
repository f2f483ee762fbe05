// How many GPUs for a deadline (the engine's deadline sweep, `stepcast deadline`): the tokens of
// the cost form within the days typed, on the cluster's node type at other node counts, each with
// the search's fastest plan, the days it takes and the GPU-hours it spends; the cheapest that
// meets the deadline marked, and Apply puts its node count and plan into the form. Loaded on the
// button's first click (app/main.js): no first paint needs it.
import { $, fill, h } from '../ui/dom.js';
import { integer, num } from '../ui/format.js';
import * as engine from '../engine/bridge.js';
import { tokensToTrain } from './cost.js';

function say(text) {
  const el = $('#deadline-status');
  el.textContent = text;
  el.hidden = !text;
}

const daysTyped = (x) => (Number.isInteger(x) ? integer(x) : num(x));

const planWords = (p) => `TP ${p.tp} · PP ${p.pp}${p.vpp > 1 ? ` × VPP ${p.vpp}` : ''} · DP ${p.dp}${p.cp > 1 ? ` · CP ${p.cp}` : ''}` +
  `${p.ep > 1 ? ` · EP ${p.ep}` : ''} · micro-batch ${p.micro_batch}${p.recompute && p.recompute !== 'none' ? ` · ${p.recompute} recompute` : ''}`;

/**
 * Runs the sweep for the scenario on show (`current()`: an object) and draws it; `apply(nodes,
 * plan)` puts a row into the form.
 */
export async function run(current, apply) {
  const tokens = tokensToTrain();
  const days = Number($('#f-days').value);
  // What is not a number cannot be sent (JSON has no NaN); the engine owns what a number may be
  // (deadline_plan: above 0) and says so.
  if (!Number.isFinite(tokens)) return say('Enter the tokens to train above first.');
  if ($('#f-days').value.trim() === '' || !Number.isFinite(days)) return say('Enter the deadline in days.');
  say('Searching each node count for its fastest plan…');
  $('#deadline-go').disabled = true;
  const r = await engine.deadline(JSON.stringify(current()), tokens, days).finally(() => { $('#deadline-go').disabled = false; });
  if (!r) return undefined; // superseded by a newer click
  if (r.error) {
    fill($('#deadline-out'));
    return say(`No sweep for this scenario: ${r.error.message}`);
  }
  const cheapest = r.cheapest ?? -1;
  say(cheapest >= 0
    ? `The cheapest that meets ${daysTyped(days)} days: ${integer(r.points[cheapest].nodes)} nodes (${integer(r.points[cheapest].gpus)} GPUs), ` +
      `${num(r.points[cheapest].train_days)} days, ${integer(r.points[cheapest].gpu_hours)} GPU-hours.`
    : `No node count tried meets ${daysTyped(days)} days (fewer than ${integer(r.fewest_nodes_at_peak)} nodes cannot, even at the GPUs' peak).`);
  fill($('#deadline-out'), h('table', { class: 'deadline-table' },
    h('caption', { class: 'sr-only' }, 'The fastest plan on each node count, its days and GPU-hours'),
    h('thead', null, h('tr', null, ['Nodes', 'GPUs', 'Days', 'GPU-hours', 'Plan', ''].map((t) => h('th', { scope: 'col', class: t && t !== 'Plan' ? 'num' : '' }, t)))),
    h('tbody', null, r.points.map((pt, i) => h('tr', { class: `${i === cheapest ? 'cheapest' : ''}${pt.meets ? '' : ' late'}`, 'data-nodes': pt.nodes },
      h('td', { class: 'num' }, `${integer(pt.nodes)}${i === cheapest ? ' ★' : ''}`),
      h('td', { class: 'num' }, integer(pt.gpus)),
      pt.plan
        ? [h('td', { class: 'num' }, num(pt.train_days)), h('td', { class: 'num' }, integer(pt.gpu_hours)), h('td', null, planWords(pt.plan)),
          h('td', null, h('button', { type: 'button', class: 'small', onclick: () => apply(pt.nodes, pt.plan) }, 'Apply'))]
        : h('td', { colspan: 4 }, pt.error ? pt.error.message : 'no plan fits'))))));
  return undefined;
}
