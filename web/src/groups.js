// Heterogeneous clusters: what the page says about a cluster's groups of nodes (names, GPU counts,
// colours) and where it places pipeline stages and replica sets by default. Pure functions of a
// scenario and the presets; the form and the results both use them.

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const byId = (list, id) => list.find((x) => x.id === id);

/** The groups of a cluster, as written: {groups: [...]} or the cluster itself as one group. */
export function clusterGroups(cluster) {
  if (!isObject(cluster)) return [];
  return Array.isArray(cluster.groups) ? cluster.groups : [cluster];
}

/** A GPU's short name: "NVIDIA A100 SXM4 80GB" -> "A100 SXM4 80GB". */
export function shortGpu(name) {
  return String(name).replace(/^(NVIDIA|AMD|Intel|Huawei) /, '');
}

/**
 * What the page shows about each group: {index, gpu (short GPU name), node (node name or
 * "custom"), nodes, gpusPerNode, gpus (NaN when unknown), title ("1 × DGX A100 · 8 × A100 SXM4
 * 80GB")}.
 */
export function describeGroups(cluster, presets) {
  return clusterGroups(cluster).map((g, index) => {
    let gpu = g?.gpu;
    let gpusPerNode = g?.gpus_per_node;
    let node = 'custom nodes';
    if (typeof g?.node === 'string') {
      const n = byId(presets.nodes, g.node);
      node = n ? n.name.replace(/\s*\(.*\)$/, '') : g.node;
      gpu = n?.gpu ?? gpu;
      gpusPerNode = n?.gpus_per_node ?? gpusPerNode;
    }
    let gpuName = 'GPU';
    if (typeof gpu === 'string') gpuName = byId(presets.gpus, gpu)?.name ?? gpu;
    else if (isObject(gpu)) gpuName = typeof gpu.name === 'string' && gpu.name ? gpu.name : 'custom GPU';
    const nodes = Number(g?.nodes);
    const gpus = nodes * Number(gpusPerNode);
    const short = shortGpu(gpuName);
    return {
      index, gpu: short, node, nodes, gpusPerNode: Number(gpusPerNode), gpus,
      title: `${Number.isFinite(nodes) ? nodes : '?'} × ${node} · ${Number.isFinite(gpus) ? gpus : '?'} × ${short}`,
    };
  });
}

/** The colour of group i (a CSS custom property; six, then they repeat). */
export const GROUP_COLORS = 6;
export function groupColor(i) {
  return `var(--g${((i % GROUP_COLORS) + GROUP_COLORS) % GROUP_COLORS})`;
}

/**
 * Default stage placement: which group each of `pp` stages runs on, in order. Each group hosts
 * its GPUs ÷ GPUs per stage stages when that uses every group exactly (what the engine requires);
 * otherwise stages in proportion to GPUs (the engine then says what does not fit). Null when a
 * count is not known yet.
 */
export function defaultStageGroups(pp, gpus, perStage) {
  if (!Number.isInteger(pp) || pp < 1 || !gpus.length || !gpus.every((g) => Number.isFinite(g) && g > 0)) return null;
  let counts = gpus.map((g) => g / perStage);
  if (!(counts.every(Number.isInteger) && counts.reduce((a, b) => a + b, 0) === pp)) {
    const total = gpus.reduce((a, b) => a + b, 0);
    const quota = gpus.map((g) => (pp * g) / total);
    counts = quota.map(Math.floor);
    const order = quota.map((q, i) => [q - Math.floor(q), i]).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    for (let k = 0, left = pp - counts.reduce((a, b) => a + b, 0); k < left; k++) counts[order[k % order.length][1]] += 1;
  }
  const out = [];
  counts.forEach((c, i) => { for (let k = 0; k < c; k++) out.push(i); });
  return out;
}

/** Default replica sets: one per group, as many whole pipelines as its GPUs hold (at least 1). */
export function defaultReplicaSets(gpus, perReplica) {
  if (!gpus.length || !gpus.every((g) => Number.isFinite(g) && g > 0) || !(perReplica > 0)) return null;
  return gpus.map((g, group) => ({ group, count: Math.max(1, Math.floor(g / perReplica)) }));
}

/**
 * Why the controls cannot hold a scenario's plan.stages / plan.replicas (a sentence part), or
 * null. Values the engine judges (a layer count of 0, a group count that does not add up) are
 * left to the engine; only shapes no control can show are refused here.
 */
export function layoutProblem(plan, groupCount) {
  if (!isObject(plan)) return null;
  if (plan.stages !== undefined && plan.replicas !== undefined) return 'its plan has both stages and replicas';
  const keys = { stages: ['group', 'layers'], replicas: ['group', 'count', 'micro_batches'] };
  for (const [key, allowed] of Object.entries(keys)) {
    const list = plan[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.length === 0 || list.length > 1024) return `its plan.${key} is not a list this page can show`;
    for (let i = 0; i < list.length; i++) {
      const e = list[i];
      const where = `plan.${key}[${i}]`;
      if (!isObject(e)) return `its ${where} is not an object`;
      const extra = Object.keys(e).find((k) => !allowed.includes(k));
      if (extra !== undefined) return `its ${where} has the key “${extra.slice(0, 40)}”, which this page does not know`;
      // A missing group is group 0 (the engine's default).
      if (e.group !== undefined && (!Number.isInteger(e.group) || e.group < 0 || e.group >= groupCount))
        return `its ${where}.group is not one of the cluster's ${groupCount} group${groupCount === 1 ? '' : 's'}`;
      for (const k of ['layers', 'micro_batches']) {
        if (e[k] !== undefined && e[k] !== 'auto' && typeof e[k] !== 'number') return `its ${where}.${k} is neither a number nor "auto"`;
      }
      if (e.count !== undefined && typeof e.count !== 'number') return `its ${where}.count is not a number`;
    }
  }
  return null;
}
