#include "stepcast/overlap.h"

#include <algorithm>

namespace stepcast {

double bulk_overlap_s(double comm, double window, double slowdown) {
  return std::max(0.0, comm - window) + slowdown * std::min(comm, window);
}

double ring_exchange_overlap_s(double comm, double gemm, int tp, double slowdown) {
  if (tp <= 1 || comm <= 0) return 0;
  const double steps = tp - 1;
  const double step_comm = comm / steps, step_gemm = gemm / tp;
  return steps * std::max(0.0, step_comm - step_gemm) +
         slowdown * std::min(comm, steps * step_gemm);
}

double pipelined_reduce_scatter_s(double comm, double gemm, int splits, double slowdown) {
  if (comm <= 0) return 0;
  splits = std::max(splits, 1);
  const double chunk_comm = comm / splits, chunk_gemm = gemm / splits;
  const double hidden = splits - 1;
  return chunk_comm + hidden * std::max(0.0, chunk_comm - chunk_gemm) +
         slowdown * std::min(hidden * chunk_comm, hidden * chunk_gemm);
}

double bucketed_overlap_s(double transfer, double fixed, double buckets, double window,
                          double slowdown) {
  if (transfer + fixed <= 0) return 0;
  const double backlog =
      std::max(transfer / std::max(buckets, 1.0), transfer - std::max(window, 0.0));
  return backlog + fixed + slowdown * (transfer - backlog);
}

double bulk_hidden_s(double comm, double window) {
  return std::max(0.0, std::min(comm, window));
}

double ring_exchange_hidden_s(double comm, double gemm, int tp) {
  if (tp <= 1 || comm <= 0) return 0;
  return std::min(comm, (tp - 1) * (gemm / tp));
}

double pipelined_reduce_scatter_hidden_s(double comm, double gemm, int splits) {
  if (comm <= 0) return 0;
  splits = std::max(splits, 1);
  return (splits - 1) * std::min(comm / splits, gemm / splits);
}

}  // namespace stepcast
