// Which pipeline stages the cards draw as rows, and a stage's layers in words.
import { integer } from '../ui/format.js';

/**
 * How many stages the plan has: the worker sends a report of more than MAX_STAGE_ROWS stages with
 * only the rows the cards draw, and `all_stages` (engine/trim.js); a full one has every stage.
 */
export const stageCount = (r) => r.all_stages?.count ?? r.stages.length;

/** Stage `i` of report `r`, when it is among the stages the report holds. */
export const stageAt = (r, i) => r.stages.find((s) => s.index === i);

/**
 * The stages to draw as rows, in order, for the cards that weigh them by memory (`by`:
 * 'memory') or by compute ('compute'): all of them when few, else those the worker picked
 * (engine/trim.js). `note`: what was left out, in words, or null.
 */
export function shownStages(r, by) {
  const all = r.all_stages;
  if (!all) return { stages: r.stages, note: null };
  const keep = new Set(all.shown[by]);
  return {
    stages: r.stages.filter((s) => keep.has(s.index)),
    note: `${integer(keep.size)} of ${integer(all.count)} stages shown: the first, the last, the bottleneck, ` +
      'those that do not fit and the most loaded.',
  };
}

/** The stage that fills its GPUs' memory the most (the one that decides whether a plan fits). */
export const fullestStage = (r) => r.stages.reduce((a, s) => (s.memory_bytes.total / s.memory_bytes.capacity >
  a.memory_bytes.total / a.memory_bytes.capacity ? s : a));

/** A stage's compute per micro-batch: forward + backward + recompute. */
export const computeOf = (s) => s.forward_s + s.backward_s + s.recompute_s;

/**
 * A stage's layers in words: "20 layers", "16 layers + embedding" (the plan counts the input
 * embedding as a layer of the first stage, the output layer and loss as one of the last).
 */
export function layersOf(r, s) {
  const extra = [r.plan?.embedding_in_split && s.index === 0 ? ' + embedding' : '',
    r.plan?.loss_in_split && s.index === stageCount(r) - 1 ? ' + loss' : ''].join('');
  return `${s.layers} layers${extra}`;
}
