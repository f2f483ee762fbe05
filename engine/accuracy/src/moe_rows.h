// Mixture-of-experts rows of modern-runs.csv: the model from its preset (the row names it and
// repeats its shape), and the plan keys only MoE rows have (expert parallelism, the token
// exchange, recompute modules, pipeline layouts). Private to the accuracy library.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conversion.h"
#include "stepcast/accuracy/sources.h"
#include "stepcast/catalog.h"

namespace stepcast::accuracy::detail {

// The preset architecture the row names ("DeepSeek-V3", "Qwen3-30B-A3B"; "DeepSeek-V2 (4-layer
// reduced)" is that architecture with the row's layer count), checked against the row's shape,
// with the row's sequence length; `named` (sources.json models_by_name), when not null, picks
// the preset for a row that names its model without the shape. Assumptions go to `assumptions`.
Step<Json> moe_model_of(const CellReader& cell, const Catalog& catalog, const ModelByName* named,
                        std::vector<std::string>& assumptions);

// The recompute mode of a row's cell: "none", "selective [] (none)", a module list ("selective
// mla_up_proj, mlp", "mlp, moe_act") or "full"; "not stated" takes the model's recipe, then the
// source's default. Empty with the reason in `skip` when nothing applies.
Step<std::string> moe_recompute_of(std::string_view cell, const SourceFacts& facts,
                                      const CellReader& row,
                                      std::vector<std::string>& assumptions);

// The source's recipe for the row (its model, source, gpu and precision cells), or nullptr.
const SourceFacts::ModelRecipe* recipe_of(const CellReader& row, const SourceFacts& facts);

// The plan keys of a MoE row: ep, etp, moe_dispatcher, moe_overlap, cuda_graphs and the pipeline
// layout;
// `stages` is pp x vp.
Step<Json> moe_plan_of(const CellReader& cell, const SourceFacts& facts, int64_t stages,
                          int64_t layers, std::vector<std::string>& assumptions);

}  // namespace stepcast::accuracy::detail
