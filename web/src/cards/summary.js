// The Estimate card: the headline numbers (each "?" works its formula out with this estimate's
// numbers), the training software the estimate assumes, and the bar that mirrors the headline
// numbers at the bottom of narrow screens.
import { $, fill, h } from '../ui/dom.js';
import { count, duration, integer, num, percent, rate } from '../ui/format.js';
import { fullName } from '../scenario/frameworks.js';
import { planName } from '../scenario/label.js';
import { shown } from './context.js';
import { metric } from './metric.js';
import { parts as reportParts } from './parts.js';

export function renderMetrics(r) {
  const tokens = r.tokens_per_s * r.iteration_time_s;
  const p = r.plan ?? {};
  const b = r.breakdown_s ?? {};
  const parts = reportParts().map(([k, name]) => [name, b[k] ?? 0]).filter(([, v]) => v > 0);
  $('#plan-name').textContent = `of ${planName(p)}`;
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
    microBatches(r, p),
    metric('parameters', 'Parameters', r.parameters, count(r.parameters), 'in the model'));
}

/**
 * The Micro-batches metric: per iteration and replica, or, where replica sets run different
 * counts (the engine shares the batch out by each group's speed), the slowest set's, whose
 * pipeline the report describes, beside the others' ("per replica of set 0, the slowest; set 1:
 * 186"): "per iteration and replica" was untrue of every other set.
 */
function microBatches(r, p) {
  const sets = r.replicas ?? [];
  const value = (sub, formula) => metric('micro_batches', 'Micro-batches', r.micro_batches, integer(r.micro_batches), sub, undefined, formula);
  const slowest = Math.max(...sets.map((x) => x.pipeline_s));
  const at = sets.findIndex((x) => x.pipeline_s === slowest && x.micro_batches === r.micro_batches);
  if (new Set(sets.map((x) => x.micro_batches)).size < 2 || at < 0) {
    return value(`per iteration and replica, on ${integer(r.gpus)} GPUs`,
      p.global_batch && p.dp && shown.layout !== 'replicas' ? `${integer(p.global_batch)} ÷ (${p.micro_batch} × ${p.dp}) = ${integer(r.micro_batches)}` : '');
  }
  const others = sets.map((x, k) => [x, k]).filter(([, k]) => k !== at).map(([x, k]) => `set ${k}: ${integer(x.micro_batches)}`);
  const all = sets.reduce((n, x) => n + x.count * x.micro_batches, 0);
  return value(`per replica of set ${at}, the slowest; ${others.join(', ')}`,
    `${sets.map((x) => `${x.count} × ${integer(x.micro_batches)}`).join(' + ')} = ${integer(all)} micro-batches of ${p.micro_batch} per iteration`);
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

/** The bar that mirrors the headline numbers at the bottom of narrow screens. */
export function renderSummaryBar(kind, text) {
  const bar = $('#summary-bar');
  bar.className = `summary-bar ${kind}`;
  bar.textContent = text;
}

export function summaryText(r) {
  return `${planName(r.plan)}: ${duration(r.iteration_time_s)} per step · ${rate(r.tokens_per_s, 'tokens/s')} · MFU ${percent(r.mfu)}`;
}
