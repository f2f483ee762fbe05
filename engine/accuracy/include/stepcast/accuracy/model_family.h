// The architecture class of a model, for the accuracy figures that hold out a whole class
// (leave one model family out): a constant that absorbs what the engine does not model about one
// kind of model shows up as a large error on that kind once its rows leave the fit.
#pragma once

#include <array>
#include <string_view>

#include "stepcast/enum_names.h"
#include "stepcast/model.h"

namespace stepcast::accuracy {

// The classes issue 34 names, decided from the model's shape alone, first match wins:
//   hybrid             a Mamba / Gated DeltaNet hybrid (model.layer_pattern);
//   MLA                multi-latent attention (DeepSeek-V2/V3, Kimi K2, Moonlight), MoE or not;
//   coarse MoE         routed experts at least 2 x hidden wide (Mixtral 14,336 on 4,096, Grok-1
//                      32,768 on 6,144): each expert is a dense-sized MLP;
//   fine-grained MoE   narrower experts (Qwen3 768-1,536 on 2,048-4,096, GPT-OSS 2,880 on 2,880:
//                      DeepSeekMoE's segmented experts, Dai et al. 2024);
//   dense Llama-style  a gated MLP (SwiGLU, GeGLU);
//   dense GPT-style    any other dense MLP (GELU, ReLU, squared ReLU: GPT-3, BLOOM, MPT,
//                      Nemotron-4).
// 2 x hidden sits between the widest fine-grained expert published (GPT-OSS, 1.0 x) and the
// narrowest coarse one (Mixtral, 3.5 x), so no validation model is near the boundary.
enum class ModelFamily { dense_gpt, dense_llama, coarse_moe, fine_moe, mla, hybrid };

ModelFamily model_family_of(const ModelSpec& model);

}  // namespace stepcast::accuracy

namespace stepcast {
// The classes' names, in declaration order (enum_names.h: name_of, enum_names).
template <>
struct EnumNames<accuracy::ModelFamily> {
  static constexpr std::array<std::string_view, 6> values = {
      "dense GPT-style", "dense Llama-style", "coarse MoE", "fine-grained MoE", "MLA", "hybrid"};
};
}  // namespace stepcast
