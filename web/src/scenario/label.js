// A name for a scenario that has none, from the presets' names: "Llama 3 70B on 8 × DGX H100,
// TP 8 × PP 4" (groups joined by " + "; the node's vendor and its parenthesis left out).
import { clusterGroups } from './groups.js';

/**
 * A plan's name, from the engine's resolved plan (a report's plan): "TP 8 × PP 4 × DP 2", with
 * "× CP 2", "· VPP 2" and "· EP 8" where they are not 1. What the results and each compare
 * column are headed by (issue 37: the plan on show was named only in the form).
 */
export function planName(p) {
  if (!p) return '';
  const more = (key, word, sep) => (p[key] > 1 ? `${sep}${word} ${p[key]}` : '');
  return `TP ${p.tp} × PP ${p.pp} × DP ${p.dp}${more('cp', 'CP', ' × ')}${more('vpp', 'VPP', ' · ')}${more('ep', 'EP', ' · ')}`;
}

export function scenarioLabel(s, presets) {
  const model = typeof s.model === 'string' ? presets.models.find((m) => m.id === s.model)?.name ?? s.model : s.model.name ?? 'custom model';
  const cluster = clusterGroups(s.cluster).map((group) => {
    const node = group.node ? presets.nodes.find((n) => n.id === group.node)?.name ?? group.node : `${group.gpus_per_node}-GPU nodes`;
    return `${group.nodes} × ${node.replace(/\s*\(.*\)$/, '').replace(/^(NVIDIA|AMD|Intel|Huawei) /, '')}`;
  }).join(' + ');
  const p = s.plan;
  return `${model} on ${cluster}, TP ${p.tp ?? 1} × PP ${p.pp ?? 1}`;
}
