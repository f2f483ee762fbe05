// The engine's problems in the page's words. The engine words a rule for a command-line user, with
// JSON paths ("plan.tp=3 must divide model.heads=64"), and names the rule it broke with its
// values ({rule: "divides", values: {divisor_key: "plan.tp", divisor: 3, ...}}); the page keys on
// those to name the controls as they are labelled and say the numbers ("TP 3 does not divide the
// 64 attention heads"). A rule the page does not word keeps the engine's message with its paths
// turned into labels, so nothing is lost.
import { key } from '../scenario/schema.js';

const n = (x) => Number(x).toLocaleString('en-US');

/** The label of a scenario path ("plan.tp" -> "TP"; "cluster.groups[1].nodes" -> "Nodes"), else the path. */
export function labelOf(path) {
  // A group by its number, as the form heads it: "group 1", "Nodes of group 1".
  const group = /^cluster\.groups\[(\d+)\](?:\.(.+))?$/.exec(path);
  if (group) return group[2] ? `${labelOf(`cluster.${group[2]}`)} of group ${group[1]}` : `group ${group[1]}`;
  const generic = path.replace(/\[\d+\]/g, '[]');
  return key(generic)?.label || key(generic.replace(/^cluster\.groups\[\]\./, 'cluster.'))?.label || path;
}

// What a count divided by a plan size is called ("the 64 attention heads"), or a size ("the FFN size 14,336").
// (A Map: the path is the engine's, from the scenario's keys.)
const COUNTED = new Map([
  ['model.heads', 'attention heads'], ['model.kv_heads', 'KV heads'], ['model.layers', 'layers'],
  ['model.moe.experts', 'experts'],
]);
// "Hidden size" -> "hidden size" inside a sentence; "FFN size", "TP" keep their capitals.
const inSentence = (label) => (/^[A-Z][a-z]/.test(label) ? label.charAt(0).toLowerCase() + label.slice(1) : label);
const divided = (path, value) => (COUNTED.has(path) ? `the ${n(value)} ${COUNTED.get(path)}` : `the ${inSentence(labelOf(path))} ${n(value)}`);

const PATH = /\b(?:(?:plan|model|cluster|gpu|link)\.[A-Za-z_][\w.]*(?:\[\d+\][\w.]*)*|seq_len)/g;

const ALL = (re) => new RegExp(re, 'g');

/** A message with every `path=value` as "Label value", `a*b` as "a × b", a group's key as "Key (group i)". */
function labelled(message) {
  return message
    .replace(ALL(`(\\d+)\\*(${PATH.source})=(\\d+)`), (_, k, p, v) => `${k} × ${labelOf(p)} = ${v}`)
    .replace(ALL(`(${PATH.source})=(true|false)\\b`), (_, p, v) => `${labelOf(p)} ${v === 'true' ? 'on' : 'off'}`)
    .replace(ALL(`(${PATH.source})=([^\\s,;:)]+)`), (_, p, v) => {
      const group = /^cluster\.groups\[(\d+)\]\.(.+)$/.exec(p);
      return group ? `${labelOf(`cluster.${group[2]}`)} ${v} (group ${group[1]})` : `${labelOf(p)} ${v}`;
    })
    .replace(PATH, (p) => labelOf(p))
    .replace(/(\d)\*(?=\d)/g, '$1 × ')
    .replace(/\*/g, ' × ')
    .replace(/(\d)=(?=\d)/g, '$1 = '); // "1 × 16 × 8=128" (a product's value) as "1 × 16 × 8 = 128"
}

// "1, 2, 4 or 8": values that would do, as the engine lists them.
const either = (values) => values.map(n).reduce((out, v, i, all) => (i === 0 ? v : `${out}${i + 1 === all.length ? ' or ' : ', '}${v}`), '');
const list = (values) => (Array.isArray(values) && values.length ? values : null);

// rule id (the engine's error.rule: engine/include/stepcast/rule_ids.h, docs/scenario.md "Errors")
// -> (values) => [sentence, hint] for the rules a user meets most; the hint falsy when the values
// hold no alternative (then the engine's hint, labelled, if any), null for a case the page leaves
// in the engine's words. Any other rule keeps the engine's wording with its paths as labels.
const RULES = {
  divides: (v) => [`${labelOf(v.divisor_key)} ${n(v.divisor)} does not divide ${divided(v.dividend_key, v.dividend)}`,
    list(v.would_divide) && `${labelOf(v.divisor_key)} ${either(v.would_divide)}`],
  whole_replicas: (v) => [`The cluster's ${n(v.gpus)} GPUs do not split into whole model replicas of ` +
    `TP ${v.tp} × PP ${v.pp}${v.cp === 1 ? '' : ` × CP ${v.cp}`} = ${n(v.replica_gpus)} GPUs`,
  list(v.would_fit_nodes) && `${either(v.would_fit_nodes)} nodes, or a TP × PP that divides ${n(v.gpus)} GPUs`],
  gpus_product: (v) => [`TP ${v.tp} × PP ${v.pp} × CP ${v.cp} × DP ${v.dp} = ${n(v.product)} GPUs, but the cluster has ${n(v.gpus)}`],
  batch_split: (v) => [`Global batch ${n(v.global_batch)} does not split into micro-batches of ${n(v.micro_batch)} over ` +
    `${n(v.dp)} data-parallel replicas (it must be a multiple of ${n(v.micro_batch)} × ${n(v.dp)} = ${n(v.micro_batch * v.dp)})`,
  list(v.would_split) && `${labelOf('plan.global_batch')} ${either(v.would_split)}`],
  // (With the embedding or the loss counted as layers, the engine's own words.)
  layer_split: (v) => (v.counted ? null : [v.vpp === 1 ? `PP ${v.pp} does not divide the ${n(v.layers)} layers into equal stages`
    : `PP ${v.pp} × VPP ${v.vpp} = ${v.pp * v.vpp} model chunks do not divide the ${n(v.layers)} layers evenly`, splitHint(v), splitFixes(v)]),
  // First and last stage layers that do not split into the VPP's chunks (set at VPP 1, then VPP
  // raised): the splits at this VPP, each button replacing them (the plan of a stage list, whose
  // values name no PP, keeps the engine's words).
  stage_chunks: (v) => (v.counted || !v.pp ? null : [`A stage of ${n(v.layers)} layer${v.layers === 1 ? '' : 's'} does not split into VPP ${v.vpp} chunks`,
    splitHint(v) && `in place of ${labelOf('plan.first_stage_layers')} and ${labelOf('plan.last_stage_layers')}: ${splitHint(v)}`,
    splitFixes(v, true)]),
};

/**
 * The splits of splitHint a click can set (issue 37: the field that fixes a published MoE plan is
 * under Advanced and was never named): [{label, set: {path: value}}]. `replacing`: the plan has
 * first and last stage layers, which the engine takes with no other split (rules layout_alone,
 * one_uneven_split): each button clears them first.
 */
function splitFixes(v, replacing = false) {
  const fixes = [];
  const clear = replacing ? { 'plan.first_stage_layers': undefined, 'plan.last_stage_layers': undefined } : {};
  if (v.first_stage_layers) {
    fixes.push({ label: `Set first stage ${v.first_stage_layers}, last ${v.last_stage_layers}`,
      set: { 'plan.first_stage_layers': v.first_stage_layers, 'plan.last_stage_layers': v.last_stage_layers } });
  }
  if (v.pipeline_layout) fixes.push({ label: `Set pipeline layout ${v.pipeline_layout}`, set: { ...clear, 'plan.pipeline_layout': v.pipeline_layout } });
  if (v.count_embedding) fixes.push({ label: 'Set embedding and loss as layers', set: { ...clear, 'plan.embedding_in_split': true, 'plan.loss_in_split': true } });
  else if (v.count_loss) fixes.push({ label: 'Set loss as a layer', set: { ...clear, 'plan.loss_in_split': true } });
  return fixes.length ? fixes : undefined;
}

/** The rule ids the page words itself (tests/wasm/plain.test.mjs meets each in a real error). */
export const WORDED_RULES = Object.keys(RULES);

/** What would split the layers when PP × VPP does not divide them, each alternative the engine found. */
function splitHint(v) {
  const ways = [];
  // In a control's own unit where one does (issue 37: "PP × VPP 4" asks the reader to divide):
  // VPP at this PP, else PP at this VPP, else the product.
  if (list(v.would_divide)) {
    const vpp = v.vpp > 1 ? v.would_divide.filter((c) => c % v.pp === 0).map((c) => c / v.pp) : [];
    const pp = v.would_divide.filter((c) => c % v.vpp === 0 && (v.vpp === 1 || c > v.vpp)).map((c) => c / v.vpp);
    ways.push(vpp.length ? `VPP ${either(vpp)} at PP ${v.pp}` : pp.length ? `PP ${either(pp)}${v.vpp > 1 ? ` at VPP ${v.vpp}` : ''}`
      : `PP × VPP ${either(v.would_divide)}`);
  }
  // The switches by their labels ("Loss counts as a layer"), which say what they do.
  if (v.count_embedding) ways.push(`turn on “${labelOf('plan.embedding_in_split')}” and “${labelOf('plan.loss_in_split')}”`);
  else if (v.count_loss) ways.push(`turn on “${labelOf('plan.loss_in_split')}”`);
  if (v.pipeline_layout) ways.push(`${labelOf('plan.pipeline_layout')} ${v.pipeline_layout} (as NVIDIA's recipes split such models)`);
  if (v.first_stage_layers) {
    ways.push(`${labelOf('plan.first_stage_layers')} ${v.first_stage_layers} and ${labelOf('plan.last_stage_layers')} ` +
      `${v.last_stage_layers}${v.pp > 2 ? ` (${v.other_stage_layers} on each other stage)` : ''}`);
  }
  return ways.join('; ') || undefined;
}

/**
 * An engine problem ({path, message, hint?, related?, rule?, values?}) with its message and hint in
 * the page's words, keyed on the rule's id and values (never on the message's wording); the
 * engine's own message stays as `engine` (shown on hover, and what a bug report quotes).
 */
export function plainProblem(p) {
  if (typeof p?.message !== 'string') return p;
  const say = Object.hasOwn(RULES, p.rule ?? '') && p.values && typeof p.values === 'object' ? RULES[p.rule](p.values) : null;
  // A measured run's plan is checked like the scenario's: say whose plan the rule is about (the
  // engine's message starts with the run's path, the rule's words do not).
  const run = say && typeof p.path === 'string' ? /^calibration\.runs\[(\d+)\]/.exec(p.path) : null;
  const message = say ? (run ? `measured run ${Number(run[1]) + 1}: ${say[0]}` : say[0]) : labelled(p.message);
  const hint = say?.[1] || (typeof p.hint === 'string' && p.hint ? labelled(p.hint) : p.hint);
  const fixes = say?.[2];
  return { ...p, message: message.charAt(0).toUpperCase() + message.slice(1), hint, ...(fixes ? { fixes } : {}), engine: p.message };
}
