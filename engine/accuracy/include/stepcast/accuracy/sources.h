// The sources of the published runs and what each one's rows leave unsaid: the configuration
// its framework of the time used (FlashAttention, overlaps, ZeRO, pipeline messages) and the
// defaults its recipes document. The facts are data, with their evidence: engine/accuracy/
// sources.json, compiled in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stepcast/catalog.h"
#include "stepcast/result.h"

namespace stepcast::accuracy {

// The source of a row: the part of its id before the first '-' ("SC21-T1-3" -> "SC21").
std::string source_of(std::string_view id);

// What a source's rows do not repeat: its training software (a framework profile), the plan keys
// its recipes set beyond that profile, and the defaults its rows leave unstated. Every field is
// set from sources.json; `why` carries the evidence.
struct SourceFacts {
  std::string id;                    // "SC21"; "MBRIDGE*" matches every source starting MBRIDGE
  bool listed = false;               // false: no entry ("unlisted")
  bool megatron_lm = false;          // a Megatron-LM source (the 5 % goal)
  std::string framework;             // presets/frameworks/<id>.json
  Json plan = Json::object();        // plan keys beyond the profile
  // Sequence parallelism exactly where the row's recompute is selective (Korthikanti et al.).
  bool sequence_parallel_with_selective = false;
  // Gradient reduction overlapped only for models below this size (params_b column).
  std::optional<double> overlap_grad_reduce_below_params_b;
  std::optional<bool> tied_embeddings;         // overrides the architecture default
  std::optional<int64_t> default_micro_batch;  // when the row says "not stated"
  std::string default_recompute;               // when the row says "not stated"; empty: none
  std::string recompute_yes_means;             // a recompute cell "yes ..."; empty: not read
  // The head count when the row states none, for the one hidden size the source's model has.
  struct Heads {
    int64_t hidden = 0;
    int64_t heads = 0;
    std::string because;  // quoted in the case's assumptions
  };
  std::optional<Heads> heads_when_unstated;
  bool iter_time_from_tflops = false;  // TFLOP/s are model FLOPs: they give the iteration time
  // GPUs of each NVL72 domain a run of more than 72 GPUs uses.
  std::optional<int64_t> nvl72_gpus_per_domain;
  // Pipeline splits the source's recipes state for a model (Megatron's account-for flags).
  struct Layout {
    std::string model_contains;
    bool embedding_in_split = false;
    bool loss_in_split = false;
    std::string why;
  };
  std::vector<Layout> layout;
  // What the source's published recipe for a model sets where its rows say "not stated (see
  // perf_recipes)": recompute, the MoE token exchange, and the pipeline layouts by stage count
  // (pp x vp) for models whose layers do not split evenly, and where recipes differ by release,
  // GPU system or precision, the EP overlap and CUDA graphs; the optimizer's moment dtype; and
  // the layers whose activations it offloads.
  // The first entry whose model_contains is in the row's model name and whose filters (sources,
  // gpu_prefix, precision; empty: any) hold applies.
  struct ModelRecipe {
    std::string model_contains;
    std::vector<std::string> sources;     // the row's source is one of these
    std::vector<std::string> gpu_prefix;  // the row's gpu cell starts with one of these
    std::vector<std::string> precision;   // the row's precision cell's first word is one of these
    std::optional<bool> moe_overlap;      // --overlap-moe-expert-parallel-comm; none: the row's
    std::optional<bool> cuda_graphs;      // the recipe's cuda_graph_impl; none: the profile's
    std::optional<bool> bf16_moments;     // Adam's moments in bf16 (exp_avg_dtype); none: fp32
    // The optimizer's master copy (plan.master_weights: fp32, remainders or none); empty: the
    // source's plan's, else fp32.
    std::string master_weights;
    // Layers whose activations the recipe offloads to the host (cpu_offloading_num_layers),
    // dense rows and MoE rows alike; none: no offloading.
    std::optional<int64_t> cpu_offloading_num_layers;
    // The recipe's launcher sets PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.
    std::optional<bool> expandable_segments;
    std::string recompute;       // none / selective / full; empty: the source's default
    // Megatron's --recompute-modules of a selective recipe (plan.recompute_modules); empty:
    // the engine's default (core_attn).
    std::string recompute_modules;
    std::string moe_dispatcher;  // alltoall / allgather / flex; empty: the engine's default
    // Megatron's --moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity, as the
    // recipe sets them (Megatron-Bridge's apply_moe_token_drop: 1.0, padded): the row's
    // model.moe.capacity_factor; none: dropless.
    std::optional<double> moe_capacity_factor;
    std::optional<int64_t> etp;  // expert tensor parallel size; none: the engine's (tp)
    std::vector<std::pair<int64_t, std::string>> pipeline_layouts;  // pp x vp -> layout
    // The parallel plan the recipe runs, stated only where the row's table contradicts it (a
    // published row whose plan its own release's recipe, and the same run in the releases
    // around it, do not have): the row takes these instead of its cells, said in an assumption.
    struct Plan {
      int64_t tp = 0, pp = 0, vpp = 0, micro_batch = 0;
    };
    std::optional<Plan> recipe_plan;  // none: the row's own plan
    std::string why;
  };
  std::vector<ModelRecipe> model_recipes;
  // The recipe for a row of `source` with `model`, `gpu` and `precision` cells, or nullptr.
  const ModelRecipe* recipe_for(std::string_view model, std::string_view source = {},
                                std::string_view gpu = {}, std::string_view precision = {}) const;
  std::string why;
};

// An architecture the engine cannot express yet, and why: its measured rows are skipped with
// the reason.
struct NotExpressible {
  std::string model_contains;  // found in the row's model cell (its Hugging Face class)
  std::string why;
};

// A model a source names without its shape ("Nemotron_3_Nano"), and the preset that is that
// model, with the evidence: its rows take the preset's shape.
struct ModelByName {
  std::string model_contains;  // found in the row's model cell
  std::string preset;          // a model preset id (presets/models/)
  std::string why;
};

// sources.json, read.
struct SourceTable {
  SourceFacts unlisted;
  std::vector<SourceFacts> sources;  // in file order
  std::vector<NotExpressible> not_expressible;
  std::vector<ModelByName> models_by_name;
  // The entry whose model_contains is in `model`, or nullptr.
  const NotExpressible* not_expressible_for(std::string_view model) const;
  const ModelByName* model_by_name_for(std::string_view model) const;

  // The first entry whose id is `source` (or a prefix of it, for an id ending in '*'), else
  // `unlisted`.
  const SourceFacts& facts_for(std::string_view source) const;
  // "Megatron-LM (SC21+KORTH+MCORE)": the sources marked megatron_lm, in file order.
  std::string megatron_lm_name() const;
};

// Parses a sources table: every key checked, errors as values with their JSON path.
Result<SourceTable> parse_source_table(std::string_view json_text);

// The compiled-in engine/accuracy/sources.json (parsed once).
const Result<SourceTable>& builtin_source_table();

// A Megatron-LM source of the built-in table (the 5 % goal): SC21 Table 1, Korthikanti et al.,
// Megatron-Core H100.
bool is_megatron_source(std::string_view source);

}  // namespace stepcast::accuracy
