#include "stepcast/hardware.h"

namespace stepcast {

const ArchCalibration& Calibration::for_arch(const std::string& arch) const {
  for (const auto& [name, constants] : families)
    if (name == arch) return constants;
  return fallback;
}

}  // namespace stepcast
