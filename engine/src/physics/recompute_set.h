// The modules selective recompute replays (plan.recompute_modules), read once per layer:
// Plan::recomputes parses the text on every call, and a layer's compute and memory ask about six
// modules each, for every layer kind of every stage of every plan a search estimates (20 % of
// the instructions of an estimate of GPT-3 175B on 256 A100s, 1F1B, went there). Private to
// physics/.
#pragma once

#include <cstdint>
#include <string_view>

#include "stepcast/plan.h"

namespace stepcast::detail {

class RecomputeSet {
 public:
  explicit RecomputeSet(const Plan& p) {
    if (p.recompute != Recompute::selective) return;
    for_each_recompute_module(p.recompute_modules, [&](std::string_view name) {
      for (size_t k = 0; k < kRecomputeModules.size(); ++k)
        if (name == kRecomputeModules[k]) bits_ |= uint32_t{1} << k;
    });
  }
  // What Plan::recomputes(module) answers, for `module` one of kRecomputeModules.
  bool has(std::string_view module) const {
    for (size_t k = 0; k < kRecomputeModules.size(); ++k)
      if (module == kRecomputeModules[k]) return (bits_ >> k) & 1u;
    return false;
  }

 private:
  uint32_t bits_ = 0;  // bit k: kRecomputeModules[k] is replayed
};

}  // namespace stepcast::detail
