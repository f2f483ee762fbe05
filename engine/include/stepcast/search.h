// The configuration tuner (after "Communication predictability", Li et al.): enumerate the
// Megatron-LM plans a cluster admits for a model and a global batch, estimate each, and rank the
// ones that fit by iteration time. Every candidate goes through the same validate() and
// estimate() as a user's scenario. For speed, each plan's memory is checked first (plans that do
// not fit are not timed), the ones that fit are ranked by the schedule's closed form, and the
// leading interleaved ones are estimated again exactly (the event simulation) before the final
// ranking: the same top plans, in the same order, with the same values as estimating every plan
// exactly (tests/engine/search_test.cpp).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "stepcast/estimate.h"

namespace stepcast {

// How far the schedule's closed form (pipeline.h) may be from the event simulation on an
// interleaved plan of identical layers (the embedding and the output layer make the first and
// last stages differ), relative: the search re-estimates exactly every plan whose closed-form
// time is within this of the leading exact times. Measured on a sweep of plans (search_test.cpp:
// the largest difference found there is asserted below this).
inline constexpr double kClosedFormTolerance = 0.01;

struct SearchOptions {
  size_t top = 10;            // plans returned
  int max_micro_batch = 8;    // micro-batch sizes tried: powers of two up to this, and its own
  int max_vpp = 4;            // virtual stages tried: powers of two up to this, and the plan's own
  bool vary_recompute = true; // try none / selective / full
  bool vary_dispatcher = true;  // MoE models: try alltoall / allgather / flex
  bool vary_schedule = true;    // with PP > 1 and VPP 1: try 1f1b and zero_bubble
  // TP and EP communication overlap (tp_comm_overlap, moe_overlap) on wherever the framework can
  // do it and the rules admit it (the engine never predicts it slower); false: the scenario's.
  bool overlap = true;
  // A plan that does not fit is tried again with what makes it fit without changing its
  // parallelism (Adam's moments in bf16, activations offloaded by module, the smallest share of
  // the optimizer on the CPU), in that order, and ranked by its time with them; the candidate
  // says what it needs. Plans that fit as enumerated take no extra work. false: dropped.
  bool fit_fixes = true;
  // Every plan that fits estimated exactly (the event simulation for interleaved ones), not
  // ranked by the closed form first: the reference the ranking is tested against.
  bool rank_exactly = false;
  // The work budget (limits.h), counted before anything is estimated: plans the rules admit and
  // their pipeline stages together (and, ranked exactly, the blocks their schedules simulate
  // together). A search over more is an error (budget_exceeded), not a partial ranking. Ranked
  // by the closed form, the leading interleaved plans re-estimated exactly simulate at most
  // max_simulated_blocks together; past that they keep the closed form's time (within
  // kClosedFormTolerance). Qwen3-235B-A22B on 1,024 H100s, 60,102 plans (its 94 layers split
  // with the embedding and the loss counted), takes 0.4 s natively.
  // A slice of the space: the plans enumerated at [first_plan, first_plan + plan_count) in the
  // search's order (SearchResult::space counts them all; plan_count < 0: to the end). A caller
  // searches slice by slice (a worker showing progress between calls, able to stop) and merges
  // the parts with merge_searches(): the result of one search of the whole. The work budget
  // below is always that of the whole space.
  int64_t first_plan = 0;
  int64_t plan_count = -1;
  int64_t max_plans = 65536;
  int64_t max_stage_evaluations = int64_t{1} << 19;
  uint64_t max_simulated_blocks = uint64_t{1} << 24;
};

struct SearchCandidate {
  Plan plan;
  double iteration_time_s = 0;
  double mfu = 0;
  double tokens_per_s = 0;
  double peak_memory_bytes = 0;  // the fullest stage's total
  bool fits = true;
  // Layers on the first pipeline stage, on each stage between, and on the last: the plan's split
  // of the model (even; the embedding and the loss counted as layers; or lighter ends), which
  // the plan's keys imply but a table of plans should say.
  std::array<int64_t, 3> stage_layers{};
  // What the plan needs to fit beyond its enumerated settings (SearchOptions::fit_fixes), as
  // fit_fixes says it: "plan.bf16_moments=true plan.offload_modules=\"...\""; empty: nothing.
  std::string needs;
};

struct SearchResult {
  std::vector<SearchCandidate> best;  // fitting plans, fastest first
  int evaluated = 0;                  // plans the rules admit: memory checked, timed if they fit
  int rejected = 0;                   // plans the rules refuse (divisibility, sizes)
  int out_of_memory = 0;              // plans over capacity (not timed)
  int fixed = 0;                      // plans that fit only with fixes (timed with them)
  double baseline_s = 0;              // the scenario's own plan, for comparison (0: none)
  int64_t space = 0;                  // plans enumerated in the whole space (admitted or not)
  std::optional<Error> baseline_error;  // why the scenario's own plan was not estimated
};

// Searches around `scenario`: same model, cluster, global batch, sequence length and precision;
// tp, pp, dp (derived), cp, vpp, micro-batch, sequence parallelism and recompute vary, and TP
// communication overlap is on where it can be; for MoE models also ep (divisors of the
// experts), etp (1 or tp) and the token dispatcher vary, and EP communication overlap is on
// where Megatron-Core admits it. The framework's other flags (the distributed optimizer and the
// ZeRO stage among them) are the scenario's. The scenario's own plan may break a rule (it is
// what the search varies: read it with read_scenario); it is then reported in baseline_error.
// Errors: a cluster of several groups (unsupported), or no plan the rules admit (the scenario's
// own error, or invalid_plan).
Result<SearchResult> search_plans(const Scenario& scenario, const SearchOptions& options = {});

// Searches of consecutive slices of one space (in slice order) as one search of them all: the
// counts added, the `top` fastest of the parts' best (ties in slice order, as one search ranks
// them).
SearchResult merge_searches(const std::vector<SearchResult>& parts, size_t top);

Json to_json(const SearchResult& result);

// What a search with `options` varies and keeps, for a reader (the page's "?" on its plan
// search): {"doc": one paragraph, "varies": {"plan.tp": "the values tried", ...}, "keeps":
// ["model", ...], "max_plans", "max_stage_evaluations"}. Written from the options and the
// enumeration's rules in search.cpp, beside them.
Json search_space_json(const SearchOptions& options = {});

}  // namespace stepcast
