// The scaling sweep, in the search worker (the module given): the plan on show estimated again
// at other node counts (DP follows, the global batch stays) and at other TP degrees (same nodes).
// The Scaling card (cards/scaling.js) draws the answer.
const MAX_NODES = 4096;

/** The engine's headline numbers of a scenario, or its first problem. */
function point(engine, scenario) {
  const r = JSON.parse(engine.estimateColumns(JSON.stringify(scenario)).json);
  if (r.error) return { error: r.error.message };
  return { iteration_time_s: r.iteration_time_s, tokens_per_s: r.tokens_per_s, mfu: r.mfu, fits: r.fits, gpus: r.gpus };
}

/**
 * In the worker: {nodes: [{nodes, ...point}], tp: [{tp, ...point}], base: {nodes, tp}} for a
 * one-group scenario (a JSON string), or {error} for a cluster of several groups.
 */
export function series(engine, text) {
  const s = JSON.parse(text);
  const c = s.cluster;
  if (!c || typeof c !== 'object' || Array.isArray(c.groups)) {
    return { error: 'scaling is shown for a cluster of one group of nodes' };
  }
  const n0 = Number(c.nodes ?? 1);
  const plan = { ...(s.plan ?? {}) };
  delete plan.dp; // derived from the GPUs at each size
  const counts = [...new Set([1, n0 / 8, n0 / 4, n0 / 2, n0, n0 * 2, n0 * 4, n0 * 8])]
    .filter((n) => Number.isInteger(n) && n >= 1 && n <= MAX_NODES).sort((a, b) => a - b);
  const tps = [1, 2, 4, 8, 16];
  return {
    base: { nodes: n0, tp: plan.tp ?? 1 },
    nodes: counts.map((nodes) => ({ nodes, ...point(engine, { ...s, cluster: { ...c, nodes }, plan }) })),
    tp: tps.map((tp) => ({ tp, ...point(engine, { ...s, plan: { ...plan, tp } }) })),
  };
}
