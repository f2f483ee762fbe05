// What the page draws of a report, cut in the worker (issue 38): the report of a plan of thousands
// of stages is megabytes (each stage's census), and receiving it held the page's main thread
// 60-600 ms (a 4,096-stage pipeline: 5 MB). Past MAX_STAGE_ROWS stages the cards draw that many
// rows; the worker picks them here, by memory and by compute, and sends those stages (with the
// fullest stage and the first of each group), the timeline's blocks of those stages only, and in
// `all_stages` what the cards read of every stage: {count, layers, uneven, runs, shown}. A
// download of every stage asks for the whole report (bridge.js fullReport).
import { computeOf } from '../cards/stages.js';

// Rows the page draws per stage at most. A plan may have thousands of stages (the engine allows
// them); drawing each would build tens of thousands of elements and stall the page, and no reader
// scans them all. Past this, the rows that answer the questions a reader has are kept.
const MAX_STAGE_ROWS = 48;

const memoryOf = (s) => s.memory_bytes.total;

/**
 * The indices of the stages to draw as rows, of a report of more than MAX_STAGE_ROWS: the first
 * and the last, the bottleneck, those that do not fit and then the most loaded by `load(stage)`.
 */
function pick(r, load) {
  const n = r.stages.length;
  const keep = new Set([0, n - 1, r.bottleneck_stage].filter((i) => Number.isInteger(i) && i >= 0 && i < n));
  for (const s of r.stages) if (!s.fits && keep.size < MAX_STAGE_ROWS / 2) keep.add(s.index);
  const byLoad = r.stages.map((s) => s.index).sort((a, b) => load(r.stages[b]) - load(r.stages[a]) || a - b);
  for (const i of byLoad) { if (keep.size >= MAX_STAGE_ROWS) break; keep.add(i); }
  return [...keep];
}

/** Runs of consecutive stages on one group (the stage map's strip): [{group, layers, from, to}]. */
function groupRuns(stages) {
  const runs = [];
  for (const s of stages) {
    const last = runs[runs.length - 1];
    if (last && last.group === (s.group ?? 0)) { last.layers += s.layers; last.to = s.index; }
    else runs.push({ group: s.group ?? 0, layers: s.layers, from: s.index, to: s.index });
  }
  return runs;
}

/**
 * Cuts `report` to the stages the cards draw, in place, when it has more than MAX_STAGE_ROWS.
 * Returns the set of the stage indices kept, or null when it keeps every stage.
 */
export function trimReport(report) {
  const all = report.stages;
  if (all.length <= MAX_STAGE_ROWS) return null;
  const shown = { memory: pick(report, memoryOf), compute: pick(report, computeOf) };
  const fill = (s) => s.memory_bytes.total / s.memory_bytes.capacity;
  const keep = new Set([...shown.memory, ...shown.compute, all.reduce((a, s) => (fill(s) > fill(a) ? s : a)).index]);
  const groups = new Set(); // the first stage of each group: its GPU and capacity
  for (const s of all) if (!groups.has(s.group ?? 0)) { groups.add(s.group ?? 0); keep.add(s.index); }
  report.all_stages = {
    count: all.length,
    layers: all.reduce((a, s) => a + s.layers, 0),
    uneven: all.some((s) => s.layers !== all[0].layers),
    runs: groupRuns(all),
    shown,
  };
  report.stages = all.filter((s) => keep.has(s.index));
  return keep;
}
