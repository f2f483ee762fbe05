// Validation against published training runs: the rows of shared/data/published-runs.csv become
// scenarios (one per row, with the row's id and source kept), the engine predicts each, and the
// errors are summarised per source (MAPE, worst row) and overall. No I/O here: callers pass text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/catalog.h"
#include "stepcast/result.h"
#include "stepcast/scenario.h"

namespace stepcast::accuracy {

// A CSV document (RFC 4180: quoted fields, "" escapes, newlines inside quotes).
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  // Column index of `name`, or -1.
  int column(std::string_view name) const;
  // The cell of row `r` in column `name`; empty when the column or cell is missing.
  std::string cell(size_t r, std::string_view name) const;
};

Result<CsvTable> parse_csv(std::string_view text);

// The source of a row: the part of its id before the first '-' ("SC21-T1-3" -> "SC21").
std::string source_of(std::string_view id);

// The Megatron-LM sources (the 5 % goal): SC21 Table 1, Korthikanti et al., Megatron-Core H100.
bool is_megatron_source(std::string_view source);

// One published run as a scenario with its measured iteration time.
struct Case {
  std::string id;
  std::string source;       // id prefix
  std::string citation;     // the row's `source` column (paper / repository and commit)
  std::string locator;      // the row's `source_locator` column (table, section)
  double measured_iter_time_s = 0;
  std::string iter_time;    // "measured", or how it was derived from a measured rate
  std::vector<std::string> assumptions;  // every value the row does not state, and its origin
  Json scenario;            // the scenario document (docs/scenario.md schema)
};

struct Skipped {
  std::string id;
  std::string source;
  std::string reason;
};

struct Conversion {
  std::vector<Case> cases;
  std::vector<Skipped> skipped;
};

// Builds a scenario per row of a published-runs table. Rows that cannot be modelled (MoE,
// heterogeneous networks, no iteration time or rate, an unstated plan) are skipped with the
// reason; rows whose scenario the engine rejects are skipped with the engine's error.
Conversion convert_runs(const CsvTable& table, const Catalog& catalog);

Json to_json(const Case& c);
Result<Case> case_from_json(const Json& j);

// Cases in JSON Lines (one case object per line; blank lines ignored).
Result<std::vector<Case>> parse_cases_jsonl(std::string_view text);
std::string to_jsonl(const std::vector<Case>& cases);

// A case with its scenario parsed once, so a fit can re-run estimate() with other constants.
struct PreparedCase {
  Case data;
  Scenario scenario;
};
Result<std::vector<PreparedCase>> prepare(const std::vector<Case>& cases, const Catalog& catalog);

struct Prediction {
  std::string id;
  std::string source;
  double measured_s = 0;
  double predicted_s = 0;
  double error_pct = 0;  // (predicted - measured) / measured x 100
};

struct SourceAccuracy {
  std::string source;
  int rows = 0;
  double mape_pct = 0;
  double worst_pct = 0;  // signed error of the row with the largest |error|
  std::string worst_id;
};

struct Accuracy {
  std::vector<Prediction> rows;
  std::vector<SourceAccuracy> sources;  // in order of first appearance
  SourceAccuracy megatron;              // SC21 + KORTH + MCORE
  SourceAccuracy overall;
};

Prediction predict(const PreparedCase& c, const Calibration& calibration);
Accuracy evaluate(const std::vector<PreparedCase>& cases, const Calibration& calibration);
// Summary of any set of predictions (per source, Megatron-LM, overall).
Accuracy summarise(std::vector<Prediction> rows);

// Spearman rank correlation (average ranks for ties); nullopt for fewer than 3 points.
std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b);

// Rank correlation of predicted vs measured time inside groups of rows that measure several
// plans or sizes of one model family: per source, and per (source, model name) where a source
// measures one model several ways.
struct RankGroup {
  std::string name;  // "SC21" or "KORTH GPT-175B"
  int rows = 0;
  double rho = 0;
};
std::vector<RankGroup> rank_correlations(const std::vector<PreparedCase>& cases,
                                         const Accuracy& accuracy);

Json to_json(const Accuracy& accuracy);
std::string to_text(const Accuracy& accuracy);

}  // namespace stepcast::accuracy
