// The report's parts and their labels, in the report's order, from the engine's description of
// its report (the reportSchema() binding: engine/src/report/report_keys.cpp, one line per key):
// the one list the breakdown, the memory bars and the comparison read. What only the page knows
// about a part is the small tables below, keyed by the part's name.
let breakdown = [];
let memory = [];
let memoryTotals = [];

// A part that needs an input of the scenario (its schema path) to mean anything: it is not listed
// among the parts that are zero when the scenario lacks it (a dense model has no expert comm).
const NEEDS = { ep_comm: 'model.moe', offload: 'plan.cpu_offloading_num_layers' };
// The tooltip (ui/terms.js) of each memory part.
const MEMORY_TERMS = {
  weights: 'weights', gradients: 'gradients', optimizer: 'optimizer_mem', activations: 'activations', moe_dispatch: 'moe_dispatch',
  ep_overlap: 'ep_overlap', wgrad_dummies: 'wgrad_dummies', allocator: 'allocator_mem', userbuffers: 'userbuffers', deepep: 'deepep', nccl: 'nccl', other: 'other_mem',
};

/**
 * Takes the engine's report schema (engine.ready()'s reportSchema): the breakdown's parts are
 * its `breakdown_s` table; the memory parts are the `memory_bytes` keys before `total` (the table
 * lists the parts, then their sum, the capacity and the headroom).
 */
export function setReportSchema(schema) {
  breakdown = (schema?.breakdown_s ?? []).map((k) => [k.name, k.label, NEEDS[k.name]]);
  const keys = schema?.memory_bytes ?? [];
  const total = keys.findIndex((k) => k.name === 'total');
  memory = keys.slice(0, total < 0 ? keys.length : total).map((k) => [k.name, k.label, MEMORY_TERMS[k.name], k.doc]);
  memoryTotals = total < 0 ? [] : keys.slice(total).filter((k) => k.name !== 'headroom').map((k) => [k.name, k.label, k.doc]);
}

/** breakdown_s: [key, label, needs] in the report's order. */
export const parts = () => breakdown;

/** memory_bytes of a stage: [key, label, term, doc] in the report's order (doc: the engine's, for a part without a term). */
export const memoryParts = () => memory;

/** The memory_bytes keys after the parts, the headroom aside (total, allocated, reserved, capacity, offloaded): [key, label, doc]. */
export const memorySums = () => memoryTotals;
