// Published runs -> cases: each row of the published-runs table (shared/data/published-runs.csv)
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

// Builds a scenario per row of a published-runs table. Rows that cannot be modelled (MoE,
// heterogeneous networks, no iteration time or rate, an unstated plan) are skipped with the
// reason; rows whose scenario the engine rejects are skipped with the engine's error.
Conversion convert_runs(const CsvTable& table, const Catalog& catalog);

}  // namespace stepcast::accuracy
