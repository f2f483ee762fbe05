#include "stepcast/sharded_gathers.h"

#include <algorithm>
#include <array>

namespace stepcast {

namespace {

// Two streams, replayed module by module. `comm` is when the communicator is next free: gathers
// and reduce-scatters run in the order they are issued (one NCCL communicator), each when issued
// and the one before it has finished. A module computes once its gather has arrived and the
// module before it is done. With prefetch k >= 1 the first k gathers are issued at the start and
// gather i + k when module i starts; with none, gather i when module i - 1 ends (after its
// reduce-scatter, issued at the same moment). `unit(i)` gives the i-th module.
//
// Only the gathers of modules i .. i + prefetch are ever pending, so their arrival times live in
// a ring of prefetch + 1 slots (the key's range, 0-64: scenario/fields.cpp): gather i + prefetch
// is issued after module i has read its own, into the slot module i - 1 no longer needs. No
// allocation on the estimate's path.
constexpr int kMaxPrefetch = 64;

template <class Unit>
double replay(int n, int prefetch, double slowdown, Unit unit) {
  if (n <= 0) return 0;
  prefetch = std::clamp(prefetch, 0, kMaxPrefetch);
  std::array<double, kMaxPrefetch + 1> ring{};
  const int slots = prefetch + 1;
  auto slot = [&](int j) -> double& { return ring[static_cast<size_t>(j % slots)]; };
  double comm = 0, compute_end = 0, compute = 0, traffic = 0;
  auto gather = [&](int j, double at) {
    const double g = unit(j).gather_s;
    comm = std::max(comm, at) + g;
    traffic += g;
    slot(j) = comm;
  };
  if (prefetch > 0)
    for (int j = 0; j < std::min(prefetch, n); ++j) gather(j, 0);
  for (int i = 0; i < n; ++i) {
    if (prefetch == 0) gather(i, compute_end);
    const double start = std::max(compute_end, slot(i));
    if (prefetch > 0 && i + prefetch < n) gather(i + prefetch, start);
    const FetchUnit u = unit(i);
    compute_end = start + u.compute_s;
    compute += u.compute_s;
    if (u.reduce_s > 0) {
      comm = std::max(comm, compute_end) + u.reduce_s;
      traffic += u.reduce_s;
    }
  }
  const double exposed = std::max(compute_end, comm) - compute;
  const double hidden = std::clamp(traffic - exposed, 0.0, compute);
  return exposed + slowdown * hidden;
}

}  // namespace

double sharded_pass_exposed_s(std::span<const FetchUnit> units, int prefetch, double slowdown) {
  return replay(static_cast<int>(units.size()), std::max(prefetch, 0), slowdown,
                [&](int i) { return units[static_cast<size_t>(i)]; });
}

double sharded_pass_exposed_s(const FetchUnit& unit, int count, int prefetch, double slowdown) {
  return replay(count, std::max(prefetch, 0), slowdown, [&](int) { return unit; });
}

}  // namespace stepcast
