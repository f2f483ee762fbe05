// Random valid scenarios for the invariant tests (invariants_test.cpp), deterministic from a seed:
// dense and MoE models (presets and custom shapes), one group of a node preset or two groups
// (plan.stages, plan.replicas or rank order), every framework profile, precisions, recompute,
// overlaps, ZeRO stages, "auto" layers and micro-batches. Only documents the engine accepts
// (parse and rules) are bases. Each base keeps its seed and its JSON, so a violation is
// reproduced with `stepcast estimate` on the printed document.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/estimate.h"

namespace stepcast::invariants {

struct Base {
  uint64_t seed = 0;
  Json document;      // the scenario as drawn (preset ids where it names presets)
  Scenario scenario;  // as the engine read it
};

// The base of `seed`: the first of its candidate documents the engine accepts (at most
// kAttemptsPerSeed are drawn), or none.
inline constexpr int kAttemptsPerSeed = 64;
std::optional<Base> draw_base(uint64_t seed);

// `count` bases from seeds first, first + 1, ... (seeds without a base are passed over).
std::vector<Base> draw_bases(uint64_t first, size_t count);

// How many bases a test run draws and from which seed: STEPCAST_INVARIANT_BASES and
// STEPCAST_INVARIANT_SEED in the environment, else `fallback` bases from seed 1
// (tests/fuzz/README.md).
size_t bases_wanted(size_t fallback);
uint64_t first_seed();

// The same scenario with every group's node preset written out (GPU, links and NICs as objects),
// so a test can change one figure of the hardware. Estimates the same as `document`.
Json explicit_hardware(const Json& document);

// The document read and estimated, or the engine's error (a perturbation the rules refuse).
Result<Report> estimate_document(const Json& document);

}  // namespace stepcast::invariants
