// Published runs -> cases: each row of the published-runs table (tests/validation/published-runs.csv)
// becomes a scenario (model, cluster, plan) with the row's id and source kept. What a row does
// not state comes from its source's facts (sources.h) and is listed in the case's assumptions.
#pragma once

#include <string>
#include <vector>

#include "stepcast/accuracy/cases.h"
#include "stepcast/accuracy/csv.h"
#include "stepcast/catalog.h"

namespace stepcast::accuracy {

struct Skipped {
  std::string id;
  std::string source;
  std::string reason;
};

struct Conversion {
  std::vector<Case> cases;
  std::vector<Skipped> skipped;
};

// Builds a scenario per row of a published-runs table (its MoE rows as modern-runs.csv's are).
// Rows that cannot be modelled (heterogeneous networks, no iteration time or rate, an unstated
// plan) are skipped with the reason; rows whose scenario the engine rejects are skipped with the
// engine's error.
// Tables in modern-runs.csv's schema (a moe_ffn_hidden column) go to convert_modern_runs, those
// with measured peaks (a peak_allocated_gib column) to convert_memory_runs.
Conversion convert_runs(const CsvTable& table, const Catalog& catalog);

// The rows of a modern-runs table (tests/validation/modern-runs.csv: 2025-26 stacks).
bool is_modern_table(const CsvTable& table);
Conversion convert_modern_runs(const CsvTable& table, const Catalog& catalog);

// The rows of a measured-memory table (tests/validation/memory-runs.csv: modern-runs.csv's
// columns plus peak_allocated_gib, peak_reserved_gib and the peak's metric): memory cases, each
// measuring its run's peak memory per GPU. Rows of architectures the engine cannot express yet
// (sources.json models_not_expressible) are skipped with the reason.
bool is_memory_table(const CsvTable& table);
Conversion convert_memory_runs(const CsvTable& table, const Catalog& catalog);

// Adds one table's cases and skipped rows to `all`, counting each run once: a case already in
// `all` that the table repeats (the same source, model, cluster, precision and measured time:
// Megatron-Bridge 25.09's DeepSeek-V3 run is a row of both published-runs.csv and
// modern-runs.csv) gives way to the table's, and is listed as skipped with that row's id.
void add_table(Conversion& all, Conversion table);

struct SourceFacts;
// The pipeline-split flags the source's recipes state for a model (sources.json "layout").
Json layout_flags(const SourceFacts& facts, std::string_view model);
// A case's plan: the row's sizes, batch, recompute and precision, the source's framework and the
// plan keys its recipes set beyond it (sources.json).
Json source_plan(const SourceFacts& facts, int64_t tp, int64_t pp, int64_t dp, int64_t cp,
                 int64_t vpp, int64_t micro_batch, int64_t global_batch,
                 const std::string& recompute, const std::string& precision);

}  // namespace stepcast::accuracy
