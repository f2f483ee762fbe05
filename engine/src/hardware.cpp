#include "stepcast/hardware.h"

namespace stepcast {

std::optional<double> GpuSpec::peak_flops(Precision p) const {
  switch (p) {
    case Precision::fp32: return peak_fp32;
    case Precision::fp16: return peak_fp16;
    case Precision::bf16: return peak_bf16;
    case Precision::fp8: return peak_fp8;
  }
  return std::nullopt;
}

const ArchCalibration& Calibration::for_arch(const std::string& arch) const {
  for (const auto& [name, constants] : families)
    if (name == arch) return constants;
  return fallback;
}

}  // namespace stepcast
