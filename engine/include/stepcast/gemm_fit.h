// A GEMM benchmark table (CSV: m,n,k,dtype,tflops; docs/calibration.md shows a PyTorch loop that
// writes one)
// fitted to the engine's GEMM model (compute.h: time = 2mnk / (peak * efficiency) + overhead,
// the memory-bound side left to memory_efficiency): one efficiency per precision group (16-bit,
// fp8, fp4) and one fixed overhead per kernel, by least squares on relative time.
#pragma once

#include <optional>
#include <string_view>

#include "stepcast/hardware.h"
#include "stepcast/json.h"
#include "stepcast/result.h"

namespace stepcast {

struct Catalog;

struct Scenario;

struct GemmFit {
  std::optional<double> gemm_efficiency;      // bf16 / fp16 rows
  std::optional<double> fp8_gemm_efficiency;  // fp8 / mxfp8 rows
  std::optional<double> fp4_gemm_efficiency;  // nvfp4 rows
  double gemm_overhead_s = 0;
  int rows = 0;
  double max_time_error = 0;   // largest |model/measured - 1| over the rows, through gemm_time_s
  double mean_time_error = 0;
};

// Reads the table and fits it on `gpu` (its peaks and memory bandwidth); `base` supplies the
// memory efficiency the check uses. Errors name the line.
Result<GemmFit> fit_gemm_table(std::string_view csv, const GpuSpec& gpu, const ArchCalibration& base);

// The fit as `calibration.gemm` takes it.
Json gemm_fit_json(const GemmFit& fit);

// One table measures one GPU type: the first group whose GPU is of another type than the first
// group's (nullptr when the cluster has one type).
const ClusterGroup* other_gpu_type(const ClusterSpec& cluster);

// The table fitted on the GPU of a scenario's cluster (the page's "GEMM table" box): {"gemm":
// gemm_fit_json, "gpu": its name, "rows", "max_time_error", "mean_time_error", "preset": the
// values it replaces}. A cluster of two GPU types is refused (one table measures one type);
// errors in the table have the path "text".
Result<Json> fit_gemm_table_on(std::string_view csv, const Scenario& scenario,
                               const Catalog& catalog);

}  // namespace stepcast
