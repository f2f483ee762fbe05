// The report's parts and their labels, in the report's order: the one list the breakdown, the
// memory bars and the comparison read (when the engine describes its report, they come from it).

// breakdown_s: [key, label, needs]. A part with `needs`, the schema path of the input it needs
// ("model.moe": the token exchange of experts), is not listed among the parts that are zero when
// the scenario lacks that input (a dense model has no expert comm to speak of).
export const PARTS = [
  ['forward', 'Forward'], ['backward', 'Backward'], ['recompute', 'Recompute'],
  ['tp_comm', 'TP comm'], ['cp_comm', 'CP comm'], ['ep_comm', 'Expert comm', 'model.moe'], ['pp_comm', 'PP send/recv'],
  ['bubble', 'Pipeline bubble'], ['dp_comm', 'DP sync'], ['optimizer', 'Optimizer'],
  ['other', 'Other comm'], ['host', 'CPU launches'],
];

// memory_bytes of a stage: [key, label, term (its tooltip, ui/terms.js)].
export const MEMORY = [
  ['weights', 'Weights', 'weights'], ['gradients', 'Gradients', 'gradients'],
  ['optimizer', 'Optimizer state', 'optimizer_mem'], ['activations', 'Activations', 'activations'],
  ['allocator', 'Allocator', 'allocator_mem'], ['other', 'Other', 'other_mem'],
];
