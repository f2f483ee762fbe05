// Hugging Face config.json -> the scenario's model object (import_hf_config.h). Each key is read
// by the name transformers' configuration classes give it; a key of the wrong type or a required
// key missing is an error naming that key, so the user can find it in the file.
#include "stepcast/import_hf_config.h"

#include <fmt/format.h>

#include <cmath>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "scenario/specs_json.h"
#include "stepcast/model.h"
#include "stepcast/schema.h"
#include "stepcast/limits.h"

namespace stepcast {

namespace {

enum class Family {
  llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, deepseek, gpt_oss, nemotron_h,
  qwen3_next, glm4_moe, llama4
};

struct Architecture {
  std::string_view name;
  Family family;
};

constexpr std::array<Architecture, 15> kArchitectures = {{
    {"LlamaForCausalLM", Family::llama},
    {"MistralForCausalLM", Family::mistral},
    {"MixtralForCausalLM", Family::mixtral},
    {"Qwen2ForCausalLM", Family::qwen2},
    {"Qwen2MoeForCausalLM", Family::qwen2_moe},
    {"Qwen3ForCausalLM", Family::qwen3},
    {"Qwen3MoeForCausalLM", Family::qwen3_moe},
    {"DeepseekV2ForCausalLM", Family::deepseek},
    {"DeepseekV3ForCausalLM", Family::deepseek},
    {"GptOssForCausalLM", Family::gpt_oss},
    {"NemotronHForCausalLM", Family::nemotron_h},
    {"Qwen3NextForCausalLM", Family::qwen3_next},
    {"Glm4MoeForCausalLM", Family::glm4_moe},
    {"Llama4ForConditionalGeneration", Family::llama4},
    {"Llama4ForCausalLM", Family::llama4},
}};

std::string architecture_list() {
  std::string out;
  for (const auto& a : kArchitectures) out += fmt::format("{}{}", out.empty() ? "" : ", ", a.name);
  return out;
}

// Reads the config's keys; remembers the first problem (later reads then return their fallback,
// and the caller returns the error).
class ConfigReader {
 public:
  // `prefix` names a nested object in messages ("rope_scaling.").
  explicit ConfigReader(const Json& j, std::string prefix = "") : j_(j), prefix_(std::move(prefix)) {}

  const Json* raw(std::string_view key) const {
    auto it = j_.find(std::string(key));
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  bool has(std::string_view key) const { return raw(key) != nullptr; }

  // A positive whole number (or, with allow_zero, zero), within kMaxConfigInteger.
  int64_t integer(std::string_view key, std::optional<int64_t> fallback = std::nullopt,
                  bool allow_zero = false) {
    const Json* v = raw(key);
    if (!v) {
      if (!fallback) fail(ErrorCode::missing_key, key, fmt::format("config.json has no {}{}", prefix_, key));
      return fallback.value_or(0);
    }
    // JSON writers may give 4096.0 for 4096. (Compared without a cast: a float past int64's range
    // cast to it is undefined behaviour; fuzz_import found 1.8e25.)
    const bool whole = v->is_number_integer() ||
                       (v->is_number_float() && std::isfinite(v->get<double>()) &&
                        v->get<double>() == std::trunc(v->get<double>()));
    if (!whole) {
      fail(ErrorCode::type_error, key,
           fmt::format("config.json {}{}={} must be a whole number", prefix_, key, detail_echo(*v)));
      return fallback.value_or(0);
    }
    const double x = v->get<double>();
    if (x < (allow_zero ? 0 : 1) || x > kMaxConfigInteger) {
      fail(ErrorCode::out_of_range, key,
           fmt::format("config.json {}{}={} must be from {} to {}", prefix_, key, detail_echo(*v),
                       allow_zero ? 0 : 1, kMaxConfigInteger));
      return fallback.value_or(0);
    }
    return static_cast<int64_t>(x);
  }

  bool boolean(std::string_view key, bool fallback) {
    const Json* v = raw(key);
    if (!v) return fallback;
    if (!v->is_boolean()) {
      fail(ErrorCode::type_error, key,
           fmt::format("config.json {}{}={} must be true or false", prefix_, key, detail_echo(*v)));
      return fallback;
    }
    return v->get<bool>();
  }

  std::string string(std::string_view key, std::string fallback) {
    const Json* v = raw(key);
    if (!v) return fallback;
    if (!v->is_string()) {
      fail(ErrorCode::type_error, key,
           fmt::format("config.json {}{}={} must be a string", prefix_, key, detail_echo(*v)));
      return fallback;
    }
    return v->get<std::string>();
  }

  void fail(ErrorCode code, std::string_view key, std::string message) {
    if (!error_) error_ = Error{code, prefix_ + std::string(key), std::move(message)};
  }
  void adopt(const std::optional<Error>& e) {
    if (e && !error_) error_ = e;
  }
  const std::optional<Error>& error() const { return error_; }

  // Layer counts, ranks and widths of every published model fit well inside this; the scenario's
  // own ranges then judge the model.
  static constexpr int64_t kMaxConfigInteger = int64_t{1} << 30;

 private:
  static std::string detail_echo(const Json& v) {
    return printable(v.dump(-1, ' ', true, Json::error_handler_t::replace));
  }
  const Json& j_;
  std::string prefix_;
  std::optional<Error> error_;
};

// seq_len: the context the model was pre-trained with, where the config keeps it apart from the
// extended one (see the header).
int64_t pretraining_context(ConfigReader& r) {
  if (const Json* scaling = r.raw("rope_scaling"); scaling && scaling->is_object()) {
    ConfigReader sub(*scaling, "rope_scaling.");
    if (sub.has("original_max_position_embeddings")) {
      const int64_t v = sub.integer("original_max_position_embeddings");
      r.adopt(sub.error());
      return v;
    }
  }
  if (r.has("initial_context_length")) return r.integer("initial_context_length");
  return r.integer("max_position_embeddings");
}

// The MLP kind: every architecture above gates its MLP, so the activation picks SwiGLU or GeGLU.
std::string ffn_type(ConfigReader& r) {
  const std::string act = r.string("hidden_act", "silu");
  if (act == "silu" || act == "swish") return "swiglu";
  if (act.rfind("gelu", 0) == 0) return "geglu";
  r.fail(ErrorCode::unsupported, "hidden_act",
         fmt::format("config.json hidden_act={} is not modelled: the gated MLPs are silu "
                     "(SwiGLU) or gelu (GeGLU)",
                     printable(act)));
  return "swiglu";
}

// Qwen's MoE layers: layer i is MoE when (i + 1) % decoder_sparse_step == 0 and i is not in
// mlp_only_layers. Written as layer_freq 1 when every layer is, else as the 0/1 list.
Json qwen_layer_freq(ConfigReader& r, int64_t layers) {
  if (r.error()) return 1;  // the layer count may be the one at fault: size nothing by it
  const int64_t step = r.integer("decoder_sparse_step", 1);
  std::vector<int> pattern(static_cast<size_t>(layers), 0);
  for (int64_t i = 0; i < layers; ++i) pattern[static_cast<size_t>(i)] = (i + 1) % step == 0;
  if (const Json* dense = r.raw("mlp_only_layers")) {
    if (!dense->is_array()) {
      r.fail(ErrorCode::type_error, "mlp_only_layers",
             "config.json mlp_only_layers must be a list of layer indices");
      return 1;
    }
    for (const Json& i : *dense) {
      if (!i.is_number_integer() || i.get<int64_t>() < 0 || i.get<int64_t>() >= layers) {
        r.fail(ErrorCode::out_of_range, "mlp_only_layers",
               fmt::format("config.json mlp_only_layers holds {}: layer indices are 0 to {}",
                           printable(i.dump()), layers - 1));
        return 1;
      }
      pattern[static_cast<size_t>(i.get<int64_t>())] = 0;
    }
  }
  if (std::all_of(pattern.begin(), pattern.end(), [](int b) { return b == 1; })) return 1;
  return pattern;
}

// GPT-OSS's layer_types ("sliding_attention" / "full_attention" per layer) as the engine's two
// window layouts; any other layout is refused, not approximated.
std::optional<std::string> window_layers(ConfigReader& r) {
  const Json* types = r.raw("layer_types");
  if (!types) return "alternate";  // GPT-OSS without the list: alternate layers from layer 0
  if (!types->is_array() || types->empty()) {
    r.fail(ErrorCode::type_error, "layer_types", "config.json layer_types must be a list");
    return std::nullopt;
  }
  bool all = true, alternate = true;
  for (size_t i = 0; i < types->size(); ++i) {
    const Json& t = (*types)[i];
    const bool sliding = t.is_string() && t.get<std::string>() == "sliding_attention";
    if (!sliding && !(t.is_string() && t.get<std::string>() == "full_attention")) {
      r.fail(ErrorCode::out_of_range, "layer_types",
             fmt::format("config.json layer_types[{}]={} must be \"sliding_attention\" or "
                         "\"full_attention\"",
                         i, printable(t.dump())));
      return std::nullopt;
    }
    all = all && sliding;
    alternate = alternate && sliding == (i % 2 == 0);
  }
  if (all) return "all";
  if (alternate) return "alternate";
  r.fail(ErrorCode::unsupported, "layer_types",
         "config.json layer_types: only all-sliding or alternating layers from layer 0 are "
         "modelled");
  return std::nullopt;
}

// Nemotron-H's layers: hybrid_override_pattern, one of Megatron's symbols per layer (the
// config class's own key: transformers' configuration_nemotron_h.py, and what Megatron-Bridge's
// NemotronHBridge hands Megatron as hybrid_override_pattern), or, in configs that spell each
// layer out, layers_block_type ("mamba", "attention", "mlp", "moe" per layer, the names
// configuration_nemotron_h.py derives from the pattern). Either must have one entry per layer.
std::string nemotron_pattern(ConfigReader& r, int64_t layers) {
  std::string pattern;
  std::string_view key = "hybrid_override_pattern";
  if (r.has(key)) {
    pattern = r.string(key, "");
    if (r.error()) return pattern;
    for (size_t i = 0; i < pattern.size(); ++i)
      if (kHybridSymbols.find(pattern[i]) == std::string_view::npos) {
        r.fail(ErrorCode::out_of_range, key,
               fmt::format("config.json {}[{}]={} is not a layer the engine models (M Mamba-2, "
                           "* attention, - MLP, E MoE)",
                           key, i, printable(std::string(1, pattern[i]))));
        return pattern;
      }
  } else {
    key = "layers_block_type";
    const Json* types = r.raw(key);
    if (!types) {
      r.fail(ErrorCode::missing_key, "hybrid_override_pattern",
             "config.json has no hybrid_override_pattern (nor layers_block_type)");
      return pattern;
    }
    if (!types->is_array()) {
      r.fail(ErrorCode::type_error, key, "config.json layers_block_type must be a list");
      return pattern;
    }
    constexpr std::array<std::pair<std::string_view, char>, 4> kNames = {
        {{"mamba", 'M'}, {"attention", '*'}, {"mlp", '-'}, {"moe", 'E'}}};
    for (size_t i = 0; i < types->size(); ++i) {
      const Json& t = (*types)[i];
      auto it = std::find_if(kNames.begin(), kNames.end(), [&](const auto& n) {
        return t.is_string() && t.get<std::string>() == n.first;
      });
      if (it == kNames.end()) {
        r.fail(ErrorCode::out_of_range, key,
               fmt::format("config.json layers_block_type[{}]={} must be \"mamba\", "
                           "\"attention\", \"mlp\" or \"moe\"",
                           i, printable(t.dump())));
        return pattern;
      }
      pattern.push_back(it->second);
    }
  }
  if (!r.error() && static_cast<int64_t>(pattern.size()) != layers)
    r.fail(ErrorCode::out_of_range, key,
           fmt::format("config.json {} has {} layers but num_hidden_layers={}: one entry per "
                       "layer",
                       key, pattern.size(), layers));
  return pattern;
}

// Qwen3-Next's layers as Megatron's hybrid pattern: each decoder layer a mixer (`G` Gated
// DeltaNet, `*` attention) then its MLP (`E` MoE, `-` dense), so 2 x num_hidden_layers blocks.
// The mixer from layer_types ("linear_attention" / "full_attention"), else full attention on each
// full_attention_interval-th layer (transformers' Qwen3NextConfig); the MLP as Qwen's MoE
// layers (decoder_sparse_step, mlp_only_layers: qwen_layer_freq).
std::string qwen3_next_pattern(ConfigReader& r, int64_t layers) {
  std::string pattern;
  if (r.error()) return pattern;
  const Json* types = r.raw("layer_types");
  const int64_t interval = types ? 1 : r.integer("full_attention_interval", 4);
  if (types && (!types->is_array() || static_cast<int64_t>(types->size()) != layers)) {
    r.fail(ErrorCode::type_error, "layer_types",
           fmt::format("config.json layer_types must be a list of num_hidden_layers={} names",
                       layers));
    return pattern;
  }
  const Json freq = qwen_layer_freq(r, layers);
  for (int64_t i = 0; i < layers && !r.error(); ++i) {
    bool full = (i + 1) % interval == 0;
    if (types) {
      const Json& t = (*types)[static_cast<size_t>(i)];
      full = t.is_string() && t.get<std::string>() == "full_attention";
      if (!full && !(t.is_string() && t.get<std::string>() == "linear_attention")) {
        r.fail(ErrorCode::out_of_range, "layer_types",
               fmt::format("config.json layer_types[{}]={} must be \"linear_attention\" or "
                           "\"full_attention\"",
                           i, printable(t.dump())));
        return pattern;
      }
    }
    const bool moe = freq.is_array() ? freq[static_cast<size_t>(i)] == 1 : true;
    pattern += full ? '*' : 'G';
    pattern += moe ? 'E' : '-';
  }
  return pattern;
}

// Nemotron-H's MLP activation (mlp_hidden_act; relu2, the config class's default, is the
// squared ReLU of the Nemotron-H report).
std::string nemotron_ffn_type(ConfigReader& r) {
  const std::string act = r.string("mlp_hidden_act", "relu2");
  if (act == "relu2") return "squared_relu";
  r.fail(ErrorCode::unsupported, "mlp_hidden_act",
         fmt::format("config.json mlp_hidden_act={} is not modelled: Nemotron-H's MLPs are relu2 "
                     "(squared ReLU)",
                     printable(act)));
  return "squared_relu";
}

}  // namespace

Result<Json> model_from_hf_config(std::string_view config_json) {
  auto parsed = parse_json(config_json, "the config");
  if (!parsed) return parsed.error();
  const Json& config = *parsed;
  if (!config.is_object())
    return Error{ErrorCode::type_error, "", "config.json must be a JSON object"};
  // The architecture: "architectures": ["LlamaForCausalLM"].
  const Json* archs = config.contains("architectures") && !config["architectures"].is_null()
                          ? &config["architectures"]
                          : nullptr;
  if (!archs) return Error{ErrorCode::missing_key, "architectures",
                           "config.json has no architectures (e.g. [\"LlamaForCausalLM\"])"};
  if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string())
    return Error{ErrorCode::type_error, "architectures",
                 "config.json architectures must be a list of names"};
  const std::string arch = (*archs)[0].get<std::string>();
  auto known = std::find_if(kArchitectures.begin(), kArchitectures.end(),
                            [&](const Architecture& a) { return a.name == arch; });
  if (known == kArchitectures.end())
    return Error{ErrorCode::unsupported, "architectures",
                 fmt::format("config.json architectures[0]={} is not one the importer reads ({})",
                             printable(arch), architecture_list())};
  const Family family = known->family;
  // Llama 4's published config (Llama4ForConditionalGeneration) holds the language model's keys in
  // text_config beside its vision tower's; the text-only Llama4ForCausalLM has them at the top.
  const Json* text = family == Family::llama4 && config.contains("text_config")
                         ? &config["text_config"]
                         : nullptr;
  if (text && !text->is_object())
    return Error{ErrorCode::type_error, "text_config", "config.json text_config must be an object"};
  ConfigReader r(text ? *text : config, text ? "text_config." : "");

  std::vector<std::string> notes;
  Json m = Json::object();
  m["name"] = r.string("_name_or_path", "");
  if (m["name"].get<std::string>().empty()) m["name"] = "imported " + arch;
  // The scenario's own bound on layers, checked before anything is sized by the layer count.
  const int64_t max_layers = static_cast<int64_t>(find_key("model", "layers")->max);
  const int64_t layers = r.integer("num_hidden_layers");
  if (layers > max_layers)
    r.fail(ErrorCode::out_of_range, "num_hidden_layers",
           fmt::format("config.json num_hidden_layers={} must be at most {}", layers, max_layers));
  const int64_t hidden = r.integer("hidden_size");
  const int64_t heads = r.integer("num_attention_heads");
  m["layers"] = layers;
  m["hidden"] = hidden;
  m["heads"] = heads;
  m["kv_heads"] = r.integer("num_key_value_heads", heads);
  // Llama 4: intermediate_size is an expert's, intermediate_size_mlp the dense layers' MLP.
  m["ffn_hidden"] = r.integer(family == Family::llama4 ? "intermediate_size_mlp" : "intermediate_size");
  m["vocab"] = r.integer("vocab_size");
  m["seq_len"] = pretraining_context(r);
  if (family == Family::llama4) {
    // Chunked attention (transformers' Llama4TextAttention: a token attends within its
    // attention_chunk_size chunk; Megatron-Bridge chunks every layer): model.attention.chunk.
    // Maverick's config records no pre-training length, only its 1,048,576-token context, so the
    // sequence defaults to one chunk, Meta's pre-training length for Scout (rope_scaling's 8,192).
    const int64_t chunk = r.integer("attention_chunk_size", 0, true);
    if (chunk > 0) m["attention"] = {{"chunk", chunk}};
    if (chunk > 0 && m["seq_len"].get<int64_t>() > chunk) {
      notes.push_back(fmt::format("seq_len {}, one attention chunk (attention_chunk_size), not the "
                                  "config's {} (its context, not a pre-training length): set "
                                  "seq_len for longer sequences, attended in chunks",
                                  chunk, m["seq_len"].get<int64_t>()));
      m["seq_len"] = chunk;
    }
    notes.push_back("the NoPE layers (no_rope_layers) are priced with RoPE; the L2 QK-norm and "
                    "attention temperature tuning are not modelled");
    if (text) notes.push_back("the vision encoder (vision_config) is not modelled: text only");
  }
  m["ffn_type"] = family == Family::nemotron_h ? nemotron_ffn_type(r) : ffn_type(r);
  m["position"] = "rope";
  // transformers' classes for these architectures default to untied embeddings.
  m["tied_embeddings"] = r.boolean("tie_word_embeddings", false);
  m["norm"] = "rmsnorm";
  // The engine's `bias` is every linear layer; Llama-style attention_bias covers the attention
  // projections and mlp_bias the MLP, and GPT-OSS has both (attention_bias alone says it).
  // Nemotron-H: use_bias, as Megatron-Bridge's NemotronHBridge maps it to add_bias_linear.
  const bool attention_bias = r.boolean("attention_bias", false);
  m["bias"] = family == Family::nemotron_h ? r.boolean("use_bias", false)
              : family == Family::glm4_moe ? false  // its attention_bias is Q, K and V's only
                                           : attention_bias;
  if (family == Family::qwen2 || family == Family::qwen2_moe)
    notes.push_back("Qwen2's bias on the query/key/value projections is not modelled");
  // GLM-4.5 (transformers' Glm4MoeAttention: q/k/v_proj take attention_bias, o_proj none; the
  // MLPs none; as Megatron-Bridge's GLM45Bridge maps them, add_bias_linear False with a QKV
  // bias).
  if (family == Family::glm4_moe) {
    if (attention_bias)
      notes.push_back("GLM's bias on the query/key/value projections is not modelled");
    if (r.boolean("use_qk_norm", false)) notes.push_back("QK-Norm is not modelled");
    if (r.has("partial_rotary_factor"))
      notes.push_back("partial RoPE (partial_rotary_factor) is priced as RoPE on whole heads");
  }
  if (family == Family::qwen3 || family == Family::qwen3_moe)
    notes.push_back("QK-Norm is not modelled");
  // Nemotron-H 8B/56B name it attention_head_dim; Nemotron 3 head_dim.
  for (std::string_view key : {"head_dim", "attention_head_dim"}) {
    if (!r.has(key) || family == Family::deepseek) continue;
    const int64_t head_dim = r.integer(key);
    if (head_dim * heads != hidden) m["head_dim"] = head_dim;
    break;
  }

  // Attention: MLA (DeepSeek) or grouped-query, optionally over a sliding window.
  if (family == Family::deepseek) {
    Json att = {{"type", "mla"}};
    if (r.has("q_lora_rank")) att["q_lora_rank"] = r.integer("q_lora_rank");
    att["kv_lora_rank"] = r.integer("kv_lora_rank");
    att["qk_head_dim"] = r.integer("qk_nope_head_dim");
    att["qk_rope_head_dim"] = r.integer("qk_rope_head_dim");
    att["v_head_dim"] = r.integer("v_head_dim");
    m["attention"] = std::move(att);
    m["kv_heads"] = heads;  // MLA: every head has its own keys and values
  } else if (family == Family::gpt_oss) {
    const int64_t window = r.integer("sliding_window");
    if (auto which = window_layers(r))
      m["attention"] = {{"window", window}, {"window_layers", *which}};
  } else if (r.has("sliding_window") && r.boolean("use_sliding_window", true)) {
    // Mistral v0.1 slides every layer; Qwen's configs carry a window they do not use unless
    // use_sliding_window says so.
    if (family == Family::qwen2 || family == Family::qwen2_moe || family == Family::qwen3 ||
        family == Family::qwen3_moe)
      notes.push_back("Qwen's sliding window over the top layers (max_window_layers) is taken as "
                      "every layer");
    m["attention"] = {{"window", r.integer("sliding_window")}};
  }

  // Mixture of experts.
  Json moe;
  switch (family) {
    case Family::mixtral:
      moe = {{"experts", r.integer("num_local_experts")},
             {"top_k", r.integer("num_experts_per_tok")},
             {"ffn_hidden", m["ffn_hidden"]}};
      break;
    case Family::gpt_oss:
      moe = {{"experts", r.integer("num_local_experts")},
             {"top_k", r.has("experts_per_token") ? r.integer("experts_per_token")
                                                  : r.integer("num_experts_per_tok")},
             {"ffn_hidden", m["ffn_hidden"]}};
      break;
    case Family::qwen2_moe:
    case Family::qwen3_moe:
      moe = {{"experts", r.integer("num_experts")},
             {"top_k", r.integer("num_experts_per_tok")},
             {"ffn_hidden", r.integer("moe_intermediate_size")}};
      if (family == Family::qwen2_moe && r.has("shared_expert_intermediate_size")) {
        moe["shared_experts"] = 1;
        moe["shared_ffn_hidden"] = r.integer("shared_expert_intermediate_size");
      }
      if (Json freq = qwen_layer_freq(r, layers); freq != Json(1)) moe["layer_freq"] = freq;
      break;
    case Family::deepseek:
    case Family::glm4_moe:  // DeepSeek-V3's MoE keys (transformers' Glm4MoeConfig)
      if (!r.has("n_routed_experts")) break;  // a dense DeepSeek-V2-style model
      moe = {{"experts", r.integer("n_routed_experts")},
             {"top_k", r.integer("num_experts_per_tok")},
             {"ffn_hidden", r.integer("moe_intermediate_size")}};
      if (int64_t shared = r.integer("n_shared_experts", 0, true); shared > 0)
        moe["shared_experts"] = shared;
      if (int64_t first = r.integer("first_k_dense_replace", 0, true); first > 0)
        moe["first_dense_layers"] = first;
      if (int64_t freq = r.integer("moe_layer_freq", 1); freq > 1) moe["layer_freq"] = freq;
      // Node-limited routing: n_group groups, topk_group of them per token (1 group: no limit).
      if (int64_t groups = r.integer("n_group", 1); groups > 1) {
        moe["router_groups"] = groups;
        moe["router_group_top_k"] = r.integer("topk_group");
      }
      if (int64_t mtp = r.integer("num_nextn_predict_layers", 0, true); mtp > 0)
        m["mtp_layers"] = mtp;
      break;
    case Family::llama4: {
      // Every MoE layer has one shared expert as wide as a routed one (Llama4TextMoe); the MoE
      // layers are moe_layers, else every interleave_moe_layer_step-th counting from 1
      // (Llama4TextConfig: range(step - 1, layers, step)).
      moe = {{"experts", r.integer("num_local_experts")},
             {"top_k", r.integer("num_experts_per_tok")},
             {"ffn_hidden", r.integer("intermediate_size")},
             {"shared_experts", 1}};
      if (r.error()) break;
      std::vector<int> pattern(static_cast<size_t>(layers), 0);
      if (const Json* listed = r.raw("moe_layers")) {
        if (!listed->is_array()) {
          r.fail(ErrorCode::type_error, "moe_layers", "config.json moe_layers must be a list of layer indices");
          break;
        }
        for (const Json& i : *listed) {
          if (!i.is_number_integer() || i.get<int64_t>() < 0 || i.get<int64_t>() >= layers) {
            r.fail(ErrorCode::out_of_range, "moe_layers",
                   fmt::format("config.json moe_layers holds {}: layer indices are 0 to {}",
                               printable(i.dump()), layers - 1));
            break;
          }
          pattern[static_cast<size_t>(i.get<int64_t>())] = 1;
        }
      } else {
        const int64_t step = r.integer("interleave_moe_layer_step", 1);
        for (int64_t i = 0; i < layers; ++i) pattern[static_cast<size_t>(i)] = (i + 1) % step == 0;
      }
      if (!std::all_of(pattern.begin(), pattern.end(), [](int x) { return x == 1; }))
        moe["layer_freq"] = pattern;
      break;
    }
    case Family::nemotron_h: {
      // Hybrid: the pattern, the Mamba-2 mixer of its M layers (NemotronHConfig's names, as
      // Megatron-Bridge's NemotronHBridge maps them to --mamba-*), the MoE blocks of its E
      // layers.
      const std::string pattern = nemotron_pattern(r, layers);
      m["layer_pattern"] = pattern;
      if (pattern.find('M') != std::string::npos)
        m["mamba"] = {{"state_dim", r.integer("ssm_state_size")},
                      {"head_dim", r.integer("mamba_head_dim")},
                      {"num_heads", r.integer("mamba_num_heads")},
                      {"num_groups", r.integer("n_groups")},
                      {"conv_kernel", r.integer("conv_kernel")}};
      if (r.integer("n_routed_experts", 0, true) == 0) break;
      moe = {{"experts", r.integer("n_routed_experts")},
             {"top_k", r.integer("num_experts_per_tok")},
             {"ffn_hidden", r.integer("moe_intermediate_size")}};
      // One shared expert where the config gives its width without a count.
      const int64_t shared_default = r.has("moe_shared_expert_intermediate_size") ? 1 : 0;
      if (int64_t shared = r.integer("n_shared_experts", shared_default, true); shared > 0) {
        moe["shared_experts"] = shared;
        moe["shared_ffn_hidden"] = r.integer("moe_shared_expert_intermediate_size");
      }
      if (int64_t groups = r.integer("n_group", 1); groups > 1) {
        moe["router_groups"] = groups;
        moe["router_group_top_k"] = r.integer("topk_group");
      }
      // Latent MoE (Nemotron 3 Super): NemotronHBridge hands moe_latent_size to Megatron as is.
      if (int64_t latent = r.integer("moe_latent_size", 0, true); latent > 0)
        moe["latent_size"] = latent;
      // MTP: num_nextn_predict_layers modules of mtp_hybrid_override_pattern's layers
      // (NemotronHBridge's provider_bridge, nemotron_h_bridge.py at Megatron-Bridge 17a381f95).
      // How many times training repeats them (Super's recipe: 2, mtp_use_repeated_layer) is a
      // recipe's, not the config's.
      if (int64_t mtp = r.integer("num_nextn_predict_layers", 0, true); mtp > 0) {
        m["mtp_layers"] = mtp;
        if (r.has("mtp_hybrid_override_pattern"))
          m["mtp_pattern"] = r.string("mtp_hybrid_override_pattern", "");
      }
      break;
    }
    case Family::qwen3_next: {
      // Megatron-Bridge's Qwen3NextBridge: the attention's output gate, the Gated DeltaNet's
      // linear_* keys, Qwen's MoE keys with one shared expert.
      m["layers"] = 2 * layers;
      m["layer_pattern"] = qwen3_next_pattern(r, layers);
      m["attention"] = {{"output_gate", true}};
      m["gdn"] = {{"key_heads", r.integer("linear_num_key_heads")},
                  {"value_heads", r.integer("linear_num_value_heads")},
                  {"key_head_dim", r.integer("linear_key_head_dim")},
                  {"value_head_dim", r.integer("linear_value_head_dim")},
                  {"conv_kernel", r.integer("linear_conv_kernel_dim")}};
      moe = {{"experts", r.integer("num_experts")},
             {"top_k", r.integer("num_experts_per_tok")},
             {"ffn_hidden", r.integer("moe_intermediate_size")}};
      if (r.has("shared_expert_intermediate_size")) {
        moe["shared_experts"] = 1;
        moe["shared_ffn_hidden"] = r.integer("shared_expert_intermediate_size");
      }
      notes.push_back("QK-Norm, the shared expert's gate and the MTP module are not modelled; "
                      "each decoder layer is two blocks of the pattern (mixer, then MLP)");
      break;
    }
    default: break;
  }
  if (r.error()) return *r.error();
  if (!moe.is_null()) m["moe"] = std::move(moe);
  m["source"] = fmt::format("Hugging Face config.json ({})", arch);
  if (!notes.empty()) {
    std::string text;
    for (const auto& n : notes) text += (text.empty() ? "" : "; ") + n;
    m["notes"] = text + ".";
  }
  // The model's own rules (heads divide, MLA ranks given, top_k <= experts, ...).
  auto checked = detail::model_from_json(m, "model", false);
  if (!checked) return checked.error();
  return m;
}

Json scenario_with_model(const Json& model, std::string_view node_id) {
  return Json{{"model", model},
              {"cluster", {{"node", std::string(node_id)}, {"nodes", 1}}},
              {"plan", {{"global_batch", 8}}}};
}

}  // namespace stepcast
