// Scenario links on the page side. Reading and writing a link is the engine's
// (engine/include/stepcast/share_link.h, through the worker: engine.toLink / engine.fromLink), so
// the page and the CLI share one codec.
// What is here: what the page does with the engine's answer. A link is untrusted input: its
// scenario is data, checked against the presets before it reaches a control, and every text from
// it is shown as text (textContent), never as HTML.
import { layoutProblem } from './groups.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const quote = (s) => `“${String(s).length > 80 ? `${String(s).slice(0, 77)}…` : s}”`;

/**
 * Why the page cannot show this scenario, as a sentence (null when it can): a preset the link
 * names that does not exist, or a shape the controls cannot hold. Anything else (a plan the engine
 * rejects) is shown, with the engine's message next to the control.
 */
export function linkProblem(s, presets) {
  if (!isObject(s)) return 'it holds no scenario';
  const has = (list, id) => list.some((x) => x.id === id);
  if (typeof s.model === 'string') {
    if (!has(presets.models, s.model)) return `it names the model preset ${quote(s.model)}, which does not exist in this Stepcast`;
  } else if (!isObject(s.model)) {
    return 'it names no model';
  }
  if (!isObject(s.cluster)) return 'it describes no cluster';
  let groups = [s.cluster];
  if (s.cluster.groups !== undefined) {
    if (!Array.isArray(s.cluster.groups) || s.cluster.groups.length === 0 || s.cluster.groups.length > 64 ||
      !s.cluster.groups.every(isObject))
      return 'its cluster.groups is not a list of groups of nodes';
    groups = s.cluster.groups;
    const link = s.cluster.inter_group_link;
    if (typeof link === 'string' && !has(presets.links, link))
      return `it names the link preset ${quote(link)}, which does not exist in this Stepcast`;
    if (link !== undefined && !(typeof link === 'string' || isObject(link)))
      return 'its link between the groups is neither a preset nor a link';
  }
  for (const group of groups) {
    if (group.node !== undefined) {
      if (typeof group.node !== 'string' || !has(presets.nodes, group.node))
        return `it names the node preset ${quote(group.node)}, which does not exist in this Stepcast`;
    } else {
      if (typeof group.gpu === 'string' && !has(presets.gpus, group.gpu))
        return `it names the GPU preset ${quote(group.gpu)}, which does not exist in this Stepcast`;
      if (!(typeof group.gpu === 'string' || isObject(group.gpu))) return 'its cluster names no node and no GPU';
      for (const k of ['intra_node_link', 'inter_node_link']) {
        const v = group[k];
        if (typeof v === 'string' && !has(presets.links, v))
          return `it names the link preset ${quote(v)}, which does not exist in this Stepcast`;
        if (!(typeof v === 'string' || isObject(v))) return `its cluster has no ${k.replaceAll('_', '-')}`;
      }
    }
  }
  if (!isObject(s.plan)) return 'it holds no plan';
  return layoutProblem(s.plan, groups.length);
}

/** The engine's error message without its "link: " prefix, as a sentence part. */
export function linkMessage(error) {
  return String(error?.message ?? error ?? 'unreadable').replace(/^link:\s*/, '').replace(/\.$/, '');
}

/** The page's own settings for a link: tokens to train (a count) and the price per GPU-hour. */
export function pageSettings(tokensBillions, price) {
  const page = {};
  const t = Number(tokensBillions);
  const p = Number(price);
  if (String(tokensBillions).trim() !== '' && Number.isFinite(t) && t >= 0) page.tokens = Math.round(t * 1e9);
  if (String(price).trim() !== '' && Number.isFinite(p) && p >= 0) page.price_per_gpu_hour = p;
  return page;
}

/** Billions of tokens for an input, without floating-point noise (1.3e9 -> "1.3"). */
export function billions(tokens) {
  return String(Number((tokens / 1e9).toPrecision(12)));
}
