// Anchored accuracy: how well the engine predicts a cluster's other runs once one or two
// measured runs on it have calibrated it (calibrate.h), the use `calibration.runs` serves.
//
// For every source with three or more runs on one cluster (the same GPU, GPUs per node and
// links; node counts may differ): each run in turn anchors the fit and the others are
// predicted; then each pair of neighbouring runs (in the source's order, the last with the
// first) anchors it and the rest are predicted. MAPE per cluster and overall, next to the
// uncalibrated MAPE of the same rows.
#pragma once

#include <string>
#include <vector>

#include "stepcast/accuracy/cases.h"
#include "stepcast/catalog.h"

namespace stepcast::accuracy {

struct AnchoredGroup {
  std::string source;
  std::string cluster;  // "NVIDIA A100 SXM4 80GB x8, nvlink3 / ib-hdr"
  int rows = 0;
  double preset_mape_pct = 0;    // no calibration, these rows
  double one_anchor_mape_pct = 0;
  double two_anchor_mape_pct = 0;
  int one_anchor_predictions = 0;
  int two_anchor_predictions = 0;
  int network_fits = 0;  // two-anchor fits whose pair separated the network from compute
};

struct AnchoredAccuracy {
  bool same_model = false;
  std::vector<AnchoredGroup> groups;  // in order of first appearance
  AnchoredGroup overall;              // over every prediction of every group
};

// same_model: groups are runs of one model on one cluster (the use of a team that calibrates on
// its model and plans the next runs of it) rather than every run on the cluster.
AnchoredAccuracy anchored_accuracy(const std::vector<PreparedCase>& cases,
                                   const Calibration& calibration, bool same_model = false);

Json to_json(const AnchoredAccuracy& a);
std::string to_text(const AnchoredAccuracy& a);

}  // namespace stepcast::accuracy
