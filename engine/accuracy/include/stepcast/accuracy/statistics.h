// How far the predictions are from the measurements: the error of each case, the mean absolute
// percentage error (MAPE) and worst row per source, over the Megatron-LM sources and overall, and
// the rank order of predicted vs measured time inside groups of related rows (Spearman).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stepcast/accuracy/cases.h"
#include "stepcast/catalog.h"
#include "stepcast/estimate.h"

namespace stepcast::accuracy {

struct Prediction {
  std::string id;
  std::string source;
  double measured_s = 0;
  double predicted_s = 0;
  double error_pct = 0;  // (predicted - measured) / measured x 100
  std::string family;     // the GPU's architecture family (hopper, blackwell, ...)
  std::string framework;  // the plan's training software
  double parameters = 0;  // the model's parameter count
  bool moe = false;       // a mixture-of-experts model
  std::string model_family;  // the model's architecture class (model_family.h)
  std::string precision;     // the plan's GEMM precision (bf16, fp8, mxfp8, ...)
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
  SourceAccuracy megatron;              // the Megatron-LM sources: SC21 + KORTH + MCORE
  SourceAccuracy overall;
  // Per GPU family ("GPU family hopper"), then the goal groups: rows run by Megatron
  // software (megatron-core, megatron-lm-2021, megatron-fsdp), Blackwell rows (blackwell and
  // blackwell-ultra), models under 3 B parameters, MoE and dense rows; then per model family
  // ("model family MLA", model_family.h) and per precision on Blackwell ("Blackwell mxfp8"),
  // each only where it has rows.
  std::vector<SourceAccuracy> groups;
};

// The engine's report for a case's scenario under `calibration` (time and memory cases alike).
Report estimate_case(const PreparedCase& c, const Calibration& calibration);
Prediction predict(const PreparedCase& c, const Calibration& calibration);
Accuracy evaluate(const std::vector<PreparedCase>& cases, const Calibration& calibration);
// Summary of any set of predictions (per source, Megatron-LM, overall).
Accuracy summarise(std::vector<Prediction> rows);

// Spearman rank correlation (average ranks for ties); nullopt for fewer than 2 points or a
// constant series.
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

}  // namespace stepcast::accuracy
