// A name for a scenario that has none, from the presets' names: "Llama 3 70B on 8 × DGX H100,
// TP 8 × PP 4" (groups joined by " + "; the node's vendor and its parenthesis left out).
import { clusterGroups } from './groups.js';

export function scenarioLabel(s, presets) {
  const model = typeof s.model === 'string' ? presets.models.find((m) => m.id === s.model)?.name ?? s.model : s.model.name ?? 'custom model';
  const cluster = clusterGroups(s.cluster).map((group) => {
    const node = group.node ? presets.nodes.find((n) => n.id === group.node)?.name ?? group.node : `${group.gpus_per_node}-GPU nodes`;
    return `${group.nodes} × ${node.replace(/\s*\(.*\)$/, '').replace(/^(NVIDIA|AMD|Intel|Huawei) /, '')}`;
  }).join(' + ');
  const p = s.plan;
  return `${model} on ${cluster}, TP ${p.tp ?? 1} × PP ${p.pp ?? 1}`;
}
