#include "stepcast/hardware.h"

namespace stepcast {

const LayerProfile* Calibration::layer_profile(const std::string& gpu_id, int64_t micro_batch,
                                               int64_t seq_len, int tp, int cp,
                                               bool moe) const {
  for (const auto& lp : layer_profiles)
    if (lp.gpu == gpu_id && lp.micro_batch == micro_batch && lp.seq_len == seq_len &&
        lp.tp == tp && lp.cp == cp && (lp.layers == 0 || lp.layers == (moe ? 2 : 1)))
      return &lp;
  return nullptr;
}

const ArchCalibration& Calibration::for_arch(const std::string& arch) const {
  for (const auto& [name, constants] : families)
    if (name == arch) return constants;
  return fallback;
}

}  // namespace stepcast
