// Heterogeneous clusters: what the page says about a cluster's groups of nodes (names, GPU counts,
// colours) and which layouts of stages and replica sets its controls can hold. Pure functions of a
// scenario, the presets and the engine's resolve(); the form and the results both use them. Where
// stages and replica sets run by default is the engine's to say (resolve()).

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
 * What the page shows about each group of a cluster (as written): {index, gpu (short GPU name),
 * node (node name or "custom nodes"), nodes, gpusPerNode, gpus, title ("1 × DGX A100 · 8 × A100
 * SXM4 80GB")}. Names come from the presets; GPU counts from `resolved` (resolve()'s groups), NaN
 * (left out of the title) while the engine has not resolved the scenario.
 */
export function describeGroups(cluster, presets, resolved = null) {
  return clusterGroups(cluster).map((g, index) => {
    const r = resolved?.[index];
    let gpu = g?.gpu;
    let perNode = g?.gpus_per_node;
    let node = 'custom nodes';
    if (typeof g?.node === 'string') {
      const n = byId(presets.nodes, g.node);
      node = n ? n.name.replace(/\s*\(.*\)$/, '') : g.node;
      gpu = n?.gpu ?? gpu;
      perNode = n?.gpus_per_node ?? perNode;
    }
    let gpuName = r?.gpu_name ?? 'GPU';
    if (!r && typeof gpu === 'string') gpuName = byId(presets.gpus, gpu)?.name ?? gpu;
    else if (!r && isObject(gpu)) gpuName = typeof gpu.name === 'string' && gpu.name ? gpu.name : 'custom GPU';
    const nodes = r?.nodes ?? Number(g?.nodes);
    const gpus = r?.gpus ?? NaN;
    const short = shortGpu(gpuName);
    return {
      index, gpu: short, node, nodes, gpusPerNode: r?.gpus_per_node ?? Number(perNode), gpus,
      title: `${Number.isFinite(nodes) ? nodes : '?'} × ${node} · ${Number.isFinite(gpus) ? `${gpus} × ` : ''}${short}`,
    };
  });
}

/** The colour of group i (a CSS custom property; six, then they repeat). */
export const GROUP_COLORS = 6;
export function groupColor(i) {
  return `var(--g${((i % GROUP_COLORS) + GROUP_COLORS) % GROUP_COLORS})`;
}

/** The text colour on group i's colour: white or near-black, whichever reads at 4.5:1 (style.css). */
export function groupTextColor(i) {
  return `var(--g${((i % GROUP_COLORS) + GROUP_COLORS) % GROUP_COLORS}-text)`;
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
