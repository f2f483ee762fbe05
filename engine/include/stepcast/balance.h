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

}  // namespace stepcast
