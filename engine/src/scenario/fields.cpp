// The scenario's keys: every input the engine reads, with its rules and its default, in one
// place. The parser (read.cpp, specs_json.cpp), the resolved-scenario writer (tools/resolve.cpp),
// the link codec (share_link.cpp), docs/scenario.md (schema_markdown) and the web page (the
// schema() binding) all read these tables. Link names are a contract: never rename one.
#include "scenario/fields.h"

#include "stepcast/limits.h"

#include <cstdlib>

namespace stepcast::detail {

namespace {

using D = DefaultValue;
using V = ValueType;
using C = Control;

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kHuge = 1 << 20;
// Physical ranges of custom hardware: wide enough for any device past or planned (a GB300 has
// 288 GiB, 8,000 GB/s and 15,000 dense nvfp4 TFLOP/s), narrow enough that no estimate leaves the
// range of a double (no infinite or NaN time).
constexpr double kMinTflops = 1e-6, kMaxTflops = 1e6;
constexpr double kMinLinkBandwidth = 1e-6, kMaxBandwidth = 1e6;

constexpr Field<ModelSpec> kModel[] = {
    {{.object = "model", .name = "id", .type = V::text, .fallback = D::absent(),
      .doc = "preset id (preset files); a custom model needs none"},
     &read_member<&ModelSpec::id>, nullptr},
    {{.object = "model", .name = "name", .link = "m.name", .type = V::text,
      .fallback = D::rule("the preset id, or \"custom model\""), .max = kMaxNameBytes,
      .label = "Name",
      .doc = "the model's name, for people", .control = C::model},
     [](JsonReader& r, const KeyInfo& k, ModelSpec& m) {
       m.name = r.string(k, m.id.empty() ? std::string("custom model") : m.id);
     },
     &write_member<&ModelSpec::name>},
    member<&ModelSpec::layers>({.object = "model", .name = "layers", .link = "m.layers",
                                .fallback = D::required(), .min = 1, .max = 100000,
                                .label = "Layers",
                                .doc = "transformer blocks; the pipeline splits them: `plan.pp·"
                                       "plan.vpp` divides them, or `first_stage_layers`, "
                                       "`stages` or `pipeline_layout` give the split",
                                .control = C::model}),
    member<&ModelSpec::hidden>({.object = "model", .name = "hidden", .link = "m.hidden",
                                .fallback = D::required(), .min = 1, .max = 1 << 24,
                                .label = "Hidden size",
                                .doc = "width of the residual stream (h): each token's vector "
                                       "between the layers; divisible by `heads` unless "
                                       "`head_dim` is given (a head is hidden / heads wide)",
                                .control = C::model}),
    member<&ModelSpec::heads>({.object = "model", .name = "heads", .link = "m.heads",
                               .fallback = D::required(), .min = 1, .max = kHuge,
                               .label = "Heads", .doc = "attention (query) heads",
                               .control = C::model}),
    {{.object = "model", .name = "kv_heads", .link = "m.kv", .fallback = D::rule("`heads`"),
      .min = 1, .max = kHuge, .label = "KV heads",
      .doc = "key/value heads (grouped-query attention); divides `heads`", .control = C::model},
     [](JsonReader& r, const KeyInfo& k, ModelSpec& m) { m.kv_heads = r.integer(k, m.heads); },
     &write_member<&ModelSpec::kv_heads>},
    member<&ModelSpec::ffn_hidden>({.object = "model", .name = "ffn_hidden", .link = "m.ffn",
                                    .fallback = D::required(), .min = 1, .max = 1 << 26,
                                    .label = "FFN size",
                                    .doc = "inner width of each dense layer's MLP; `plan.tp` "
                                           "divides it; gated units (swiglu, geglu) have three "
                                           "hidden × ffn_hidden matrices, the others two",
                                    .control = C::model}),
    member<&ModelSpec::vocab>({.object = "model", .name = "vocab", .link = "m.vocab",
                               .fallback = D::required(), .min = 1, .max = 1 << 26,
                               .unit = "tokens", .label = "Vocabulary",
                               .doc = "vocabulary (unpadded; Megatron pads it to a multiple of "
                                      "128·tp)",
                               .control = C::model}),
    member<&ModelSpec::seq_len>({.object = "model", .name = "seq_len", .link = "m.seq",
                                 .fallback = D::required(), .min = 1, .max = 1 << 26,
                                 .unit = "tokens", .label = "Sequence length",
                                 .doc = "training context (the scenario's `seq_len` overrides "
                                        "it)",
                                 .control = C::none}),
    member<&ModelSpec::ffn_type>({.object = "model", .name = "ffn_type", .link = "m.act",
                                  .type = V::choice, .fallback = D::required(),
                                  .choices = enum_names<FfnType>(), .label = "FFN type",
                                  .doc = "MLP kind: `gelu`, `relu`, `squared_relu` (2 matrices), "
                                         "`swiglu`, `geglu` (3)",
                                  .control = C::model}),
    member<&ModelSpec::position>({.object = "model", .name = "position", .link = "m.pos",
                                  .type = V::choice, .fallback = D::required(),
                                  .choices = enum_names<Position>(), .label = "Positions",
                                  .doc = "learned absolute table (s·h parameters) or none (RoPE, "
                                         "ALiBi)",
                                  .control = C::model}),
    member<&ModelSpec::tied_embeddings>({.object = "model", .name = "tied_embeddings",
                                         .link = "m.tied", .type = V::boolean,
                                         .fallback = D::required(), .label = "Tied embeddings",
                                         .doc = "the output layer shares the input embedding",
                                         .control = C::model}),
    member<&ModelSpec::norm>({.object = "model", .name = "norm", .link = "m.norm",
                              .type = V::choice, .fallback = D::of("layernorm"),
                              .choices = enum_names<Norm>(), .label = "Norm",
                              .doc = "norm kind (parameters and element-wise traffic)",
                              .control = C::model}),
    {{.object = "model", .name = "bias", .link = "m.bias", .type = V::boolean,
      .fallback = D::rule("true for layernorm, false for rmsnorm"), .label = "Linear biases",
      .doc = "linear layers carry biases", .control = C::model},
     [](JsonReader& r, const KeyInfo& k, ModelSpec& m) {
       m.bias = r.boolean(k, m.norm == Norm::layernorm);
     },
     &write_member<&ModelSpec::bias>},
    {{.object = "model", .name = "head_dim", .link = "m.hd", .fallback = D::rule("hidden / heads"),
      .min = 1, .max = 1 << 16, .label = "Head size",
      .doc = "width of one attention head, where `heads·head_dim` ≠ `hidden` (Qwen3, GPT-OSS)",
      .control = C::model},
     [](JsonReader& r, const KeyInfo& k, ModelSpec& m) { m.head_size = r.integer(k, 0); },
     // Written only when given: a model without it keeps hidden / heads.
     [](const ModelSpec& m, const KeyInfo& k, Json& out) {
       if (m.head_size > 0) out[std::string(k.name)] = m.head_size;
     }},
    {{.object = "model", .name = "attention", .link = "m.att", .type = V::object,
      .fallback = D::rule("grouped-query attention over `kv_heads`"), .label = "Attention",
      .doc = "the attention's kind and shape: `model.attention` keys below", .control = C::model},
     [](JsonReader& r, const KeyInfo& k, ModelSpec& m) {
       if (const Json* v = r.raw(k.name); v && !v->is_null()) {
         JsonReader sub(*v, r.field(k.name));
         if (sub.is_object()) read_fields(sub, attention_fields(), m.attention);
         r.absorb(sub.errors());
       }
     },
     [](const ModelSpec& m, const KeyInfo& k, Json& out) {
       const AttentionSpec& a = m.attention;
       if (a.type == AttentionType::gqa && a.window == 0 && !a.output_gate) return;
       Json att = Json::object();
       for (const auto& f : attention_fields())
         if (f.write) f.write(a, f.info, att);
       out[std::string(k.name)] = std::move(att);
     }},
    {{.object = "model", .name = "moe", .link = "m.moe", .type = V::object,
      .fallback = D::absent(), .label = "Mixture of experts",
      .doc = "routed experts: `model.moe` keys below (absent: a dense model)",
      .control = C::model},
     [](JsonReader& r, const KeyInfo& k, ModelSpec& m) {
       if (const Json* v = r.raw(k.name); v && !v->is_null()) {
         JsonReader sub(*v, r.field(k.name));
         if (sub.is_object()) read_fields(sub, moe_fields(), m.moe);
         r.absorb(sub.errors());
       }
     },
     [](const ModelSpec& m, const KeyInfo& k, Json& out) {
       if (!m.moe.enabled()) return;
       Json moe = Json::object();
       for (const auto& f : moe_fields())
         if (f.write) f.write(m.moe, f.info, moe);
       out[std::string(k.name)] = std::move(moe);
     }},
    {{.object = "model", .name = "mtp_layers", .link = "m.mtp", .fallback = D::of(0.0), .min = 0,
      .max = 64, .unit = "layers", .label = "MTP layers",
      .doc = "multi-token prediction modules after the last layer (DeepSeek-V3: 1)",
      .control = C::model},
     &read_member<&ModelSpec::mtp_layers>,
     [](const ModelSpec& m, const KeyInfo& k, Json& out) {
       if (m.mtp_layers > 0) out[std::string(k.name)] = m.mtp_layers;
     }},
    {{.object = "model", .name = "layer_pattern", .link = "m.pattern", .type = V::text,
      .fallback = D::rule("none: every layer attention and an MLP (or MoE block)"),
      .max = 100000, .label = "Hybrid layer pattern",
      .doc = "a hybrid model's layers, one character each, as Megatron's "
             "--hybrid-override-pattern: `M` a Mamba-2 mixer, `*` self-attention, `-` an MLP, "
             "`E` an MoE block (`model.moe`), `G` a Gated DeltaNet mixer (`model.gdn`); as long "
             "as `layers`",
      .control = C::model},
     [](JsonReader& r, const KeyInfo& k, ModelSpec& m) {
       m.layer_pattern = r.string(k, std::string());
     },
     [](const ModelSpec& m, const KeyInfo& k, Json& out) {
       if (m.hybrid()) out[std::string(k.name)] = m.layer_pattern;
     }},
    {{.object = "model", .name = "mtp_pattern", .link = "m.mtpp", .type = V::text,
      .fallback = D::rule("none: one layer like the model's last"), .max = 64,
      .label = "MTP module pattern",
      .doc = "a hybrid model's MTP module, one `layer_pattern` symbol per layer, as Megatron's "
             "mtp_hybrid_override_pattern (Nemotron 3 Super: `*E`, attention then an MoE block)",
      .control = C::model, .needs = "model.layer_pattern"},
     [](JsonReader& r, const KeyInfo& k, ModelSpec& m) {
       m.mtp_pattern = r.string(k, std::string());
     },
     [](const ModelSpec& m, const KeyInfo& k, Json& out) {
       if (!m.mtp_pattern.empty()) out[std::string(k.name)] = m.mtp_pattern;
     }},
    {{.object = "model", .name = "mtp_repeated", .link = "m.mtpr", .type = V::boolean,
      .fallback = D::of(false), .label = "MTP modules share weights",
      .doc = "the `mtp_layers` modules run one module's parameters again and again "
             "(Megatron-Core's --mtp-use-repeated-layer; Nemotron 3 Super trains 2 so)",
      .control = C::model, .needs = "model.mtp_layers"},
     &read_member<&ModelSpec::mtp_repeated>,
     [](const ModelSpec& m, const KeyInfo& k, Json& out) {
       if (m.mtp_repeated) out[std::string(k.name)] = true;
     }},
    {{.object = "model", .name = "mamba", .link = "m.mamba", .type = V::object,
      .fallback = D::rule("Megatron's defaults, below"), .label = "Mamba mixer",
      .doc = "the Mamba-2 mixer of a hybrid pattern's `M` layers: `model.mamba` keys below",
      .control = C::model, .needs = "model.layer_pattern"},
     [](JsonReader& r, const KeyInfo& k, ModelSpec& m) {
       if (const Json* v = r.raw(k.name); v && !v->is_null()) {
         JsonReader sub(*v, r.field(k.name));
         if (sub.is_object()) read_fields(sub, mamba_fields(), m.mamba);
         r.absorb(sub.errors());
       }
     },
     [](const ModelSpec& m, const KeyInfo& k, Json& out) {
       if (m.layer_pattern.find('M') == std::string::npos) return;
       Json mamba = Json::object();
       for (const auto& f : mamba_fields())
         if (f.write) f.write(m.mamba, f.info, mamba);
       out[std::string(k.name)] = std::move(mamba);
     }},
    {{.object = "model", .name = "gdn", .link = "m.gdn", .type = V::object,
      .fallback = D::rule("Megatron's defaults, below"), .label = "Gated DeltaNet mixer",
      .doc = "the Gated DeltaNet mixer of a hybrid pattern's `G` layers (Qwen3-Next's linear "
             "attention): `model.gdn` keys below",
      .control = C::model, .needs = "model.layer_pattern"},
     [](JsonReader& r, const KeyInfo& k, ModelSpec& m) {
       if (const Json* v = r.raw(k.name); v && !v->is_null()) {
         JsonReader sub(*v, r.field(k.name));
         if (sub.is_object()) read_fields(sub, gdn_fields(), m.gdn);
         r.absorb(sub.errors());
       }
     },
     [](const ModelSpec& m, const KeyInfo& k, Json& out) {
       if (m.layer_pattern.find('G') == std::string::npos) return;
       Json gdn = Json::object();
       for (const auto& f : gdn_fields())
         if (f.write) f.write(m.gdn, f.info, gdn);
       out[std::string(k.name)] = std::move(gdn);
     }},
    {{.object = "model", .name = "source", .type = V::text, .fallback = D::absent(),
      .doc = "where the shape comes from (required in preset files)"}},
    {{.object = "model", .name = "notes", .type = V::text, .fallback = D::absent(),
      .doc = "caveats, for people"}},
    // What a newcomer should start from: a MoE model's first estimate with Megatron-Core's
    // defaults (alltoall, no EP) can be 2x its recipe's (Qwen3-30B-A3B on 16 H100: 44.7 s against
    // 29.5 s, measured 29.3 s). Read by the page, not by an estimate, like `source`: its shape is
    // checked, and each one estimated whole, by presets_test.cpp.
    {{.object = "model", .name = "recipe", .type = V::object, .fallback = D::absent(),
      .doc = "preset files: a published run of the model, {name, cluster, plan, "
             "measured_iter_time_s, source}; the page proposes its parallel layout and MoE keys "
             "when the model is picked"}},
};

// Positive whole numbers of a model's sub-objects that some models leave out (0 in the spec).
template <auto Member>
constexpr Field<typename MemberOf<Member>::spec> optional_count(KeyInfo info) {
  return {info,
          [](JsonReader& r, const KeyInfo& k, typename MemberOf<Member>::spec& s) {
            s.*Member = r.integer(k, 0);
          },
          [](const typename MemberOf<Member>::spec& s, const KeyInfo& k, Json& out) {
            if (s.*Member > 0) out[std::string(k.name)] = s.*Member;
          }};
}

constexpr Field<AttentionSpec> kAttention[] = {
    member<&AttentionSpec::type>({.object = "model.attention", .name = "type", .type = V::choice,
                                  .fallback = D::of("gqa"),
                                  .choices = enum_names<AttentionType>(),
                                  .label = "Attention type",
                                  .doc = "`gqa`: grouped-query attention over `kv_heads` heads of "
                                         "`head_dim`; `mla`: multi-head latent attention "
                                         "(DeepSeek-V2/V3), the ranks below"}),
    optional_count<&AttentionSpec::q_lora_rank>(
        {.object = "model.attention", .name = "q_lora_rank",
         .fallback = D::rule("none: queries projected from the hidden state directly"), .min = 1,
         .max = 1 << 20, .label = "Query latent rank",
         .doc = "MLA: rank of the query down-projection", .needs = "model.attention.type=mla"}),
    optional_count<&AttentionSpec::kv_lora_rank>(
        {.object = "model.attention", .name = "kv_lora_rank",
         .fallback = D::rule("required for `mla`"), .min = 1, .max = 1 << 20,
         .label = "KV latent rank", .doc = "MLA: rank of the key/value latent",
         .needs = "model.attention.type=mla"}),
    optional_count<&AttentionSpec::qk_head_dim>(
        {.object = "model.attention", .name = "qk_head_dim",
         .fallback = D::rule("required for `mla`"), .min = 1, .max = 1 << 16,
         .label = "Query/key head size",
         .doc = "MLA: per-head query/key width without the rotary part",
         .needs = "model.attention.type=mla"}),
    optional_count<&AttentionSpec::qk_rope_head_dim>(
        {.object = "model.attention", .name = "qk_rope_head_dim",
         .fallback = D::rule("required for `mla`"), .min = 1, .max = 1 << 16,
         .label = "Rotary head size",
         .doc = "MLA: per-head rotary query/key width (one rotary key shared by the heads)",
         .needs = "model.attention.type=mla"}),
    optional_count<&AttentionSpec::v_head_dim>(
        {.object = "model.attention", .name = "v_head_dim",
         .fallback = D::rule("required for `mla`"), .min = 1, .max = 1 << 16,
         .label = "Value head size", .doc = "MLA: per-head value width",
         .needs = "model.attention.type=mla"}),
    optional_count<&AttentionSpec::window>(
        {.object = "model.attention", .name = "window", .fallback = D::absent(), .min = 1,
         .max = 1 << 26, .unit = "tokens", .label = "Sliding window",
         .doc = "sliding window: keys each query attends to (GPT-OSS: 128)"}),
    member<&AttentionSpec::window_layers>(
        {.object = "model.attention", .name = "window_layers", .type = V::choice,
         .fallback = D::of("all"), .choices = enum_names<WindowLayers>(),
         .label = "Windowed layers",
         .doc = "with `window`: every layer, or alternate layers from the first (GPT-OSS)",
         .needs = "model.attention.window"}),
    optional_count<&AttentionSpec::chunk>(
        {.object = "model.attention", .name = "chunk", .fallback = D::absent(), .min = 1,
         .max = 1 << 26, .unit = "tokens", .label = "Attention chunk",
         .doc = "chunked attention: each query attends causally within its chunk of this many "
                "tokens, on every layer (Llama 4's attention_chunk_size 8192, as "
                "Megatron-Bridge's Llama4SelfAttention runs it)"}),
    member<&AttentionSpec::output_gate>(
        {.object = "model.attention", .name = "output_gate", .type = V::boolean,
         .fallback = D::of(false), .label = "Attention output gate",
         .doc = "a sigmoid gate on the attention output, projected with the queries "
                "(--attention-output-gate; Qwen3-Next)"}),
};

// Megatron-Core's GatedDeltaNet arguments (megatron/core/ssm/gated_delta_net/gdn.py;
// --linear-num-key-heads, --linear-num-value-heads, --linear-key-head-dim,
// --linear-value-head-dim, --linear-conv-kernel-dim), defaults as hybrid_flops's.
constexpr Field<GdnSpec> kGdn[] = {
    member<&GdnSpec::key_heads>({.object = "model.gdn", .name = "key_heads",
                                 .fallback = D::of(16.0), .min = 1, .max = 1 << 16,
                                 .label = "GDN key heads",
                                 .doc = "query and key heads (--linear-num-key-heads)"}),
    member<&GdnSpec::value_heads>({.object = "model.gdn", .name = "value_heads",
                                   .fallback = D::of(32.0), .min = 1, .max = 1 << 16,
                                   .label = "GDN value heads",
                                   .doc = "value heads, each with its own state "
                                          "(--linear-num-value-heads); a multiple of "
                                          "`key_heads`"}),
    member<&GdnSpec::key_head_dim>({.object = "model.gdn", .name = "key_head_dim",
                                    .fallback = D::of(128.0), .min = 1, .max = 1 << 16,
                                    .label = "GDN key head size",
                                    .doc = "channels per query and key head "
                                           "(--linear-key-head-dim)"}),
    member<&GdnSpec::value_head_dim>({.object = "model.gdn", .name = "value_head_dim",
                                      .fallback = D::of(128.0), .min = 1, .max = 1 << 16,
                                      .label = "GDN value head size",
                                      .doc = "channels per value head (--linear-value-head-dim)"}),
    member<&GdnSpec::conv_kernel>({.object = "model.gdn", .name = "conv_kernel",
                                   .fallback = D::of(4.0), .min = 1, .max = 1024,
                                   .label = "GDN conv kernel",
                                   .doc = "width of the depthwise causal conv "
                                          "(--linear-conv-kernel-dim)"}),
};

// Megatron-Core's MambaMixer arguments (megatron/core/ssm/mamba_mixer.py; --mamba-state-dim,
// --mamba-head-dim, --mamba-num-heads, --mamba-num-groups; d_conv and expand its defaults).
constexpr Field<MambaSpec> kMamba[] = {
    member<&MambaSpec::state_dim>({.object = "model.mamba", .name = "state_dim",
                                   .fallback = D::of(128.0), .min = 1, .max = 1 << 16,
                                   .label = "Mamba state size",
                                   .doc = "SSM state per head (N; --mamba-state-dim)"}),
    member<&MambaSpec::head_dim>({.object = "model.mamba", .name = "head_dim",
                                  .fallback = D::of(64.0), .min = 1, .max = 1 << 16,
                                  .label = "Mamba head size",
                                  .doc = "channels per SSM head (P; --mamba-head-dim)"}),
    optional_count<&MambaSpec::heads>(
        {.object = "model.mamba", .name = "num_heads",
         .fallback = D::rule("`expand`·`hidden` / `head_dim`"), .min = 1, .max = 1 << 20,
         .label = "Mamba heads",
         .doc = "SSM heads (--mamba-num-heads); the mixer is num_heads·head_dim wide"}),
    member<&MambaSpec::groups>({.object = "model.mamba", .name = "num_groups",
                                .fallback = D::of(8.0), .min = 1, .max = 1 << 16,
                                .label = "Mamba groups",
                                .doc = "groups of heads sharing B and C (--mamba-num-groups); "
                                       "divides `num_heads`"}),
    member<&MambaSpec::conv_kernel>({.object = "model.mamba", .name = "conv_kernel",
                                     .fallback = D::of(4.0), .min = 1, .max = 1024,
                                     .label = "Mamba conv kernel",
                                     .doc = "width of the depthwise causal conv (d_conv)"}),
    member<&MambaSpec::expand>({.object = "model.mamba", .name = "expand", .fallback = D::of(2.0),
                                .min = 1, .max = 1024, .label = "Mamba expand",
                                .doc = "mixer width over `hidden` when `num_heads` is not given"}),
};

constexpr Field<MoeSpec> kMoe[] = {
    member<&MoeSpec::experts>({.object = "model.moe", .name = "experts", .fallback = D::required(),
                               .min = 1, .max = 1 << 20, .unit = "experts",
                               .label = "Experts", .doc = "routed experts per MoE layer"}),
    member<&MoeSpec::top_k>({.object = "model.moe", .name = "top_k", .fallback = D::required(),
                             .min = 1, .max = 1 << 20, .unit = "experts", .label = "Top-k",
                             .doc = "experts each token is routed to; ≤ `experts`"}),
    member<&MoeSpec::ffn_hidden>({.object = "model.moe", .name = "ffn_hidden",
                                  .fallback = D::required(), .min = 1, .max = 1 << 26,
                                  .label = "Expert FFN size",
                                  .doc = "one routed expert's MLP width (same `ffn_type` as the "
                                         "model)"}),
    member<&MoeSpec::shared_experts>({.object = "model.moe", .name = "shared_experts",
                                      .fallback = D::of(0.0), .min = 0, .max = 1 << 10,
                                      .unit = "experts", .label = "Shared experts",
                                      .doc = "experts every token goes through"}),
    {{.object = "model.moe", .name = "shared_ffn_hidden", .fallback = D::rule("`ffn_hidden`"),
      .min = 1, .max = 1 << 26, .label = "Shared expert FFN size",
      .doc = "one shared expert's width"},
     [](JsonReader& r, const KeyInfo& k, MoeSpec& e) {
       e.shared_ffn_hidden = r.integer(k, e.ffn_hidden);
     },
     &write_member<&MoeSpec::shared_ffn_hidden>},
    member<&MoeSpec::first_dense_layers>({.object = "model.moe", .name = "first_dense_layers",
                                          .fallback = D::of(0.0), .min = 0, .max = 100000,
                                          .unit = "layers", .label = "Dense first layers",
                                          .doc = "leading layers that stay dense (model "
                                                 "`ffn_hidden`), whatever `layer_freq` says"}),
    {{.object = "model.moe", .name = "layer_freq", .type = V::integer, .fallback = D::of(1.0),
      .min = 1, .max = 100000, .label = "MoE layers",
      .doc = "an integer f (layers i with i % f = 0 are MoE) or a list of 0/1, one per layer "
             "(Megatron's --moe-layer-freq)"},
     [](JsonReader& r, const KeyInfo& k, MoeSpec& e) {
       const Json* v = r.raw(k.name);
       if (!v || !v->is_array()) {
         e.layer_freq = r.integer(k);
         return;
       }
       if (v->size() > 100000) {
         r.fail(ErrorCode::out_of_range, r.field(k.name),
                r.field(k.name) + " lists more than 100000 layers");
         return;
       }
       for (size_t i = 0; i < v->size(); ++i) {
         const Json& bit = (*v)[i];
         if (!bit.is_number_integer() || (bit.get<int64_t>() != 0 && bit.get<int64_t>() != 1)) {
           r.fail(ErrorCode::type_error, fmt::format("{}[{}]", r.field(k.name), i),
                  fmt::format("{}[{}]={} must be 0 or 1", r.field(k.name), i, echo(bit)));
           return;
         }
         e.layer_pattern.push_back(static_cast<uint8_t>(bit.get<int64_t>()));
       }
     },
     [](const MoeSpec& e, const KeyInfo& k, Json& out) {
       if (e.layer_pattern.empty()) {
         out[std::string(k.name)] = e.layer_freq;
       } else {
         Json list = Json::array();
         for (uint8_t b : e.layer_pattern) list.push_back(static_cast<int>(b));
         out[std::string(k.name)] = std::move(list);
       }
     }},
    {{.object = "model.moe", .name = "capacity_factor", .type = V::number,
      .fallback = D::rule("null: dropless"), .min = 0, .max = 1024, .min_exclusive = true,
      .label = "Capacity factor",
      .doc = "expert capacity over the balanced share; tokens past it are dropped and experts "
             "padded to it"},
     [](JsonReader& r, const KeyInfo& k, MoeSpec& e) {
       const Json* v = r.raw(k.name);
       e.capacity_factor = v && !v->is_null() ? r.number(k) : 0;
     },
     [](const MoeSpec& e, const KeyInfo& k, Json& out) {
       out[std::string(k.name)] = e.capacity_factor > 0 ? Json(e.capacity_factor) : Json(nullptr);
     }},
    optional_count<&MoeSpec::latent_size>(
        {.object = "model.moe", .name = "latent_size", .fallback = D::absent(), .min = 1,
         .max = 1 << 26, .label = "MoE latent size",
         .doc = "latent MoE (Megatron-Core's --moe-latent-size; Nemotron 3 Super: 1024): the "
                "routed experts and the token exchange work on tokens projected to this width, "
                "two projections whole on every TP rank; the router and shared experts stay on "
                "`hidden`"}),
    optional_count<&MoeSpec::router_groups>(
        {.object = "model.moe", .name = "router_groups", .fallback = D::absent(), .min = 1,
         .max = 1 << 20, .label = "Router groups",
         .doc = "group-limited routing: experts in this many groups (one per node in "
                "DeepSeek-V3's training)"}),
    optional_count<&MoeSpec::router_group_top_k>(
        {.object = "model.moe", .name = "router_group_top_k", .fallback = D::absent(), .min = 1,
         .max = 1 << 20, .label = "Groups per token",
         .doc = "groups one token may be routed to; ≤ `router_groups`",
         .needs = "model.moe.router_groups"}),
};

// The framework profiles (presets/frameworks/<id>.json); the ids are a contract.
constexpr std::string_view kFrameworks[] = {"megatron-core",      "megatron-lm-2021",
                                            "megatron-deepspeed", "deepspeed",
                                            "pytorch-fsdp",       "megatron-fsdp",
                                            "torchtitan"};
// Keys whose default is the framework profile's value.
constexpr DefaultValue kProfile = D::rule("the framework's (`plan.framework`, table below)");

constexpr Field<Plan> kPlan[] = {
    {{.object = "plan", .name = "framework", .link = "fw", .type = V::choice,
      .fallback = D::of("megatron-core"), .choices = kFrameworks, .label = "Training software",
      .doc = "the training software and how it is configured: the profile gives the defaults of "
             "the flags below (presets/frameworks/)",
      .control = C::plan},
     [](JsonReader& r, const KeyInfo& k, Plan& p) {
       p.framework = std::string(k.choices[static_cast<size_t>(r.choice(k))]);
     },
     &write_member<&Plan::framework>},
    member<&Plan::tp>({.object = "plan", .name = "tp", .link = "tp", .fallback = D::of(1.0),
                       .min = 1, .max = kHuge, .unit = "GPUs", .label = "TP",
                       .doc = "tensor parallel size: every layer's matrices split over tp "
                              "GPUs, which exchange activations twice per layer and pass "
                              "(keep them inside a node); divides `heads`, `kv_heads` and "
                              "`ffn_hidden`",
                       .control = C::plan}),
    member<&Plan::pp>({.object = "plan", .name = "pp", .link = "pp", .fallback = D::of(1.0),
                       .min = 1, .max = kHuge, .unit = "stages", .label = "PP",
                       .doc = "pipeline stages: the layers split into pp stages that "
                              "micro-batches flow through (1F1B, interleaved with vpp > 1), idle "
                              "while the pipeline fills and drains, about (pp − 1) / (vpp × "
                              "micro-batches) of the step; `pp·vpp` divides `layers` (unless "
                              "`stages`, `first_stage_layers` or `pipeline_layout` give the split)",
                       .control = C::plan}),
    {{.object = "plan", .name = "dp", .link = "dp",
      .fallback = D::rule("GPUs / (tp·pp·cp), or the replica sets' counts added up"), .min = 1,
      .max = 1 << 24, .unit = "replicas", .label = "DP",
      .doc = "data parallel size; `tp·pp·cp·dp` equals the GPU count", .control = C::plan},
     nullptr,  // derived from the cluster: read.cpp reads it
     &write_member<&Plan::dp>},
    member<&Plan::cp>({.object = "plan", .name = "cp", .link = "cp", .fallback = D::of(1.0),
                       .min = 1, .max = kHuge, .unit = "GPUs", .label = "CP",
                       .doc = "context parallel size; `2·cp` divides `seq_len`",
                       .control = C::plan}),
    member<&Plan::vpp>({.object = "plan", .name = "vpp", .link = "vpp", .fallback = D::of(1.0),
                        .min = 1, .max = 1 << 16, .unit = "chunks", .label = "VPP",
                        .doc = "model chunks per pipeline rank; > 1 is the interleaved 1F1B "
                               "schedule (needs pp > 1), 2 with `zbv` and `dualpipev`",
                        .control = C::plan}),
    {{.object = "plan", .name = "schedule", .link = "sched", .type = V::choice,
      .fallback = D::rule("`interleaved` when `vpp` > 1, else `1f1b`"),
      .choices = enum_names<PipelineSchedule>(), .label = "Pipeline schedule",
      .doc = "pipeline schedule: `1f1b` (vpp 1), `interleaved` (vpp > 1), `zero_bubble` (ZB-H1, "
             "Qi et al. 2024: weight gradients fill the drain; pp > 1, vpp 1; no Megatron-LM "
             "flag), `zbv` (ZB-V, the same paper: two chunks per rank in a V, rank i holding "
             "virtual stages i and 2pp-1-i, as PyTorch's and torchtitan's ZBVZeroBubble runs "
             "it; pp > 1, vpp 2), `dualpipev` (DeepSeek's DualPipeV, arXiv:2412.19437 and "
             "deepseek-ai/DualPipe: the same V, a forward and another micro-batch's backward "
             "paired, which `moe_overlap` lets hide the EP exchange; pp > 1, vpp 2, at least "
             "2·pp micro-batches), `dualpipe` (the bidirectional original: both ends feed "
             "half the micro-batches, rank r holding stage r of one direction and pp-1-r of "
             "the other, two copies of the parameters; an even pp, vpp 1, an even number of "
             "at least 2·pp micro-batches; estimated as DualPipeV on pp/2 ranks, whose order "
             "it is)",
      .control = C::advanced},
     [](JsonReader& r, const KeyInfo& k, Plan& p) {
       p.schedule_derived = !r.has(k.name);
       p.schedule = static_cast<PipelineSchedule>(
           r.choice(k, static_cast<int>(p.effective_schedule())));
     },
     [](const Plan& p, const KeyInfo& k, Json& out) {
       out[std::string(k.name)] = std::string(name_of(p.effective_schedule()));
     }},
    member<&Plan::ep>({.object = "plan", .name = "ep", .link = "ep", .fallback = D::of(1.0),
                       .min = 1, .max = kHuge, .unit = "GPUs", .label = "EP",
                       .doc = "expert parallel size (MoE models): divides `moe.experts`; "
                              "`etp·ep·pp` divides the GPU count",
                       .control = C::plan, .needs = "model.moe"}),
    {{.object = "plan", .name = "etp", .link = "etp", .fallback = D::rule("`tp`"), .min = 1,
      .max = kHuge, .unit = "GPUs", .label = "Expert TP",
      .doc = "tensor parallel size of the experts (MoE models); the expert data-parallel size "
             "is GPUs / (etp·ep·pp)",
      .control = C::plan, .needs = "model.moe"},
     [](JsonReader& r, const KeyInfo& k, Plan& p) { p.etp = static_cast<int>(r.integer(k, p.tp)); },
     &write_member<&Plan::etp>},
    member<&Plan::moe_dispatcher>({.object = "plan", .name = "moe_dispatcher", .link = "disp",
                                   .type = V::choice, .fallback = D::of("alltoall"),
                                   .choices = enum_names<MoeDispatcher>(),
                                   .label = "Token dispatcher",
                                   .doc = "MoE token exchange: `alltoall` (NCCL all-to-all), "
                                          "`allgather` (all-gather and reduce-scatter over "
                                          "tp·ep), `flex` (DeepEP/HybridEP: fused permute, "
                                          "tokens sent once per node)",
                                   .control = C::plan, .needs = "model.moe"}),
    member<&Plan::moe_overlap>({.object = "plan", .name = "moe_overlap", .link = "moeo",
                                .type = V::boolean, .fallback = D::of(false),
                                .label = "Overlap expert communication",
                                .doc = "all-to-alls of one micro-batch overlap the compute of "
                                       "the next (--overlap-moe-expert-parallel-comm; needs ep "
                                       "> 1, alltoall or flex, no full recompute, vpp > 1 when "
                                       "pp > 1; with `dualpipev` its paired forward and "
                                       "backward)",
                                .control = C::advanced, .needs = "model.moe"}),
    member<&Plan::moe_imbalance>({.object = "plan", .name = "moe_imbalance", .link = "imb",
                                  .type = V::number, .fallback = D::of(1.0), .min = 1,
                                  .max = 1024, .label = "Expert load imbalance",
                                  .doc = "tokens on the busiest expert over the mean (1: "
                                         "force-balanced routing, as NVIDIA's benchmarks run; "
                                         "at most min(ep, experts/top_k), what routing can put "
                                         "on one rank)",
                                  .control = C::advanced, .needs = "model.moe"}),
    member<&Plan::moe_rank_capacity>(
        {.object = "plan", .name = "moe_rank_capacity_factor", .link = "mrc", .type = V::number,
         .fallback = D::of(0.0), .min = 0, .max = 1024, .min_exclusive = false,
         .label = "Rank capacity factor",
         .doc = "each EP rank's token budget over its balanced share "
                "(--moe-expert-rank-capacity-factor, flex dispatcher): a fixed receive buffer, "
                "the token counts stay on the GPU (no per-layer host sync), tokens past it "
                "dropped; 0: none, at least 1 otherwise",
         .control = C::advanced, .needs = "model.moe"}),
    member<&Plan::micro_batch>({.object = "plan", .name = "micro_batch", .link = "mb",
                                .fallback = D::of(1.0), .min = 1, .max = 1 << 24,
                                .unit = "samples", .label = "Micro-batch",
                                .doc = "sequences per micro-batch", .control = C::plan}),
    member<&Plan::global_batch>({.object = "plan", .name = "global_batch", .link = "gbs",
                                 .fallback = D::required(), .min = 1,
                                 .max = static_cast<double>(int64_t{1} << 40),
                                 .unit = "samples", .label = "Global batch",
                                 .doc = "sequences per iteration; divisible by "
                                        "`micro_batch·dp`",
                                 .control = C::plan}),
    member<&Plan::sequence_parallel>({.object = "plan", .name = "sequence_parallel",
                                      .link = "sp", .type = V::boolean, .fallback = kProfile,
                                      .label = "Sequence parallel",
                                      .doc = "Megatron sequence parallelism: the norm and "
                                             "dropout activations split along the sequence "
                                             "inside the TP group (memory ÷ tp), TP's "
                                             "all-reduces become all-gather + reduce-scatter "
                                             "(the same bytes); no effect with tp = 1",
                                      .control = C::plan}),
    member<&Plan::recompute>({.object = "plan", .name = "recompute", .link = "rc",
                              .type = V::choice, .fallback = D::of("none"),
                              .choices = enum_names<Recompute>(), .label = "Recompute",
                              .doc = "activation recomputation: `none` keeps every activation "
                                     "for the backward; `selective` recomputes the attention "
                                     "core (Korthikanti et al. 2022: little compute, most of "
                                     "attention's memory); `full` keeps each layer's input only "
                                     "and runs its forward again in the backward (about one "
                                     "more forward)",
                              .control = C::plan}),
    read_by(member<&Plan::recompute_modules>({.object = "plan", .name = "recompute_modules",
                                      .link = "rcm", .type = V::text,
                                      .fallback = D::of("core_attn"),
                                      .label = "Recompute modules",
                                      .doc = "what `selective` recompute replays, Megatron-Core's "
                                             "names (--recompute-modules) separated by spaces or "
                                             "commas: `core_attn`, `moe_act`, `layernorm`, "
                                             "`mla_up_proj`, `mlp`, `moe`, `shared_experts`; each "
                                             "drops its activations and replays its forward; "
                                             "a JSON list of the names reads the same",
                                      .control = C::advanced}),
            [](JsonReader& r, const KeyInfo& k, Plan& p) { p.recompute_modules = r.names(k); }),
    member<&Plan::recompute_method>({.object = "plan", .name = "recompute_method", .link = "rcmt",
                                     .type = V::choice, .fallback = D::of("uniform"),
                                     .choices = enum_names<RecomputeMethod>(),
                                     .label = "Recompute method",
                                     .doc = "which layers `full` recompute checkpoints: `uniform` "
                                            "every group of `recompute_num_layers` layers (one "
                                            "group replayed at a time), `block` the first "
                                            "`recompute_num_layers` of each model chunk, the rest "
                                            "keep their activations (--recompute-method)",
                                     .control = C::advanced}),
    member<&Plan::recompute_num_layers>({.object = "plan", .name = "recompute_num_layers",
                                         .link = "rcn", .fallback = D::of(1.0), .min = 1,
                                         .max = 100000, .unit = "layers",
                                         .label = "Recompute layers",
                                         .doc = "`full` recompute's layers per group (`uniform`) "
                                                "or per model chunk (`block`); at most the "
                                                "layers of a pipeline rank "
                                                "(--recompute-num-layers)",
                                         .control = C::advanced}),
    member<&Plan::optimizer>({.object = "plan", .name = "optimizer", .link = "opt",
                              .type = V::choice, .fallback = D::of("adam"),
                              .choices = enum_names<Optimizer>(), .label = "Optimizer",
                              .doc = "`adam`: mixed-precision Adam; `muon`: Megatron-Core's Muon "
                                     "(--optimizer muon): the layers' 2-D weights keep one fp32 "
                                     "momentum and are orthogonalised whole by 5 Newton-Schulz "
                                     "iterations (TP shards gathered first), the rest "
                                     "(embeddings, output layer, norms, biases) take Adam; with "
                                     "the distributed optimizer each DP rank steps whole "
                                     "matrices (layer-wise). Megatron-Core only; no fp16, no "
                                     "ZeRO-2/3. `sgd` (--optimizer sgd): one fp32 momentum "
                                     "buffer (none at `sgd_momentum` 0 under torch.optim.SGD); "
                                     "not with Megatron-Core's distributed optimizer. "
                                     "`adafactor` (torch.optim.Adafactor, not in Megatron-LM): "
                                     "no first moment, the second factored into row and column "
                                     "means per matrix, unfactored on ZeRO/FSDP's flat shards",
                              .control = C::advanced}),
    member<&Plan::sgd_momentum>({.object = "plan", .name = "sgd_momentum", .link = "sgdm",
                                 .type = V::number, .fallback = D::of(0.9), .min = 0,
                                 .max = 0.999, .label = "SGD momentum",
                                 .doc = "SGD's momentum factor (--sgd-momentum); 0: plain SGD, "
                                        "whose torch.optim.SGD keeps no buffer (Megatron's "
                                        "fused SGD keeps one anyway). Read under `optimizer` "
                                        "sgd only",
                                 .control = C::advanced, .needs = "plan.optimizer=sgd"}),
    member<&Plan::distributed_optimizer>({.object = "plan", .name = "distributed_optimizer",
                                          .link = "do", .type = V::boolean,
                                          .fallback = kProfile,
                                          .label = "Distributed optimizer",
                                          .doc = "shard optimizer states over DP×CP (ZeRO-1)",
                                          .control = C::plan}),
    member<&Plan::zero_stage>({.object = "plan", .name = "zero_stage", .link = "zero",
                               .fallback = kProfile, .min = 0, .max = 3, .label = "ZeRO stage",
                               .doc = "1 = distributed optimizer, 2 = also gradients, 3 = also "
                                      "parameters (FSDP-style per-layer gathers)",
                               .control = C::advanced}),
    member<&Plan::zero3_prefetch>(
        {.object = "plan", .name = "zero3_prefetch", .link = "z3p", .fallback = D::of(1.0),
         .min = 0, .max = 64, .unit = "modules", .label = "ZeRO-3 prefetch",
         .doc = "ZeRO-3 / FSDP: fetch units (layers, or DeepSpeed's sub-modules) whose "
                "parameters are gathered while an earlier one computes; 0: each gather waits "
                "for the compute before it. FSDP's backward_prefetch BACKWARD_PRE and "
                "forward_prefetch, FSDP2's implicit prefetch: 1; DeepSpeed: "
                "stage3_prefetch_bucket_size over a module's parameters. Each one ahead holds "
                "one more gathered layer in memory (per-layer gathers)",
         .control = C::advanced}),
    // Why 3 %: the report's `other` already allows 2 GiB and 5 % of the tensors for the CUDA
    // context, NCCL buffers and fragmentation (presets/calibration.json); beyond that a plan is
    // within the memory model's error of the edge. Of the validation runs that ran on software
    // whose memory the engine models closely (SC21, KORTH, MCORE, MBSKILL, LLMFOUNDRY, SIMUMAX),
    // the fullest is predicted at 97 % of its GPU (LLM Foundry's MPT-7b on 8 H100s): a larger
    // default would call a published run out of memory (memory_test.cpp checks both).
    member<&Plan::memory_headroom>({.object = "plan", .name = "memory_headroom", .link = "hr",
                                    .type = V::number, .fallback = D::of(0.03), .min = 0,
                                    .max = 0.5, .label = "Memory headroom",
                                    .doc = "share of each GPU's memory a plan must leave free to "
                                           "fit (the fit verdict and the search); allocator spikes "
                                           "the model does not count",
                                    .control = C::advanced}),
    member<&Plan::expandable_segments>(
        {.object = "plan", .name = "expandable_segments", .link = "xs", .type = V::boolean,
         .fallback = D::of(false), .label = "Expandable segments",
         .doc = "PyTorch's allocator gives its cache back before it runs out "
                "(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)",
         .control = C::advanced}),
    member<&Plan::dummy_wgrads>(
        {.object = "plan", .name = "dummy_wgrads", .link = "dwg", .type = V::boolean,
         .fallback = kProfile, .label = "Cached dummy wgrads",
         .doc = "Transformer Engine >= 2.3 caches a dummy weight gradient per weight shape; "
                "false for TE 1.x",
         .control = C::advanced}),
    member<&Plan::precision>({.object = "plan", .name = "precision", .link = "prec",
                              .type = V::choice, .fallback = D::of("bf16"),
                              .choices = enum_names<Precision>(), .label = "Precision",
                              .doc = "number format of the GEMMs: bf16 and fp16 keep fp32 master "
                                     "weights; fp8 and mxfp8 run the GEMMs in 8 bits "
                                     "(Transformer Engine) and attention in bf16, nvfp4 in 4 "
                                     "bits; the peak is the GPU's at it, so the GPU must have it",
                              .control = C::plan}),
    member<&Plan::flash_attention>({.object = "plan", .name = "flash_attention", .link = "fa",
                                    .type = V::boolean, .fallback = kProfile,
                                    .label = "FlashAttention",
                                    .doc = "fused attention (no s×s scores stored); false for "
                                           "2021–22 Megatron",
                                    .control = C::advanced}),
    member<&Plan::overlap_grad_reduce>({.object = "plan", .name = "overlap_grad_reduce",
                                        .link = "ogr", .type = V::boolean,
                                        .fallback = kProfile, .label = "Overlap grad reduce",
                                        .doc = "DP gradient buckets overlap the last backward",
                                        .control = C::advanced}),
    member<&Plan::overlap_param_gather>({.object = "plan", .name = "overlap_param_gather",
                                         .link = "opg", .type = V::boolean,
                                         .fallback = kProfile,
                                         .label = "Overlap param gather",
                                         .doc = "distributed-optimizer parameter all-gather "
                                                "overlaps the next forward (needs "
                                                "overlap_grad_reduce; no effect unsharded)",
                                         .control = C::advanced}),
    member<&Plan::tp_comm_overlap>({.object = "plan", .name = "tp_comm_overlap", .link = "tpo",
                                    .type = V::boolean, .fallback = kProfile,
                                    .label = "TP comm overlap",
                                    .doc = "Transformer Engine overlaps TP collectives with "
                                           "GEMMs (needs sequence_parallel; no effect with tp "
                                           "= 1)",
                                    .control = C::advanced}),
    member<&Plan::overlap_p2p>({.object = "plan", .name = "overlap_p2p", .link = "op2p",
                                .type = V::boolean, .fallback = kProfile,
                                .label = "Overlap p2p",
                                .doc = "the interleaved schedule overlaps send/recv with "
                                       "compute (no effect with vpp = 1)",
                                .control = C::advanced}),
    member<&Plan::grad_reduce_in_fp32>({.object = "plan", .name = "grad_reduce_in_fp32",
                                        .link = "gr32", .type = V::boolean,
                                        .fallback = kProfile, .label = "Grad reduce in fp32",
                                        .doc = "bf16/fp8 training reduces fp32 main gradients "
                                               "(Megatron default)",
                                        .control = C::advanced}),
    member<&Plan::bf16_moments>({.object = "plan", .name = "bf16_moments", .link = "bfm",
                                 .type = V::boolean, .fallback = D::of(false),
                                 .label = "Adam moments in bf16",
                                 .doc = "the optimizer keeps Adam's two moments in bf16 beside "
                                        "fp32 master weights (Megatron-Core's "
                                        "--use-precision-aware-optimizer with --exp-avg-dtype "
                                        "and --exp-avg-sq-dtype bf16): 8 bytes of optimizer "
                                        "state per parameter instead of 12",
                                 .control = C::advanced}),
    member<&Plan::master_weights>(
        {.object = "plan", .name = "master_weights", .link = "mw", .type = V::choice,
         .fallback = D::of("fp32"), .choices = enum_names<MasterWeights>(),
         .label = "Master weights",
         .doc = "the optimizer's master copy of 16-bit weights: `fp32` (4 bytes a parameter), "
                "`remainders` (the 16 low bits completing each bf16 weight to fp32: 2 bytes; "
                "Apex's DistributedFusedAdam store_param_remainders, as NeMo sets it for a bf16 "
                "model with an fp32 optimizer) or `none` (the optimizer steps the 16-bit "
                "weights: NeMo's optim.dtype equal to the model's); Adam only",
         .control = C::advanced}),
    member<&Plan::pp_scatter_gather>({.object = "plan", .name = "pp_scatter_gather",
                                      .link = "ppsg", .type = V::boolean,
                                      .fallback = kProfile, .label = "PP scatter/gather",
                                      .doc = "Megatron-LM 2.x: send 1/tp of each activation "
                                             "between stages and all-gather it on arrival (SC21 "
                                             "§4.1)",
                                      .control = C::advanced}),
    member<&Plan::fp8_param_gather>({.object = "plan", .name = "fp8_param_gather", .link = "fpg",
                                     .type = V::boolean, .fallback = kProfile,
                                     .label = "FP8 parameter gather",
                                     .doc = "fp8/mxfp8 training keeps fp8 parameters and the "
                                            "distributed optimizer gathers them in fp8",
                                     .control = C::advanced}),
    member<&Plan::cuda_graphs>({.object = "plan", .name = "cuda_graphs", .link = "cg",
                                .type = V::boolean, .fallback = kProfile, .label = "CUDA graphs",
                                .doc = "kernels launched from captured CUDA graphs "
                                       "(--cuda-graph-impl): the CPU no longer launches them one "
                                       "by one",
                                .control = C::advanced}),
    member<&Plan::cross_entropy_fusion>(
        {.object = "plan", .name = "cross_entropy_fusion", .link = "cef", .type = V::choice,
         .fallback = D::of("none"), .choices = enum_names<CrossEntropyFusion>(),
         .label = "Cross-entropy fusion",
         .doc = "the loss kernel (--cross-entropy-loss-fusion, --cross-entropy-fusion-impl): "
                "`none` and `native` keep the softmax in fp32 for the backward (4 bytes a "
                "logit), `te` (Transformer Engine's kernel through TE 2.17) the gradient over "
                "the 16-bit logits in place (2 bytes)",
         .control = C::advanced}),
    member<&Plan::hidden_dropout>({.object = "plan", .name = "hidden_dropout", .link = "hd",
                                   .type = V::number, .fallback = kProfile, .min = 0, .max = 0.99,
                                   .label = "Hidden dropout",
                                   .doc = "dropout probability of the embedding and after each "
                                          "attention and MLP block (--hidden-dropout); above 0 "
                                          "each keeps a 1-byte mask per element for the backward",
                                   .control = C::advanced}),
    member<&Plan::cpu_offloading_num_layers>(
        {.object = "plan", .name = "cpu_offloading_num_layers", .link = "col",
         .fallback = D::of(0.0), .min = 0, .max = 100000, .unit = "layers",
         .label = "Offloaded layers",
         .doc = "layers whose activations wait in host memory between their forward and "
                "backward, copied over the node's host link while the next layer computes "
                "(Megatron-Core's --cpu-offloading --cpu-offloading-num-layers): fewer than the "
                "model's layers, with no pipeline and no recompute",
         .control = C::advanced}),
    read_by(member<&Plan::offload_modules>(
                {.object = "plan", .name = "offload_modules", .link = "ofm", .type = V::text,
                 .fallback = D::of(""), .label = "Offloaded modules",
                 .doc = "modules whose saved activations every layer copies to host memory "
                        "after their forward and back before their backward, over the node's "
                        "host link beside the compute (Megatron-Core's --fine-grained-"
                        "activation-offloading --offload-modules), names separated by spaces or "
                        "commas: `attn_norm`, `qkv_linear`, `core_attn`, `attn_proj` (with "
                        "`core_attn`), `mlp_norm`, `expert_fc1`, `moe_act` (MoE models); a JSON "
                        "list of the names reads the same; empty: none",
                 .control = C::advanced}),
            [](JsonReader& r, const KeyInfo& k, Plan& p) { p.offload_modules = r.names(k); }),
    member<&Plan::optimizer_cpu_offload>(
        {.object = "plan", .name = "optimizer_cpu_offload", .link = "oco", .type = V::boolean,
         .fallback = D::of(false), .label = "Optimizer on the CPU",
         .doc = "a share of the optimizer (plan.optimizer_offload_fraction) keeps its fp32 "
                "master weights and moments in host memory and steps on the CPU; its gradients "
                "cross the node's host link to it and the updated weights back (Megatron-Core's "
                "--optimizer-cpu-offload: Adam or SGD, fp32 moments, no ZeRO-2/3)",
         .control = C::advanced}),
    member<&Plan::optimizer_offload_fraction>(
        {.object = "plan", .name = "optimizer_offload_fraction", .link = "oof",
         .type = V::number, .fallback = D::of(1.0), .min = 0, .max = 1,
         .label = "Optimizer share on the CPU",
         .doc = "the share of each GPU's optimizer parameters stepped on the CPU under "
                "plan.optimizer_cpu_offload (--optimizer-offload-fraction), 0 to 1",
         .control = C::advanced}),
    member<&Plan::overlap_cpu_optimizer_d2h_h2d>(
        {.object = "plan", .name = "overlap_cpu_optimizer_d2h_h2d", .link = "ocd",
         .type = V::boolean, .fallback = D::of(false), .label = "Overlap CPU optimizer copies",
         .doc = "under plan.optimizer_cpu_offload the gradients' copies to the host, the CPU "
                "step and the weights' copies back run pipelined, one parameter after another "
                "(--overlap-cpu-optimizer-d2h-h2d); off, one after the other",
         .control = C::advanced}),
    {{.object = "plan", .name = "first_stage_layers",
                                       .link = "fsl", .fallback = D::rule("the even share"),
                                       .min = 1, .max = 100000, .unit = "layers",
                                       .label = "Layers on the first stage",
                                       .doc = "transformer layers of pipeline stage 0 "
                                              "(--decoder-first-pipeline-num-layers), over its "
                                              "vpp chunks; the rest split evenly. On the V "
                                              "(`zbv`, `dualpipev`) rank 0 holds the model's "
                                              "first and last chunks",
                                       .control = C::advanced},
     [](JsonReader& r, const KeyInfo& k, Plan& p) { p.first_stage_layers = r.integer(k, 0); },
     &write_member<&Plan::first_stage_layers>},
    {{.object = "plan", .name = "last_stage_layers",
                                      .link = "lsl", .fallback = D::rule("the even share"),
                                      .min = 1, .max = 100000, .unit = "layers",
                                      .label = "Layers on the last stage",
                                      .doc = "transformer layers of the last pipeline stage "
                                             "(--decoder-last-pipeline-num-layers), over its vpp "
                                             "chunks; on the V (`zbv`, `dualpipev`) the last "
                                             "rank holds the middle of the model, where the V "
                                             "turns",
                                      .control = C::advanced},
     [](JsonReader& r, const KeyInfo& k, Plan& p) { p.last_stage_layers = r.integer(k, 0); },
     &write_member<&Plan::last_stage_layers>},
    member<&Plan::embedding_in_split>({.object = "plan", .name = "embedding_in_split",
                                       .link = "eis", .type = V::boolean, .fallback = D::of(false),
                                       .label = "Embedding counts as a layer",
                                       .doc = "the input embedding takes a layer's place in the "
                                              "pipeline split "
                                              "(--account-for-embedding-in-pipeline-split)",
                                       .control = C::advanced}),
    member<&Plan::loss_in_split>({.object = "plan", .name = "loss_in_split", .link = "lis",
                                  .type = V::boolean, .fallback = D::of(false),
                                  .label = "Loss counts as a layer",
                                  .doc = "the output layer and loss take a layer's place in the "
                                         "pipeline split "
                                         "(--account-for-loss-in-pipeline-split)",
                                  .control = C::advanced}),
    {{.object = "plan", .name = "pipeline_layout", .link = "ppl", .type = V::text,
      .fallback = D::absent(), .label = "Pipeline layout",
      .doc = "Megatron's --pipeline-model-parallel-layout: each virtual stage's blocks, `|` "
             "between stages, `E` embedding, `t` layer, `m` MTP module, `L` loss, `t*3` and "
             "`(tt|)*30` repeats (DeepSeek-V3: \"Et|(tt|)*30mL\"); pp·vpp stages",
      .control = C::advanced},
     &read_member<&Plan::pipeline_layout>,
     [](const Plan& p, const KeyInfo& k, Json& out) {
       if (!p.pipeline_layout.empty()) out[std::string(k.name)] = p.pipeline_layout;
     }},
    member<&Plan::rank_order>({.object = "plan", .name = "rank_order", .link = "ro",
                               .type = V::text, .fallback = D::of("tp-cp-ep-dp-pp"),
                               .label = "Rank order",
                               .doc = "how Megatron-Core numbers ranks, innermost first: tp, cp, "
                                      "ep, dp and pp once each, joined by `-` "
                                      "(`tp-cp-ep-pp-dp` is --use-tp-pp-dp-mapping); consecutive "
                                      "ranks share a node. One cluster group only; with pp not "
                                      "last, the expert data-parallel size must equal dp",
                               .control = C::advanced}),
    {{.object = "plan", .name = "stages", .link = "stages", .type = V::list,
      .fallback = D::rule("pp stages of layers/pp each; on several groups, stages in rank order "
                          "on the groups that hold their GPUs"),
      .doc = "per pipeline stage `{group, layers}`: where it runs and how many layers it holds "
             "(below)",
      .control = C::placement}},
    {{.object = "plan", .name = "replicas", .link = "replicas", .type = V::list,
      .fallback = D::absent(),
      .doc = "sets of data-parallel replicas `{group, count, micro_batches}` on groups (below)",
      .control = C::placement}},
};

constexpr KeyInfo kScenario[] = {
    {.object = "scenario", .name = "model", .link = "model", .type = V::reference,
     .fallback = D::required(), .label = "Model",
     .doc = "what is trained: a model preset id (`stepcast presets models`) or a model object "
            "of your own (keys below); its parameters follow from the layers, hidden size, "
            "heads, FFN size and vocabulary",
     .control = C::model},
    {.object = "scenario", .name = "cluster", .type = V::object, .fallback = D::required(),
     .doc = "a node preset and count, an explicit group, or `{\"groups\": [group]}`",
     .control = C::cluster},
    {.object = "scenario", .name = "plan", .type = V::object, .fallback = D::required(),
     .doc = "the parallel plan", .control = C::plan},
    {.object = "scenario", .name = "seq_len", .link = "seq", .fallback = D::rule("the model's"),
     .min = 1, .max = 1 << 26, .unit = "tokens", .label = "Sequence length",
     .doc = "sequence length of training samples (overrides `model.seq_len`)",
     .control = C::plan},
    {.object = "scenario", .name = "name", .link = "name", .type = V::text,
     .fallback = D::absent(), .max = kMaxNameBytes, .doc = "free text, ignored by the engine"},
    {.object = "scenario", .name = "calibration", .link = "cal", .type = V::object,
     .fallback = D::absent(),
     .doc = "this cluster as measured: fitted links, and measured runs or the factors fitted "
            "from them (keys below)"},
};

// A calibration: what was measured on the cluster (engine/src/calibration/calibrate.cpp).
constexpr KeyInfo kCalibration[] = {
    {.object = "calibration", .name = "intra_node_link", .type = V::reference,
     .fallback = D::absent(),
     .doc = "replaces every group's scale-up fabric: a link object (`stepcast calibrate "
            "--nccl-tests`) or id, scope `intra_node`"},
    {.object = "calibration", .name = "inter_node_link", .type = V::reference,
     .fallback = D::absent(),
     .doc = "replaces every group's network port: a link object or id, scope `inter_node`"},
    {.object = "calibration", .name = "gemm", .type = V::object, .fallback = D::absent(),
     .doc = "GEMM efficiencies and overhead fitted to a benchmark table (`stepcast calibrate "
            "--gemm`; keys below): replace the presets' for the cluster's GPUs"},
    {.object = "calibration", .name = "layer_profiles", .type = V::list, .fallback = D::absent(),
     .doc = "measured layer times on the cluster's GPUs (below), at most 64: replace the "
            "roofline's where a stage's GPU and the plan's shape match"},
    {.object = "calibration", .name = "runs", .type = V::list, .fallback = D::absent(),
     .doc = "measured iterations on this cluster `{plan | scenario | link, "
            "measured_iteration_s}` (below), at most 16; fits the scales"},
    {.object = "calibration", .name = "memory", .type = V::object, .fallback = D::absent(),
     .doc = "the peak memory measured on one GPU running this plan (keys below): fits the "
            "allocator's share and what the software holds beyond the engine's count"},
    {.object = "calibration", .name = "compute_scale", .type = V::number, .fallback = D::of(1.0),
     .min = 0.05, .max = 20,
     .doc = "multiplies the compute efficiencies of the cluster's GPUs (and divides their fixed "
            "kernel, layer and MoE host times); fitted from `runs` when they are given",
     .needs = "calibration"},
    {.object = "calibration", .name = "network_scale", .type = V::number, .fallback = D::of(1.0),
     .min = 0.01, .max = 100,
     .doc = "multiplies every link's bus bandwidth (and half-peak size: the same fill time); "
            "fitted from `runs` that differ in communication",
     .needs = "calibration"},
};

constexpr KeyInfo kCalibrationGemm[] = {
    {.object = "calibration.gemm", .name = "gemm_efficiency", .type = V::number,
     .fallback = D::rule("the preset's"), .min = 0, .max = 1, .min_exclusive = true,
     .doc = "fraction of the 16-bit dense peak large GEMMs reach"},
    {.object = "calibration.gemm", .name = "fp8_gemm_efficiency", .type = V::number,
     .fallback = D::rule("the preset's"), .min = 0, .max = 1, .min_exclusive = true,
     .doc = "the same for fp8 and mxfp8 GEMMs"},
    {.object = "calibration.gemm", .name = "fp4_gemm_efficiency", .type = V::number,
     .fallback = D::rule("the preset's"), .min = 0, .max = 1, .min_exclusive = true,
     .doc = "the same for nvfp4 GEMMs"},
    {.object = "calibration.gemm", .name = "gemm_overhead_us", .type = V::number,
     .fallback = D::rule("the preset's"), .min = 0, .max = 1e4, .unit = "µs",
     .doc = "fixed time per GEMM kernel (launch, wave tail)", .scale = 1e-6},
};

// torch.cuda.max_memory_allocated() and max_memory_reserved() on the fullest GPU, in GiB.
constexpr KeyInfo kCalibrationMemory[] = {
    {.object = "calibration.memory", .name = "peak_allocated_gib", .type = V::number,
     .fallback = D::required(), .min = 0, .max = 1e4, .min_exclusive = true, .unit = "GiB",
     .doc = "torch.cuda.max_memory_allocated() on the fullest GPU"},
    {.object = "calibration.memory", .name = "peak_reserved_gib", .type = V::number,
     .fallback = D::rule("none: the allocator's share stays the preset's"), .min = 0,
     .max = 1e4, .min_exclusive = true, .unit = "GiB",
     .doc = "torch.cuda.max_memory_reserved() on the same GPU"},
};

constexpr std::string_view kProfileLayers[] = {"all", "dense", "moe"};
constexpr KeyInfo kCalibrationLayer[] = {
    {.object = "calibration.layer_profiles[]", .name = "gpu", .type = V::text,
     .fallback = D::required(),
     .doc = "the id of the cluster's GPU that was profiled"},
    {.object = "calibration.layer_profiles[]", .name = "micro_batch", .fallback = D::required(),
     .min = 1, .max = 1 << 20, .doc = "the micro-batch size profiled"},
    {.object = "calibration.layer_profiles[]", .name = "seq_len", .fallback = D::rule(
     "the scenario's"), .min = 1, .max = 1 << 26, .unit = "tokens",
     .doc = "the sequence length profiled"},
    {.object = "calibration.layer_profiles[]", .name = "tp", .fallback = D::of(1.0), .min = 1,
     .max = 1024, .doc = "the tensor-parallel size profiled"},
    {.object = "calibration.layer_profiles[]", .name = "cp", .fallback = D::of(1.0), .min = 1,
     .max = 1024, .doc = "the context-parallel size profiled"},
    {.object = "calibration.layer_profiles[]", .name = "layers", .type = V::choice,
     .fallback = D::of("all"), .choices = kProfileLayers,
     .doc = "the layers profiled: all, or a model's dense or MoE ones"},
    {.object = "calibration.layer_profiles[]", .name = "forward_s", .type = V::number,
     .fallback = D::required(), .min = 0, .max = 1e3, .min_exclusive = true, .unit = "s",
     .doc = "one layer's forward kernels per micro-batch, without its communication"},
    {.object = "calibration.layer_profiles[]", .name = "backward_s", .type = V::number,
     .fallback = D::required(), .min = 0, .max = 1e3, .min_exclusive = true, .unit = "s",
     .doc = "its backward kernels (input and weight gradients), without recompute"},
};

constexpr KeyInfo kCalibrationRun[] = {
    {.object = "calibration.runs[]", .name = "plan", .type = V::object, .fallback = D::absent(),
     .doc = "the plan that ran, on this scenario's model and cluster (one of plan, scenario, "
            "link)"},
    {.object = "calibration.runs[]", .name = "scenario", .type = V::object,
     .fallback = D::absent(),
     .doc = "the scenario that ran; without `cluster` or `model`, this scenario's; its GPUs must "
            "be this cluster's"},
    {.object = "calibration.runs[]", .name = "link", .type = V::text, .fallback = D::absent(),
     .doc = "a Stepcast link to the scenario that ran"},
    {.object = "calibration.runs[]", .name = "measured_iteration_s", .type = V::number,
     .fallback = D::required(), .min = 0, .max = 1e7, .min_exclusive = true, .unit = "s",
     .doc = "the measured time of one training iteration (steady state)"},
};

constexpr KeyInfo kCluster[] = {
    {.object = "cluster", .name = "node", .link = "node", .type = V::text,
     .fallback = D::absent(), .label = "Node",
     .doc = "a node preset id (`stepcast presets nodes`): the GPU, the scale-up fabric between "
            "the node's GPUs, the network port and the NICs in one",
     .control = C::cluster},
    {.object = "cluster", .name = "nodes", .link = "nodes", .fallback = D::required(), .min = 1,
     .max = kHuge, .unit = "nodes", .label = "Nodes",
     .doc = "servers in the cluster (or the group); GPUs = nodes × GPUs per node",
     .control = C::cluster},
    {.object = "cluster", .name = "gpu", .link = "gpu", .type = V::reference,
     .fallback = D::required(), .label = "GPU",
     .doc = "without `node`: a GPU preset id or a GPU object (keys below)",
     .control = C::cluster},
    {.object = "cluster", .name = "gpus_per_node", .link = "gpn", .fallback = D::required(),
     .min = 1, .max = 4096, .unit = "GPUs", .label = "GPUs per node",
     .doc = "without `node`: devices per node", .control = C::cluster},
    {.object = "cluster", .name = "intra_node_link", .link = "intra", .type = V::reference,
     .fallback = D::required(), .label = "Intra-node link",
     .doc = "without `node`: scale-up fabric (NVLink, xGMI, PCIe), a link id or object of scope "
            "`intra_node`",
     .control = C::cluster},
    {.object = "cluster", .name = "inter_node_link", .link = "inter", .type = V::reference,
     .fallback = D::required(), .label = "Inter-node link",
     .doc = "without `node`: network port type (IB, RoCE, Ethernet), scope `inter_node`",
     .control = C::cluster},
    {.object = "cluster", .name = "nics_per_node", .link = "nics",
     .fallback = D::rule("`gpus_per_node`"), .min = 1, .max = 4096, .unit = "NICs",
     .label = "NICs per node", .doc = "without `node`: network ports per node",
     .control = C::cluster},
    {.object = "cluster", .name = "host_link_GBps_per_dir", .link = "hl", .type = V::number,
     .fallback = D::rule("the node preset's; not stated without `node`"), .min = 0,
     .max = 10000, .unit = "GB/s", .label = "Host link",
     .doc = "without `node`: each GPU's link to host memory, GB/s per direction (PCIe 4.0 x16 "
            "31.5, PCIe 5.0 x16 63, NVLink-C2C 450): what activation offloading's copies cross",
     .scale = 1e9},
    {.object = "cluster", .name = "groups", .link = "groups", .type = V::list,
     .fallback = D::absent(), .label = "Groups of nodes",
     .doc = "a heterogeneous cluster: pools of different nodes (say A100 and H100 servers), "
            "each `{node, nodes}` or an explicit group as above; the plan says where each "
            "pipeline stage (`plan.stages`) or data-parallel replica (`plan.replicas`) runs, and "
            "uses each group's GPUs exactly",
     .control = C::cluster},
    {.object = "cluster", .name = "inter_group_link", .link = "igl", .type = V::reference,
     .fallback = D::rule("the slowest of the groups' own networks"),
     .label = "Link between the groups",
     .doc = "with `groups`: the network between groups, scope `inter_node`",
     .control = C::cluster},
};

constexpr KeyInfo kStage[] = {
    {.object = "plan.stages[]", .name = "group", .fallback = D::of(0.0), .min = 0,
     .max = 1 << 16, .doc = "index into `cluster.groups`", .control = C::placement},
    {.object = "plan.stages[]", .name = "layers",
     .fallback = D::rule("\"auto\": balanced by stage speed within each stage's memory"),
     .min = 1, .max = 100000, .unit = "layers",
     .doc = "transformer layers of the stage (all its virtual chunks), a multiple of `vpp`, or "
            "\"auto\"",
     .control = C::placement},
};

constexpr KeyInfo kReplica[] = {
    {.object = "plan.replicas[]", .name = "group", .fallback = D::of(0.0), .min = 0,
     .max = 1 << 16, .doc = "index into `cluster.groups`", .control = C::placement},
    {.object = "plan.replicas[]", .name = "count", .fallback = D::of(1.0), .min = 1,
     .max = 1 << 24, .unit = "replicas", .doc = "replicas in the set (each a whole pipeline)",
     .control = C::placement},
    {.object = "plan.replicas[]", .name = "micro_batches",
     .fallback = D::rule("\"auto\": in proportion to replica speed"), .min = 1,
     .max = static_cast<double>(int64_t{1} << 40), .unit = "micro-batches",
     .doc = "micro-batches per replica per iteration, or \"auto\"", .control = C::placement},
};

constexpr Field<GpuSpec> kGpu[] = {
    {{.object = "gpu", .name = "id", .type = V::text, .fallback = D::absent(),
      .doc = "preset id (preset files)"},
     &read_member<&GpuSpec::id>, nullptr},
    {{.object = "gpu", .name = "name", .type = V::text,
      .fallback = D::rule("the id, or \"custom GPU\""), .label = "GPU name",
      .doc = "the marketing name", .control = C::cluster},
     [](JsonReader& r, const KeyInfo& k, GpuSpec& g) {
       g.name = r.string(k, g.id.empty() ? std::string("custom GPU") : g.id);
     },
     &write_member<&GpuSpec::name>},
    {{.object = "gpu", .name = "vendor", .type = V::text, .fallback = D::absent(),
      .doc = "for people"}},
    member<&GpuSpec::arch>({.object = "gpu", .name = "arch", .type = V::text,
                            .fallback = D::of("unknown"), .label = "Architecture",
                            .doc = "family (`ampere`, `hopper`, `blackwell`, ...): selects the "
                                   "calibration constants",
                            .control = C::cluster}),
    member<&GpuSpec::memory_bytes>({.object = "gpu", .name = "memory_gib", .type = V::number,
                                    .fallback = D::required(), .min = 1e-3, .max = 1 << 20,
                                    .unit = "GiB", .label = "Memory",
                                    .doc = "memory capacity per device", .control = C::cluster,
                                    .scale = GiB}),
    member<&GpuSpec::memory_bandwidth_Bps>({.object = "gpu", .name = "memory_bandwidth_GBps",
                                            .type = V::number, .fallback = D::required(),
                                            .min = 1e-3, .max = kMaxBandwidth, .unit = "GB/s",
                                            .label = "Memory bandwidth",
                                            .doc = "peak memory bandwidth (10^9 bytes/s)",
                                            .control = C::cluster, .scale = 1e9}),
    {{.object = "gpu", .name = "peak_tflops", .type = V::object, .fallback = D::required(),
      .unit = "TFLOP/s", .doc = "dense (no sparsity) peak per precision (keys below)",
      .control = C::cluster}},
    member<&GpuSpec::scaleup_Bps_per_dir>({.object = "gpu", .name = "scaleup_GBps_per_dir",
                                           .type = V::number, .fallback = D::of(0.0), .min = 0,
                                           .max = kMaxBandwidth, .unit = "GB/s",
                                           .doc = "scale-up bandwidth per GPU per direction; 0 "
                                                  "when none",
                                           .scale = 1e9}),
    member<&GpuSpec::sm_count>({.object = "gpu", .name = "sm_count", .type = V::number,
                                .fallback = D::of(0.0), .min = 0, .max = 1 << 16,
                                .unit = "SMs",
                                .doc = "streaming multiprocessors (compute units): the waves a "
                                       "GEMM's tiles run in; 0 when not stated"}),
    {{.object = "gpu", .name = "tdp_w", .type = V::number, .fallback = D::absent(), .unit = "W",
      .doc = "board power, for people"}},
    {{.object = "gpu", .name = "measured", .type = V::object, .fallback = D::absent(),
      .doc = "published microbenchmarks: `gemm_tflops` per precision (the maximum achievable "
             "matmul rate: the GEMM shape model's ceiling, capped at the peak, and the "
             "calibration's bound), `memory_bandwidth_GBps`"}},
    {{.object = "gpu", .name = "source", .type = V::text, .fallback = D::absent(),
      .doc = "datasheet(s) the figures come from"}},
    {{.object = "gpu", .name = "confidence", .type = V::text, .fallback = D::absent(),
      .doc = "`high`, `medium` or `low`: a `low` GPU's estimates say so in a warning"},
     &read_member<&GpuSpec::confidence>, nullptr},
    {{.object = "gpu", .name = "notes", .type = V::text, .fallback = D::absent(),
      .doc = "caveats"}},
};

constexpr KeyInfo kPeaks[] = {
    {.object = "gpu.peak_tflops", .name = "fp32", .type = V::number, .fallback = D::absent(),
     .min = kMinTflops, .max = kMaxTflops, .unit = "TFLOP/s", .label = "Peak fp32",
     .doc = "vector (non-tensor) fp32", .control = C::cluster, .scale = 1e12},
    {.object = "gpu.peak_tflops", .name = "tf32", .type = V::number, .fallback = D::absent(),
     .min = kMinTflops, .max = kMaxTflops, .unit = "TFLOP/s", .doc = "tensor-core tf32",
     .scale = 1e12},
    {.object = "gpu.peak_tflops", .name = "fp16", .type = V::number, .fallback = D::absent(),
     .min = kMinTflops, .max = kMaxTflops, .unit = "TFLOP/s", .label = "Peak fp16",
     .doc = "fp16 with fp32 accumulate", .control = C::cluster, .scale = 1e12},
    {.object = "gpu.peak_tflops", .name = "bf16", .type = V::number, .fallback = D::absent(),
     .min = kMinTflops, .max = kMaxTflops, .unit = "TFLOP/s", .label = "Peak bf16",
     .doc = "bf16 with fp32 accumulate", .control = C::cluster, .scale = 1e12},
    {.object = "gpu.peak_tflops", .name = "fp8", .type = V::number, .fallback = D::absent(),
     .min = kMinTflops, .max = kMaxTflops, .unit = "TFLOP/s", .label = "Peak fp8",
     .doc = "fp8 (E4M3/E5M2) with per-tensor scales", .control = C::cluster, .scale = 1e12},
    {.object = "gpu.peak_tflops", .name = "mxfp8", .type = V::number, .fallback = D::absent(),
     .min = kMinTflops, .max = kMaxTflops, .unit = "TFLOP/s", .label = "Peak mxfp8",
     .doc = "MXFP8: fp8 in 32-element blocks with an 8-bit scale each (Blackwell)",
     .control = C::cluster, .scale = 1e12},
    {.object = "gpu.peak_tflops", .name = "nvfp4", .type = V::number, .fallback = D::absent(),
     .min = kMinTflops, .max = kMaxTflops, .unit = "TFLOP/s", .label = "Peak nvfp4",
     .doc = "NVFP4: 4-bit values in 16-element blocks with fp8 scales (Blackwell)",
     .control = C::cluster, .scale = 1e12},
};

constexpr Field<LinkSpec> kLink[] = {
    {{.object = "link", .name = "id", .type = V::text, .fallback = D::absent(),
      .doc = "preset id (preset files)"},
     &read_member<&LinkSpec::id>, nullptr},
    {{.object = "link", .name = "name", .type = V::text,
      .fallback = D::rule("the id, or \"custom link\""), .doc = "for people"},
     [](JsonReader& r, const KeyInfo& k, LinkSpec& l) {
       l.name = r.string(k, l.id.empty() ? std::string("custom link") : l.id);
     },
     &write_member<&LinkSpec::name>},
    member<&LinkSpec::scope>({.object = "link", .name = "scope", .type = V::choice,
                              .fallback = D::required(), .choices = enum_names<LinkScope>(),
                              .doc = "a scale-up fabric inside a node, or one network port "
                                     "between nodes"}),
    member<&LinkSpec::bandwidth_Bps_per_dir>({.object = "link", .name = "bandwidth_GBps_per_dir",
                                              .type = V::number, .fallback = D::required(),
                                              .min = kMinLinkBandwidth, .max = kMaxBandwidth,
                                              .unit = "GB/s",
                                              .doc = "line-rate payload bandwidth per direction: "
                                                     "per GPU (intra-node) or per port",
                                              .scale = 1e9}),
    {{.object = "link", .name = "busbw_GBps", .type = V::number,
      .fallback = D::rule("`bandwidth_GBps_per_dir`"), .min = kMinLinkBandwidth,
      .max = kMaxBandwidth, .unit = "GB/s",
      .doc = "achievable NCCL ring bus bandwidth at large messages", .scale = 1e9},
     [](JsonReader& r, const KeyInfo& k, LinkSpec& l) {
       l.busbw_Bps = r.number(k, l.bandwidth_Bps_per_dir / k.scale);
     },
     &write_member<&LinkSpec::busbw_Bps>},
    {{.object = "link", .name = "allreduce_busbw_GBps", .type = V::number,
      .fallback = D::rule("`busbw_GBps`"), .min = kMinLinkBandwidth, .max = kMaxBandwidth,
      .unit = "GB/s",
      .doc = "achievable all-reduce bus bandwidth (higher where the switch reduces: NVLS)",
      .scale = 1e9},
     [](JsonReader& r, const KeyInfo& k, LinkSpec& l) {
       l.allreduce_busbw_Bps = r.number(k, l.busbw_Bps / k.scale);
     },
     &write_member<&LinkSpec::allreduce_busbw_Bps>},
    member<&LinkSpec::half_peak_bytes>({.object = "link", .name = "half_peak_bytes",
                                        .type = V::number, .fallback = D::of(0.0), .min = 0,
                                        .max = 1e15, .unit = "bytes",
                                        .doc = "message size at which half of the bus bandwidth "
                                               "is reached"}),
    member<&LinkSpec::latency_s>({.object = "link", .name = "latency_us", .type = V::number,
                                  .fallback = D::of(0.0), .min = 0, .max = 1e9, .unit = "µs",
                                  .doc = "small-message time floor of one collective step",
                                  .scale = 1e-6}),
    {{.object = "link", .name = "source", .type = V::text, .fallback = D::absent(),
      .doc = "where each number comes from"}},
    {{.object = "link", .name = "confidence", .type = V::text, .fallback = D::absent(),
      .doc = "`high`, `medium` or `low`"}},
    {{.object = "link", .name = "notes", .type = V::text, .fallback = D::absent(),
      .doc = "caveats"}},
};

constexpr KeyInfo kPage[] = {
    {.object = "page", .name = "tokens", .link = "tokens", .type = V::number,
     .fallback = D::absent(), .min = 0, .max = 1e21, .unit = "tokens", .label = "Tokens to train",
     .doc = "tokens of the whole training run (time and cost to train)", .control = C::page},
    {.object = "page", .name = "price_per_gpu_hour", .link = "price", .type = V::number,
     .fallback = D::absent(), .min = 0, .max = 1e6, .unit = "USD", .label = "Price per GPU-hour",
     .doc = "what one GPU-hour costs", .control = C::page},
};

}  // namespace

std::span<const Field<ModelSpec>> model_fields() { return kModel; }
std::span<const Field<AttentionSpec>> attention_fields() { return kAttention; }
std::span<const Field<MoeSpec>> moe_fields() { return kMoe; }
std::span<const Field<MambaSpec>> mamba_fields() { return kMamba; }
std::span<const Field<GdnSpec>> gdn_fields() { return kGdn; }
std::span<const Field<Plan>> plan_fields() { return kPlan; }
std::span<const std::string_view> framework_ids() { return kFrameworks; }
std::span<const Field<GpuSpec>> gpu_fields() { return kGpu; }
std::span<const Field<LinkSpec>> link_fields() { return kLink; }
std::span<const KeyInfo> scenario_keys() { return kScenario; }
std::span<const KeyInfo> cluster_keys() { return kCluster; }
std::span<const KeyInfo> stage_keys() { return kStage; }
std::span<const KeyInfo> replica_keys() { return kReplica; }
std::span<const KeyInfo> peak_keys() { return kPeaks; }
std::span<const KeyInfo> page_keys() { return kPage; }
std::span<const KeyInfo> calibration_keys() { return kCalibration; }
std::span<const KeyInfo> calibration_run_keys() { return kCalibrationRun; }
std::span<const KeyInfo> calibration_gemm_keys() { return kCalibrationGemm; }
std::span<const KeyInfo> calibration_layer_keys() { return kCalibrationLayer; }
std::span<const KeyInfo> calibration_memory_keys() { return kCalibrationMemory; }

const KeyInfo& key_in(std::span<const KeyInfo> table, std::string_view name) {
  for (const KeyInfo& k : table)
    if (k.name == name) return k;
  std::abort();  // the tables are fixed at compile time: a missing name is a typo in the engine
}

}  // namespace stepcast::detail
