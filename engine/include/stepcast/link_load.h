// Link load over one iteration: the traffic matrix's bytes spread over the estimate's timeline,
// as bytes per second in equal time bins. A coarse model, on purpose: the census says how many
// bytes each phase sends, not when inside the phase, so each phase's bytes of a stage are spread
// evenly (by duration) over that stage's timeline blocks of the phase. Only the bins' integral
// is exact (it equals the matrix's totals); peaks inside a block are averaged away.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "stepcast/census.h"
#include "stepcast/estimate.h"

namespace stepcast {

// Where a phase's bytes go, per stage: its forward blocks; its backward blocks (recomputation
// runs inside them); gradient sync from the start of its last backward block (buckets are
// reduced as the last micro-batch's backward frees them) to the end of its exposed sync block;
// optimizer-phase bytes (parameter all-gather, norms) from there to the end of its optimizer
// step. Time within each is shared by length; zero-length windows put the bytes at their start.
enum class LoadWindow { forward, backward, gradient_sync, optimizer };
inline constexpr size_t kLoadWindows = 4;
LoadWindow load_window(Phase phase);

// Bytes of one series (a link tier, a NIC) per pipeline stage and window.
using WindowBytes = std::vector<std::array<double, kLoadWindows>>;

inline constexpr int kLoadBins = 200;

// Bytes in each of `bins` equal bins over [0, span_s]. Every byte lands in some bin: bytes whose
// stage has no block of the window go to the last bin.
std::vector<double> spread_over_timeline(const std::vector<TimelineEvent>& timeline,
                                         const WindowBytes& bytes, double span_s,
                                         int bins = kLoadBins);

}  // namespace stepcast
