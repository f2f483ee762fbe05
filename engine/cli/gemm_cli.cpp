// `stepcast calibrate --gemm FILE.csv --gpu ID`: GEMM efficiencies fitted to a benchmark table
// (engine/include/stepcast/gemm_fit.h), for a scenario's `calibration.gemm`.
#include <fmt/format.h>

#include <iostream>
#include <string>

#include "cli_io.h"
#include "stepcast/gemm_fit.h"

using namespace stepcast;
using stepcast::cli::dump;
using stepcast::cli::fail;

int run_gemm_calibration(int argc, char** argv) {
  std::string file, gpu_id, format = "json";
  std::vector<std::string> extra;
  const std::string error = stepcast::cli::read_options(
      argc, argv, 2, {{"--gemm", &file}, {"--gpu", &gpu_id}, {"--format", &format}}, extra,
      "with --gemm: --gpu, --format");
  if (!error.empty()) return fail(error);
  if (!extra.empty())
    return fail("unknown argument " + extra.front() + " (with --gemm: --gpu, --format)");
  if (gpu_id.empty()) return fail("--gemm needs --gpu ID (`stepcast presets gpus`): its peaks");
  if (format != "json" && format != "text")
    return fail(fmt::format("--format={} must be json or text", format));
  auto loaded = load_catalog(builtin_preset_files());
  if (!loaded) return fail("built-in presets: " + loaded.error().message);
  const GpuSpec* gpu = loaded->find_gpu(gpu_id);
  if (!gpu) return fail(fmt::format("--gpu={} is not a GPU preset (see `stepcast presets gpus`)",
                                    gpu_id));
  std::string text;
  if (auto e = stepcast::cli::read_input(file, text, stepcast::cli::kMaxGemmTableBytes);
      !e.empty())
    return fail(e);
  auto fit = fit_gemm_table(text, *gpu, loaded->calibration.for_arch(gpu->arch));
  if (!fit) return fail(fmt::format("{}: {}", file, fit.error().message));
  if (format == "json") {
    std::cout << dump(gemm_fit_json(*fit), 2) << "\n";
    return 0;
  }
  const ArchCalibration& preset = loaded->calibration.for_arch(gpu->arch);
  auto line = [&](const char* name, const std::optional<double>& v, double was) {
    if (v) std::cout << fmt::format("{:<20} {:.4f} (preset {:.4f})\n", name, *v, was);
  };
  line("gemm_efficiency", fit->gemm_efficiency, preset.gemm_efficiency);
  line("fp8_gemm_efficiency", fit->fp8_gemm_efficiency, preset.fp8_gemm_efficiency);
  line("fp4_gemm_efficiency", fit->fp4_gemm_efficiency, preset.fp4_gemm_efficiency);
  std::cout << fmt::format("{:<20} {:.2f} us (preset {:.2f})\n", "gemm_overhead",
                           fit->gemm_overhead_s * 1e6, preset.gemm_overhead_s * 1e6);
  std::cout << fmt::format("{} GEMMs: time error mean {:.1f} %, max {:.1f} %\n", fit->rows,
                           100 * fit->mean_time_error, 100 * fit->max_time_error);
  return 0;
}
