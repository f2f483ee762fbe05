// The fitted constants' keys (arch_calibration_keys.h). Defaults and ranges as the preset reader
// has always applied them; the fitted values and what they were fitted on are in
// presets/calibration.json, the fit's bounds and their sources in
// engine/accuracy/src/calibrate.cpp.
#include "stepcast/arch_calibration_keys.h"

namespace stepcast {

namespace {

using S = ComputeScaled;

constexpr ArchCalibrationKey kKeys[] = {
    {.name = "gemm_efficiency", .member = &ArchCalibration::gemm_efficiency, .unit = "1"},
    {.name = "fp8_gemm_efficiency", .member = &ArchCalibration::fp8_gemm_efficiency,
     .unit = "1", .falls_back_to = "gemm_efficiency"},
    {.name = "fp4_gemm_efficiency", .member = &ArchCalibration::fp4_gemm_efficiency,
     .unit = "1", .falls_back_to = "fp8_gemm_efficiency"},
    {.name = "gemm_overhead_us", .member = &ArchCalibration::gemm_overhead_s, .unit = "µs",
     .scale = 1e-6, .zero_allowed = true, .scaled = S::time},
    {.name = "attention_efficiency", .member = &ArchCalibration::attention_efficiency,
     .unit = "1"},
    {.name = "memory_efficiency", .member = &ArchCalibration::memory_efficiency, .unit = "1"},
    {.name = "layer_overhead_us", .member = &ArchCalibration::layer_overhead_s, .unit = "µs",
     .scale = 1e-6, .zero_allowed = true, .scaled = S::time},
    {.name = "grouped_gemm_factor", .member = &ArchCalibration::grouped_gemm_factor,
     .unit = "1", .absent = 1.0, .max = 1, .max_why = "a fraction of gemm efficiency",
     .scaled = S::ratio},
    {.name = "moe_host_us", .member = &ArchCalibration::moe_host_s, .unit = "µs",
     .scale = 1e-6, .absent = 0.0, .zero_allowed = true, .scaled = S::time},
    {.name = "moe_host_expert_us", .member = &ArchCalibration::moe_host_expert_s, .unit = "µs",
     .scale = 1e-6, .absent = 0.0, .zero_allowed = true, .scaled = S::time},
    {.name = "ssd_scan_efficiency", .member = &ArchCalibration::ssd_scan_efficiency, .unit = "1",
     .absent = 0.0875, .max = 1, .max_why = "a fraction of the 16-bit peak"},
    {.name = "delta_rule_efficiency", .member = &ArchCalibration::delta_rule_efficiency,
     .unit = "1", .absent = 0.065, .max = 1, .max_why = "a fraction of the 16-bit peak"},
    {.name = "delta_rule_chunk_us", .member = &ArchCalibration::delta_rule_chunk_s, .unit = "µs",
     .scale = 1e-6, .absent = 1.15, .zero_allowed = true, .scaled = S::time},
};

}  // namespace

std::span<const ArchCalibrationKey> arch_calibration_keys() { return kKeys; }

const ArchCalibrationKey* find_arch_calibration_key(std::string_view name) {
  for (const ArchCalibrationKey& k : kKeys)
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace stepcast
