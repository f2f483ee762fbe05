// Rank placement: which global rank, node and GPU each parallel coordinate lands on, the way
// Megatron-Core numbers ranks (megatron/core/parallel_state.py, RankGenerator and
// generate_masked_orthogonal_rank_groups, at NVIDIA/Megatron-LM d98e8a6).
//
// An order such as "tp-cp-ep-dp-pp" lists the dimensions innermost first: a rank is
//   rank = sum_k coord_k * stride_k,   stride_k = product of the sizes listed before k,
// and a group of some dimensions holds the ranks that differ only in those, in rank order (the
// order NCCL builds its ring in). Two grids share the GPUs: the dense grid (tp, cp, dp, pp; ep
// of size 1) and the expert grid (etp as tp, ep, edp as dp, pp; cp of size 1), both built from
// the same order string (initialize_model_parallel). torchrun gives each node consecutive ranks,
// so rank r runs on node r / gpus_per_node, GPU r % gpus_per_node.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/collectives.h"
#include "stepcast/plan.h"

namespace stepcast {

enum class Dim { tp, cp, ep, dp, pp };
inline constexpr size_t kDims = 5;
inline constexpr std::string_view kDefaultRankOrder = "tp-cp-ep-dp-pp";

// The order as dimensions, innermost first; nullopt unless `text` names each of tp, cp, ep, dp
// and pp once, joined by '-' (RankGenerator appends missing names of size 1; a plan names all).
std::optional<std::array<Dim, kDims>> parse_rank_order(std::string_view text);

using Coords = std::array<int64_t, kDims>;  // indexed by Dim

struct RankGrid {
  std::array<Dim, kDims> order{};
  Coords size{};    // indexed by Dim
  Coords stride{};  // indexed by Dim

  int64_t world() const;
  int64_t rank_of(const Coords& c) const;
  Coords coords_of(int64_t rank) const;
};

// A set of dimensions (a group kind), as a bit mask over Dim.
using DimMask = unsigned;
constexpr DimMask dim_bit(Dim d) { return 1u << static_cast<unsigned>(d); }

// The dense grid and the expert grid of a plan, ordered by plan.rank_order (the default when
// it does not parse: check_scenario has rejected such plans before anything asks).
RankGrid dense_grid(const Plan& plan);
RankGrid expert_grid(const Plan& plan);

// Members of the group of `dims` holding `rank`, and its position in the group.
int64_t group_size(const RankGrid& g, DimMask dims);
int64_t group_position(const RankGrid& g, DimMask dims, int64_t rank);
// The member `steps` places further round the group's ring (rank order, wrapping).
int64_t ring_neighbour(const RankGrid& g, DimMask dims, int64_t rank, int64_t steps = 1);
// The member at `position` of the group holding `rank`.
int64_t group_member(const RankGrid& g, DimMask dims, int64_t rank, int64_t position);

// Whether the group's members form one arithmetic progression (the dimensions with more than
// one member are adjacent in the order), and its step.
bool contiguous(const RankGrid& g, DimMask dims);
int64_t innermost_stride(const RankGrid& g, DimMask dims);

// Where the group holding rank 0 sits: its size and its members in node 0. An arithmetic
// progression is placed as the cost model always has (place_group); any other group by
// counting its members below gpus_per_node (its ranks ascend in mixed radix, so the count
// is a walk over the dimensions, not over the members).
GroupPlacement grid_placement(const RankGrid& g, DimMask dims, int gpus_per_node);

}  // namespace stepcast
