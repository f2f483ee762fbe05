// Hugging Face config.json -> the scenario's custom `model` object. The config is what a model's
// published checkpoint says about its shape (hidden_size, num_key_value_heads, MoE and MLA keys);
// the model object is the same shape in the scenario's keys (docs/scenario.md, `model`), so a
// user can estimate a model that has no preset by pasting its config.
#pragma once

#include <string_view>

#include "stepcast/json.h"
#include "stepcast/result.h"

namespace stepcast {

// The architectures (config.json "architectures"[0]) the importer reads, and what it does not
// model of each goes into the model's "notes".
//   LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM,
//   Qwen2MoeForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, DeepseekV2ForCausalLM,
//   DeepseekV3ForCausalLM, GptOssForCausalLM, NemotronHForCausalLM (hybrid: its
//   hybrid_override_pattern or layers_block_type as model.layer_pattern, its Mamba-2 and MoE
//   keys as model.mamba and model.moe), Qwen3NextForCausalLM (hybrid: each decoder layer two
//   blocks of model.layer_pattern, a Gated DeltaNet `G` or gated attention `*` then its MoE `E`),
//   Glm4MoeForCausalLM (GLM-4.5: grouped-query attention and DeepSeek-V3's MoE and MTP keys),
//   Llama4ForConditionalGeneration (its text_config) and Llama4ForCausalLM (Llama 4: MoE layers
//   from moe_layers or interleave_moe_layer_step, one shared expert, the context capped at the
//   attention chunk)
//
// seq_len is the pre-training context the config records: rope_scaling's
// original_max_position_embeddings (Llama 3.1, DeepSeek, GPT-OSS: the length before the context
// was extended), else initial_context_length, else max_position_embeddings.
//
// Errors: parse_error (not JSON), unsupported (an architecture not above), missing_key or
// type_error naming the config key (e.g. "num_hidden_layers"), and the model's own rules
// (invalid_model) on the result.
Result<Json> model_from_hf_config(std::string_view config_json);

// A scenario around an imported model: the model, a default cluster (one node_id node) and the
// simplest plan (no parallelism beyond data parallel over the node, micro-batch 1, one sample per
// GPU), for a first estimate the user then edits.
Json scenario_with_model(const Json& model, std::string_view node_id = "dgx-h100");

}  // namespace stepcast
