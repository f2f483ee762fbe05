#include "stepcast/pipeline.h"

#include <algorithm>
#include <numeric>

namespace stepcast {

PipelineTime pipeline_time(const std::vector<double>& u, long m, int v) {
  PipelineTime t;
  if (u.empty()) return t;
  const auto worst = std::max_element(u.begin(), u.end());
  t.bottleneck = static_cast<int>(worst - u.begin());
  const double sum = std::accumulate(u.begin(), u.end(), 0.0);
  t.steady_s = static_cast<double>(m) * *worst;
  t.bubble_s = (sum - *worst) / std::max(v, 1);
  t.total_s = t.steady_s + t.bubble_s;
  return t;
}

}  // namespace stepcast
