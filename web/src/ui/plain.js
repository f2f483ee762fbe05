// The engine's problems in the page's words. The engine words a rule for a command-line user, with
// JSON paths ("plan.tp=3 must divide model.heads=64"); the page names the controls as they are
// labelled and says the numbers ("TP 3 does not divide the 64 attention heads"). A message no rule
// below knows keeps the engine's wording with its paths turned into labels, so nothing is lost.
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
const COUNTED = {
  'model.heads': 'attention heads', 'model.kv_heads': 'KV heads', 'model.layers': 'layers',
  'model.moe.experts': 'experts',
};
// "Hidden size" -> "hidden size" inside a sentence; "FFN size", "TP" keep their capitals.
const inSentence = (label) => (/^[A-Z][a-z]/.test(label) ? label.charAt(0).toLowerCase() + label.slice(1) : label);
const divided = (path, value) => (COUNTED[path] ? `the ${n(value)} ${COUNTED[path]}` : `the ${inSentence(labelOf(path))} ${n(value)}`);

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
    .replace(/\*/g, ' × ');
}

// [pattern, (match, error) => sentence]: the rules a user meets most, from the engine's wording.
const RULES = [
  [/^(plan\.\w+)=(\d+) must divide (model\.[\w.]+)=(\d+)(.*)$/,
    (m) => `${labelOf(m[1])} ${n(m[2])} does not divide ${divided(m[3], m[4])}${labelled(m[5])}`],
  [/^the cluster's (\d+) GPUs are not divisible by tp\*pp\*cp=(\d+)\*(\d+)\*(\d+)=(\d+)/,
    (m) => `The cluster's ${n(m[1])} GPUs do not split into whole model replicas of ` +
      `TP ${m[2]} × PP ${m[3]}${m[4] === '1' ? '' : ` × CP ${m[4]}`} = ${n(m[5])} GPUs`],
  [/^([a-z_]+(?:\.[\w]+)+)=(\d+) must be divisible by ([a-z_]+(?:\.[\w]+)+)=(\d+)(?![*\d])(.*)$/,
    (m) => `${labelOf(m[3])} ${n(m[4])} does not divide ${divided(m[1], m[2])}${labelled(m[5])}`],
  [/^model\.layers=(\d+) must be divisible by plan\.pp\*plan\.vpp=(\d+)\*(\d+)=(\d+)/,
    (m) => (m[3] === '1' ? `PP ${m[2]} does not divide the ${n(m[1])} layers into equal stages`
      : `PP ${m[2]} × VPP ${m[3]} = ${m[4]} model chunks do not divide the ${n(m[1])} layers evenly`)],
  [/^plan\.global_batch=(\d+) must be divisible by plan\.micro_batch\*plan\.dp=(\d+)\*(\d+)=(\d+)/,
    (m) => `Global batch ${n(m[1])} does not split into micro-batches of ${n(m[2])} over ${n(m[3])} data-parallel ` +
      `replicas (it must be a multiple of ${n(m[2])} × ${n(m[3])} = ${n(m[4])})`],
  [/^plan: tp\*pp\*cp\*dp=(\d+)\*(\d+)\*(\d+)\*(\d+)=(\d+) must equal the cluster's GPU count (\d+)/,
    (m) => `TP ${m[1]} × PP ${m[2]} × CP ${m[3]} × DP ${m[4]} = ${n(m[5])} GPUs, but the cluster has ${n(m[6])}`],
];

// The engine's hint starts with the key it is about ("tp 1, 2, 4 or 8 divides the model").
const HINT_KEYS = { tp: 'TP', pp: 'PP', dp: 'DP', cp: 'CP', ep: 'EP', etp: 'Expert TP', vpp: 'VPP', 'pp·vpp': 'PP × VPP' };

/** The hint in the page's words: "try TP 1, 2, 4 or 8"; each of its alternatives ("; ") so. */
function plainHint(hint) {
  return hint.split('; ').map((part) => {
    const m = /^(pp·vpp|[a-z]+) ([\d, or]+?) divides? .*$/.exec(part);
    if (m && HINT_KEYS[m[1]]) return `${HINT_KEYS[m[1]]} ${m[2]}`;
    return labelled(part);
  }).join('; ');
}

const CLUSTER_SPLIT = RULES[1][0];

/**
 * An engine problem ({path, message, hint?, related?}) with its message and hint in the page's
 * words; the engine's own message stays as `engine` (shown on hover, and what a bug report quotes).
 * `gpusPerNode`: the nodes' size when the cluster is one group, for the node counts that would do.
 */
export function plainProblem(p, { gpusPerNode } = {}) {
  if (typeof p?.message !== 'string') return p;
  const rule = RULES.find(([re]) => re.test(p.message));
  const message = rule ? rule[1](rule[0].exec(p.message), p) : labelled(p.message);
  let hint = typeof p.hint === 'string' && p.hint ? plainHint(p.hint) : p.hint;
  const split = CLUSTER_SPLIT.exec(p.message);
  // Node counts help only when TP fits the nodes (else TP is what to change, and its rule says so).
  if (!hint && split && gpusPerNode > 0 && Number(split[1]) % gpusPerNode === 0 && gpusPerNode % Number(split[2]) === 0) {
    const fit = nodesThatFit(Number(split[1]) / gpusPerNode, gpusPerNode, Number(split[5]));
    hint = `${fit.map(n).join(' or ')} nodes, or a TP × PP that divides ${n(split[1])} GPUs`;
  }
  return { ...p, message: message.charAt(0).toUpperCase() + message.slice(1), hint, engine: p.message };
}

/** Nodes counts near `nodes` that hold whole replicas of `perReplica` GPUs on `perNode`-GPU nodes. */
export function nodesThatFit(nodes, perNode, perReplica) {
  const gcd = (a, b) => (b ? gcd(b, a % b) : a);
  const step = perReplica / gcd(perReplica, perNode);
  const below = Math.floor(nodes / step) * step;
  return [below, below + step].filter((x) => x > 0);
}
