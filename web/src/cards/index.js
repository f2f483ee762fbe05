// The results: one module per card, each rendering its part of the engine's report into its
// section of index.html. Every number carries its unit; exact values sit in data-value attributes
// (the browser tests compare them with the CLI's). The report's part names and labels are one
// list (parts.js); what the cards know of the cluster beside the report is context.js.
//
//   summary.js    the Estimate card: headline numbers, training software, the summary bar
//   cost.js       the cost of a training run
//   breakdown.js  where the step goes
//   memory.js     memory per GPU, by pipeline stage
//   stage_map.js  which group each stage or replica set runs on
//   timeline.js   the pipeline timeline (drawn by timeline_chart.js)
//   census.js     the communication census of a stage
//   warnings.js   the engine's warnings
// Cards with requests of their own (the app asks for them after the estimate): search.js,
// scaling.js, traffic.js (link_load.js, bandwidth_curve.js); and compare.js, import_export.js,
// scenario_json.js.
import { $, $$ } from '../ui/dom.js';
import { roveTips, tip } from '../ui/tooltip.js';
import { renderBreakdown } from './breakdown.js';
import { renderCensus } from './census.js';
import { setReport } from './context.js';
import { renderCost } from './cost.js';
import { renderMemory } from './memory.js';
import { renderStageMap } from './stage_map.js';
import { renderMetrics } from './summary.js';
import { drawTimeline, renderTimeline } from './timeline.js';
import { resetColors } from './timeline_chart.js';
import { renderWarnings } from './warnings.js';

// The page never holds the main thread past a frame for any valid plan (issue 38): the cards are
// drawn one after another until this much of the task is spent, and the next one in a task of
// its own (the browser paints in between). A plan of a few stages draws every card in one slice;
// one of thousands (48 rows a card) took 60-190 ms in one task on a loaded two-core machine.
const SLICE_MS = 10;
const nextTask = () => (globalThis.scheduler?.yield ? globalThis.scheduler.yield() : new Promise((ok) => setTimeout(ok, 0)));
// In the order a reader meets them (the Estimate card first).
const CARDS = [renderMetrics, renderStageMap, renderCost, renderBreakdown, renderMemory, renderTimeline, renderCensus, renderWarnings];

/**
 * Renders a report (not an error) into every results section. `context`: the groups of the
 * cluster (scenario/groups.js describeGroups) and the layout ('none', 'stages', 'replicas') it
 * was for, given(path): whether its scenario gives the input at a schema path ("model.moe"), and
 * the link presets, and full(): a promise of the report with every stage (engine/trim.js).
 * `sliceStart`: when the task drawing it began; `current()`: whether `r` is still the report to
 * show (a newer one stops this between cards); `headline()`: called once the Estimate card's
 * numbers are drawn (the frame after paints them). Resolves to whether every card was drawn.
 */
export async function renderReport(r, context = {}, sliceStart = performance.now(), current = () => true, headline = () => {}) {
  setReport(r, context);
  for (const draw of CARDS) {
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTask();
      if (!current()) return false;
      setReport(r, context); // (another report's render may have set it meanwhile)
      sliceStart = performance.now();
    }
    draw(r);
    if (draw === renderMetrics) headline();
  }
  return true;
}

/** Once: the cards' "?" (one Tab stop per card), printing, and the timeline's colours in dark mode. */
export function initCards() {
  roveTips($('#results'));
  $('#timeline-tip').replaceWith(tip('timeline'));
  $('#stagemap-tip').replaceWith(tip('stage_map'));
  // Printing shows what the tables hold, not their closed disclosures.
  window.addEventListener('beforeprint', () => { for (const d of $$('#results details')) d.open = true; });
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    resetColors();
    requestAnimationFrame(drawTimeline);
  });
}
