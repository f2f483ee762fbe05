// Load balancing for heterogeneous clusters (HATP; Whale, Metis): layers per pipeline stage in
// proportion to stage speed within each stage's memory, and micro-batches per data-parallel
// replica in proportion to replica throughput. Pure arithmetic on times the estimate measures.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace stepcast {

// Layers per stage minimising the slowest stage's time per micro-batch,
//   time_i(l) = fixed_s[i] + l * per_layer_s[i],
// with l a multiple of `granularity` (the virtual pipeline size), 1 <= l/granularity, l <=
// max_layers[i] where that is > 0, and fixed_layers[i] > 0 kept as given. Sums to total_layers.
// When memory caps cannot hold every layer, the caps are dropped (the report then says a stage
// does not fit).
std::vector<int64_t> balance_layers(std::span<const double> per_layer_s,
                                    std::span<const double> fixed_s,
                                    std::span<const int64_t> max_layers,
                                    std::span<const int64_t> fixed_layers, int64_t total_layers,
                                    int64_t granularity);

// Micro-batches per replica set (each of counts[r] replicas takes the same number), minimising
// the slowest replica's pipeline time fill_s[r] + m * per_micro_batch_s[r] (pipeline.h's closed
// form: the fill and drain paid once, the bottleneck stage once per micro-batch), summing (with
// counts) to total; fixed[r] > 0 kept as given. Every replica gets at least one. Where no split
// adds up exactly, the replicas take as many as fit.
std::vector<int64_t> balance_micro_batches(std::span<const double> per_micro_batch_s,
                                           std::span<const double> fill_s,
                                           std::span<const int> counts,
                                           std::span<const int64_t> fixed, int64_t total);

// The same where every micro-batch's collectives span the sets (ZeRO-3's gathers and reduces):
// a set that runs fewer micro-batches than the busiest still takes part in the rest, each
// costing it lockstep_s[r], so a set with m of the busiest set's M finishes at
//   fill_s[r] + m * per_micro_batch_s[r] + (M - m) * lockstep_s[r],
// for a given M affine in m. The exact integer minimax of the latest finish over every split
// that adds up: for each time T (bisection) and each M that T allows, every set's counts that
// finish by T form an interval, and a split is a choice within them that adds up (the bounded
// coin change of balance_micro_batches). Past the work budget (limits.h) the best split found
// stands: balance_micro_batches' split, or one that finishes sooner.
std::vector<int64_t> balance_lockstep_micro_batches(std::span<const double> per_micro_batch_s,
                                                    std::span<const double> fill_s,
                                                    std::span<const double> lockstep_s,
                                                    std::span<const int> counts,
                                                    std::span<const int64_t> fixed, int64_t total);

}  // namespace stepcast
