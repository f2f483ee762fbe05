// Counts of a plan not yet checked (GPUs, stages, replicas, micro-batches): each may be up to
// 2^24, so a product of four can pass 2^63. Saturating arithmetic for the reader and the rules.
// Private to scenario/.
#pragma once

#include <algorithm>
#include <cstdint>

namespace stepcast::detail {

// a·b for counts (GPUs, stages, replicas) of a plan not yet checked: each may be up to 2^24, so
// the product of four can pass 2^63; it stops at 2^62, which no count reaches.
constexpr int64_t kCeiling = int64_t{1} << 62;
inline int64_t times(int64_t a, int64_t b) {
  return b != 0 && a > kCeiling / b ? kCeiling : std::min(a * b, kCeiling);
}
inline int64_t plus(int64_t a, int64_t b) { return std::min(a, kCeiling - b) + b; }

}  // namespace stepcast::detail
