// The Stage map card: which group each pipeline stage (or replica set) runs on, the layers each
// stage holds and its compute per micro-batch, and the balance the engine chose. Shown with
// several groups, a placement, or stages that differ (an uneven split on one group).
import { $, fill, h } from '../ui/dom.js';
import { duration, integer } from '../ui/format.js';
import { groupColor, groupTextColor } from '../scenario/groups.js';
import { gpuOf, gpuWord, many, shown as context, swatch } from './context.js';
import { computeOf, layersOf, shownStages, stageCount } from './stages.js';

export function renderStageMap(r) {
  const card = $('#stagemap-card');
  // Also for one group when its stages differ: layers of the first and last stage set, or the
  // embedding and loss counted as layers.
  const uneven = (r.all_stages?.uneven ?? r.stages.some((s) => s.layers !== r.stages[0].layers)) ||
    r.plan?.embedding_in_split || r.plan?.loss_in_split;
  const show = many() || context.layout !== 'none' || uneven;
  card.hidden = !show;
  if (!show) return;
  const legend = h('ul', { class: 'legend' }, context.groups.map((g) => h('li', { 'data-group': g.index }, swatch(g.index),
    `group ${g.index}: ${g.title}`)));
  if (context.layout === 'replicas') {
    const sets = r.replicas ?? [];
    const slowest = Math.max(...sets.map((x) => x.pipeline_s));
    const onShow = sets.findIndex((x) => x.group === (r.stages[0]?.group ?? 0) && x.pipeline_s === slowest);
    const worst = onShow >= 0 ? onShow : sets.findIndex((x) => x.pipeline_s === slowest);
    const rows = sets.map((x, k) => h('div', {
      class: `sm-set${k === worst ? ' slowest' : ''}`, 'data-replica': k, 'data-group': x.group, 'data-count': x.count,
      'data-micro-batches': x.micro_batches, 'data-pipeline': String(x.pipeline_s),
    },
    h('div', { class: 'sm-name' }, swatch(x.group), `Set ${k}`,
      h('span', { class: 'hint' }, ` ${x.count} × ${gpuWord(x.group)} pipeline${x.count === 1 ? '' : 's'}`)),
    h('div', { class: 'sm-track', role: 'img', 'aria-label': `set ${k}: pipeline ${duration(x.pipeline_s)} of ${duration(r.iteration_time_s)}` },
      h('span', { class: 'sm-fill', style: { width: `${(100 * x.pipeline_s) / r.iteration_time_s}%`, background: groupColor(x.group) } })),
    h('div', { class: 'sm-value' }, `${integer(x.micro_batches)} micro-batches each · ${duration(x.pipeline_s)}`,
      k === worst ? h('strong', { class: 'sm-tag' }, ' slowest') : null)));
    fill($('#stagemap'), legend,
      h('p', { class: 'hint' }, 'Replica sets: each replica is a whole pipeline on one group. ' +
        'Micro-batches per replica as the engine shared them (bars: pipeline time of one iteration, before the gradient sync).'),
      h('div', { class: 'sm-rows' }, rows),
      worst >= 0 ? h('p', { class: 'hint' }, `Breakdown, memory and census below are for set ${worst} (the slowest).`) : null);
    return;
  }
  const total = r.all_stages?.layers ?? r.stages.reduce((a, s) => a + s.layers, 0);
  const count = stageCount(r);
  const shown = shownStages(r, 'compute');
  const per = shown.stages.map(computeOf);
  const maxPer = r.stages.reduce((a, s) => Math.max(a, computeOf(s)), 0);
  const labelled = !r.all_stages; // past the rows drawn (engine/trim.js), a block too narrow to read
  const strip = h('div', { class: 'sm-strip', role: 'img',
    'aria-label': labelled ? `Stages: ${r.stages.map((s) => `stage ${s.index} on group ${s.group ?? 0}, ${layersOf(r, s)}`).join('; ')}`
      : `${integer(count)} stages` },
  labelled ? r.stages.map((s) => h('span', {
    class: 'sm-block', style: { flexGrow: String(s.layers), background: groupColor(s.group ?? 0), color: groupTextColor(s.group ?? 0) },
    title: `stage ${s.index}: ${layersOf(r, s)} on ${gpuOf(s.group ?? 0)}`,
  }, h('span', null, `${s.layers}`))) : stripRuns(r.all_stages.runs));
  // "bottleneck" on the slowest bar only (issue 37 item 12). The engine times its bottleneck with
  // what a stage waits for per micro-batch besides these bars' compute (exposed communication,
  // blocking sends: engine/src/estimate/stage_cost.cpp, unit_s), so it may be another stage than
  // the longest bar: then the longest is "slowest compute" and a line names the engine's.
  const slowest = r.stages.find((s) => computeOf(s) === maxPer)?.index;
  const tag = (i) => (i !== slowest ? null : i === r.bottleneck_stage ? ' bottleneck' : ' slowest compute');
  const rows = shown.stages.map((s, k) => h('div', {
    class: `sm-stage${s.index === slowest ? ' slowest' : ''}`, 'data-stage': s.index,
    'data-group': s.group ?? 0, 'data-layers': s.layers, 'data-compute': String(per[k]),
  },
  h('div', { class: 'sm-name' }, swatch(s.group ?? 0), `Stage ${s.index}`,
    h('span', { class: 'hint' }, ` ${layersOf(r, s)} · ${gpuWord(s.group ?? 0)}`)),
  h('div', { class: 'sm-track', role: 'img', 'aria-label': `stage ${s.index}: ${duration(per[k])} per micro-batch` },
    h('span', { class: 'sm-fill', style: { width: `${(100 * per[k]) / maxPer}%`, background: groupColor(s.group ?? 0) } })),
  h('div', { class: 'sm-value' }, `${duration(per[k])} per micro-batch`,
    tag(s.index) ? h('strong', { class: 'sm-tag' }, tag(s.index)) : null)));
  fill($('#stagemap'), legend,
    h('div', { class: 'sm-strip-wrap' }, strip, h('div', { class: 'hint' }, `${integer(total)} layers in ${count} stages`)),
    h('p', { class: 'hint' }, 'Compute per micro-batch (forward + backward + recompute): the slowest stage sets the pace, ' +
      'the others wait (the idle time in the timeline).'),
    h('div', { class: 'sm-rows' }, rows),
    slowest !== r.bottleneck_stage ? h('p', { class: 'hint', 'data-bottleneck': r.bottleneck_stage },
      `The engine's bottleneck is stage ${r.bottleneck_stage}: it times each stage with what it waits for per micro-batch ` +
      'besides the compute drawn here (communication left exposed, blocking sends).') : null,
    shown.note ? h('p', { class: 'hint', 'data-capped': 'stages' }, shown.note) : null);
}

/** The strip of many stages: one block per run of consecutive stages on the same group. */
function stripRuns(runs) {
  return runs.map((x) => h('span', {
    class: 'sm-block', style: { flexGrow: String(x.layers), background: groupColor(x.group), color: groupTextColor(x.group) },
    title: `stages ${x.from}–${x.to}: ${integer(x.layers)} layers on ${gpuOf(x.group)}`,
  }));
}
