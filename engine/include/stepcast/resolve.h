// The scenario as the engine reads it: every default and derived value filled in (dp, the
// effective ZeRO stage, the framework's flags, per-stage layers and groups, replica sets and
// their micro-batches, the link between groups). The page and the embed render from this and the
// schema (schema.h) and never re-derive a rule or a default.
#pragma once

#include "stepcast/scenario.h"

namespace stepcast {

// The scenario document with every default filled in: the model and cluster as the document gave
// them (preset ids stay ids) with their defaulted keys added, the plan in full including
// `stages` (group and layers of every pipeline stage) or `replicas` (with micro-batches), and
// `seq_len`. Feeding it back gives the same estimate.
Json resolved_document(const Scenario& scenario, const Json& document);

// resolve() for the bindings: {"scenario": <resolved document>, "model": {...every model key and
// "parameters"}, "groups": [{"gpu", "gpu_name", "gpus_per_node", "nodes", "gpus", ...}], "gpus",
// "micro_batches"} or {"errors": [{"code", "path", "message", "related", "hint"}, ...]} listing
// every problem of the document.
Json resolve_json(const Json& document, const Catalog& catalog);

}  // namespace stepcast
