// The keys of the per-family fitted constants (ArchCalibration, hardware.h) in one table: their
// names in presets/calibration.json's families and fallback, the member each fills, its unit and
// range, and how a compute scale moves it. The preset reader (scenario/specs_json.cpp), the
// calibration's compute scale (calibration/calibrate.cpp) and the accuracy suite's fit
// (engine/accuracy/src/calibrate.cpp) read them from here; adding or removing a constant is its
// member in ArchCalibration and one row in arch_calibration_keys.cpp.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "stepcast/hardware.h"

namespace stepcast {

// How `calibration.compute_scale` s moves a constant: an efficiency is multiplied by s (at most
// 1), a fixed time divided by it; a ratio of efficiencies stays.
enum class ComputeScaled { efficiency, time, ratio };

struct ArchCalibrationKey {
  std::string_view name;            // the key ("gemm_overhead_us")
  double ArchCalibration::*member;  // the member it fills
  std::string_view unit;            // the key's unit: "1" (a fraction) or "µs"
  double scale = 1;                 // the member's value per unit of the key's (µs -> s: 1e-6)
  // Absent from a family: nullopt and `falls_back_to` empty: required; `falls_back_to`: that
  // key's value (fp8 GEMMs default to the 16-bit efficiency); else this value.
  std::optional<double> absent = std::nullopt;
  std::string_view falls_back_to = {};
  // Range: above 0 (`zero_allowed`: from 0), at most `max` where above 0, `max_why` saying why.
  bool zero_allowed = false;
  double max = 0;
  std::string_view max_why = {};
  ComputeScaled scaled = ComputeScaled::efficiency;
};

// Every key, in presets/calibration.json's order.
std::span<const ArchCalibrationKey> arch_calibration_keys();
// The row of `name`, or null.
const ArchCalibrationKey* find_arch_calibration_key(std::string_view name);

// A constant in its key's unit (µs for a time), and back.
inline double key_value(const ArchCalibration& a, const ArchCalibrationKey& k) {
  return a.*k.member / k.scale;
}
inline void set_key_value(ArchCalibration& a, const ArchCalibrationKey& k, double v) {
  a.*k.member = v * k.scale;
}

}  // namespace stepcast
