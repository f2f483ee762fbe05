#include "stepcast/accuracy/model_family.h"

namespace stepcast::accuracy {

ModelFamily model_family_of(const ModelSpec& m) {
  if (m.hybrid()) return ModelFamily::hybrid;
  if (m.mla()) return ModelFamily::mla;
  if (m.moe.enabled())
    return m.moe.ffn_hidden >= 2 * m.hidden ? ModelFamily::coarse_moe : ModelFamily::fine_moe;
  const bool gated = m.ffn_type == FfnType::swiglu || m.ffn_type == FfnType::geglu;
  return gated ? ModelFamily::dense_llama : ModelFamily::dense_gpt;
}

}  // namespace stepcast::accuracy
