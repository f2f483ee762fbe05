// The schedules behind schedule.h's interface, one file each. Private to schedule/.
#pragma once

#include <vector>

#include "stepcast/pipeline.h"
#include "stepcast/schedule.h"

namespace stepcast::detail {

extern const Schedule kOneFOneB;     // one_f_one_b.cpp
extern const Schedule kInterleaved;  // interleaved.cpp
extern const Schedule kZeroBubble;   // zero_bubble.cpp (ZB-H1)
extern const Schedule kZbv;          // zbv.cpp (ZB-V)
extern const Schedule kDualPipeV;    // dualpipev.cpp (DualPipeV)

// Each stage's time per micro-batch (StagePasses::unit_s), for the closed forms that read only it.
inline std::vector<double> units_of(const std::vector<StagePasses>& stages) {
  std::vector<double> u;
  u.reserve(stages.size());
  for (const auto& s : stages) u.push_back(s.unit_s);
  return u;
}

}  // namespace stepcast::detail
