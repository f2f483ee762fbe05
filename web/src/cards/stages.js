// Which pipeline stages the cards draw as rows, and a stage's layers in words.
import { integer } from '../ui/format.js';

// Rows the page draws per stage at most. A plan may have thousands of stages (the engine allows
// them); drawing each would build tens of thousands of elements and stall the page, and no reader
// scans them all. Past this, the rows that answer the questions a reader has are kept.
export const MAX_STAGE_ROWS = 48;

/**
 * The stages to draw as rows, in order: all of them when few, else the first and the last, the
 * bottleneck, those that do not fit and then the most loaded by `load(stage)`, up to
 * MAX_STAGE_ROWS. `note`: what was left out, in words, or null.
 */
export function shownStages(r, load) {
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
    r.plan?.loss_in_split && s.index === r.stages.length - 1 ? ' + loss' : ''].join('');
  return `${s.layers} layers${extra}`;
}
