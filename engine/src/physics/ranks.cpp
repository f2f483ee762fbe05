#include "stepcast/ranks.h"

#include <algorithm>

namespace stepcast {

namespace {

constexpr std::array<std::string_view, kDims> kNames = {"tp", "cp", "ep", "dp", "pp"};

size_t at(Dim d) { return static_cast<size_t>(d); }

RankGrid make_grid(const Plan& p, const Coords& size) {
  RankGrid g;
  // (value_or would parse the default on every call: this runs per stage of every estimate.)
  const auto order = parse_rank_order(p.rank_order);
  g.order = order ? *order : *parse_rank_order(kDefaultRankOrder);
  g.size = size;
  int64_t stride = 1;
  for (Dim d : g.order) {
    g.stride[at(d)] = stride;
    stride *= g.size[at(d)];
  }
  return g;
}

bool in(DimMask dims, Dim d) { return (dims & dim_bit(d)) != 0; }

}  // namespace

std::optional<std::array<Dim, kDims>> parse_rank_order(std::string_view text) {
  // The default, which nearly every plan keeps, without the search by name: this runs for every
  // grid an estimate builds (1.7 µs of an estimate in the WebAssembly module, built for size).
  if (text == kDefaultRankOrder) return std::array<Dim, kDims>{Dim::tp, Dim::cp, Dim::ep, Dim::dp, Dim::pp};
  if (std::count(text.begin(), text.end(), '-') != kDims - 1) return std::nullopt;
  std::array<Dim, kDims> out{};
  unsigned seen = 0;
  size_t n = 0;
  while (n < kDims) {
    const size_t dash = text.find('-');
    const std::string_view name = text.substr(0, dash);
    const auto it = std::find(kNames.begin(), kNames.end(), name);
    if (it == kNames.end()) return std::nullopt;
    const auto d = static_cast<Dim>(it - kNames.begin());
    if (seen & dim_bit(d)) return std::nullopt;
    seen |= dim_bit(d);
    out[n++] = d;
    if (dash == std::string_view::npos) {
      text = {};
      break;
    }
    text.remove_prefix(dash + 1);
  }
  if (n != kDims || !text.empty()) return std::nullopt;
  return out;
}

int64_t RankGrid::world() const {
  int64_t w = 1;
  for (int64_t s : size) w *= s;
  return w;
}

int64_t RankGrid::rank_of(const Coords& c) const {
  int64_t r = 0;
  for (size_t i = 0; i < kDims; ++i) r += c[i] * stride[i];
  return r;
}

Coords RankGrid::coords_of(int64_t rank) const {
  Coords c{};
  for (Dim d : order) {
    c[at(d)] = rank % size[at(d)];
    rank /= size[at(d)];
  }
  return c;
}

RankGrid dense_grid(const Plan& p) {
  // initialize_model_parallel: RankGenerator(tp, ep=1, dp, pp, cp, order).
  return make_grid(p, {p.tp, p.cp, 1, p.dp, p.pp});
}

RankGrid expert_grid(const Plan& p) {
  // RankGenerator(tp=etp, ep, dp=edp, pp, cp=1, order).
  return make_grid(p, {p.etp, 1, p.ep, std::max(1, p.edp()), p.pp});
}

int64_t group_size(const RankGrid& g, DimMask dims) {
  int64_t n = 1;
  for (size_t i = 0; i < kDims; ++i)
    if (in(dims, static_cast<Dim>(i))) n *= g.size[i];
  return n;
}

int64_t group_position(const RankGrid& g, DimMask dims, int64_t rank) {
  // Members ascend in mixed radix over the group's dimensions, innermost first.
  const Coords c = g.coords_of(rank);
  int64_t pos = 0, scale = 1;
  for (Dim d : g.order)
    if (in(dims, d)) {
      pos += c[at(d)] * scale;
      scale *= g.size[at(d)];
    }
  return pos;
}

int64_t group_member(const RankGrid& g, DimMask dims, int64_t rank, int64_t position) {
  Coords c = g.coords_of(rank);
  for (Dim d : g.order)
    if (in(dims, d)) {
      c[at(d)] = position % g.size[at(d)];
      position /= g.size[at(d)];
    }
  return g.rank_of(c);
}

int64_t ring_neighbour(const RankGrid& g, DimMask dims, int64_t rank, int64_t steps) {
  const int64_t n = group_size(g, dims);
  const int64_t pos = group_position(g, dims, rank);
  return group_member(g, dims, rank, ((pos + steps) % n + n) % n);
}

bool contiguous(const RankGrid& g, DimMask dims) {
  // The dimensions of more than one member, and those between them, must all be in the group.
  int first = -1, last = -1;
  for (size_t i = 0; i < kDims; ++i)
    if (in(dims, g.order[i]) && g.size[at(g.order[i])] > 1) {
      if (first < 0) first = static_cast<int>(i);
      last = static_cast<int>(i);
    }
  for (int i = first; i >= 0 && i <= last; ++i)
    if (!in(dims, g.order[i]) && g.size[at(g.order[i])] > 1) return false;
  return true;
}

int64_t innermost_stride(const RankGrid& g, DimMask dims) {
  for (Dim d : g.order)
    if (in(dims, d) && g.size[at(d)] > 1) return g.stride[at(d)];
  return 1;
}

GroupPlacement grid_placement(const RankGrid& g, DimMask dims, int gpus_per_node) {
  const int64_t size = group_size(g, dims);
  if (contiguous(g, dims))
    return place_group(static_cast<int>(size), innermost_stride(g, dims), gpus_per_node);
  // Members below `limit`, outermost dimension first: every full block of the inner dimensions
  // lies below the next outer stride, so only the last partial block needs the walk.
  std::vector<Dim> inner;
  for (Dim d : g.order)
    if (in(dims, d) && g.size[at(d)] > 1) inner.push_back(d);
  int64_t limit = gpus_per_node, count = 0;
  for (size_t k = inner.size(); k-- > 0;) {
    int64_t below = 1;  // members of the dimensions inside this one
    for (size_t i = 0; i < k; ++i) below *= g.size[at(inner[i])];
    const int64_t s = g.stride[at(inner[k])], n = g.size[at(inner[k])];
    const int64_t j = std::min(n, limit / s);
    count += j * below;
    if (j >= n) {
      limit = 0;
      break;
    }
    limit -= j * s;
  }
  if (limit > 0) count += 1;  // the member at offset zero of the last partial block
  GroupPlacement out;
  out.size = static_cast<int>(size);
  out.per_node = static_cast<int>(std::clamp<int64_t>(count, 1, size));
  return out;
}

}  // namespace stepcast
