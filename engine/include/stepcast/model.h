// What is trained: the transformer's shape, and the parameter and FLOP counts that follow from it.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <string>
#include <vector>

#include "stepcast/enum_names.h"

namespace stepcast {

enum class FfnType { gelu, relu, squared_relu, swiglu, geglu };
enum class Position { learned, rope };
enum class Norm { layernorm, rmsnorm };
template <>
struct EnumNames<FfnType> {
  static constexpr std::array<std::string_view, 5> values = {"gelu", "relu", "squared_relu",
                                                             "swiglu", "geglu"};
};
template <>
struct EnumNames<Position> {
  static constexpr std::array<std::string_view, 2> values = {"learned", "rope"};
};
template <>
struct EnumNames<Norm> {
  static constexpr std::array<std::string_view, 2> values = {"layernorm", "rmsnorm"};
};

enum class AttentionType { gqa, mla };
enum class WindowLayers { all, alternate };
template <>
struct EnumNames<AttentionType> {
  static constexpr std::array<std::string_view, 2> values = {"gqa", "mla"};
};
template <>
struct EnumNames<WindowLayers> {
  static constexpr std::array<std::string_view, 2> values = {"all", "alternate"};
};

inline const char* to_string(FfnType v) { return name_of(v).data(); }
inline const char* to_string(Position v) { return name_of(v).data(); }
inline const char* to_string(Norm v) { return name_of(v).data(); }

// Self-attention: grouped-query (kv_heads key/value heads of head_dim), or DeepSeek's multi-head
// latent attention (queries and keys/values through low-rank projections; Megatron-Core's
// MLASelfAttention), optionally over a sliding window on all or alternate layers.
struct AttentionSpec {
  AttentionType type = AttentionType::gqa;
  int64_t q_lora_rank = 0;  // 0: queries projected directly from the hidden state
  int64_t kv_lora_rank = 0;
  int64_t qk_head_dim = 0;       // per head, without the rotary part
  int64_t qk_rope_head_dim = 0;  // per head, rotary part (one key head shared by all heads)
  int64_t v_head_dim = 0;
  int64_t window = 0;  // tokens each query sees (0: the whole causal context)
  WindowLayers window_layers = WindowLayers::all;
  // Chunked attention (Llama 4's attention_chunk_size): the sequence is cut into chunks of this
  // many tokens and each query attends causally within its own chunk, on every layer without a
  // window (0: none).
  int64_t chunk = 0;
  // Megatron's --attention-output-gate (Qwen3-Next): the QKV projection also gives a gate as
  // wide as the queries, whose sigmoid scales the attention output before its projection.
  bool output_gate = false;
};

// Mixture of experts: which layers route tokens to experts, and the experts' shape.
struct MoeSpec {
  int64_t experts = 0;  // routed experts per MoE layer; 0 for a dense model
  int64_t top_k = 0;
  int64_t ffn_hidden = 0;  // one routed expert's MLP width
  int64_t shared_experts = 0;
  int64_t shared_ffn_hidden = 0;  // one shared expert's width
  int64_t first_dense_layers = 0;
  int64_t layer_freq = 1;             // every layer_freq-th layer is MoE ...
  std::vector<uint8_t> layer_pattern;  // ... unless this 0/1 list (one per layer) says otherwise
  double capacity_factor = 0;          // 0: dropless
  int64_t router_groups = 0;           // node-limited routing: groups of experts, and how many
  int64_t router_group_top_k = 0;      // groups one token may reach (0: no limit)
  // Latent MoE (Megatron-Core's moe_latent_size, Nemotron 3 Super; megatron/core/transformer/
  // moe/moe_layer.py at NVIDIA/Megatron-LM d98e8a64): a hidden -> latent projection
  // (fc1_latent_proj) before the dispatch and a latent -> hidden one (fc2_latent_proj) after the
  // combine, both TELinear with parallel_mode "duplicated" (whole on every TP rank); the routed
  // experts take and give latent-wide tokens (experts.py: their fc1 input and fc2 output sizes)
  // and the token exchange carries them. The router and the shared experts stay on the hidden
  // state. 0: no latent projection.
  int64_t latent_size = 0;
  bool enabled() const { return experts > 0; }
};

// A hybrid model's Mamba-2 mixer (Dao & Gu, 2024; Megatron-Core's MambaMixer,
// megatron/core/ssm/mamba_mixer.py): an input projection to z, x, B, C and dt; a depthwise
// causal conv over x, B and C; the SSD scan over `heads` heads of `head_dim` with a state of
// `state_dim` per head, B and C shared by the heads of each of `groups` groups; a gated RMSNorm
// over z; the output projection. Names as Megatron's --mamba-* arguments.
struct MambaSpec {
  int64_t state_dim = 128;  // --mamba-state-dim (N)
  int64_t head_dim = 64;    // --mamba-head-dim (P)
  int64_t heads = 0;        // --mamba-num-heads; 0: expand * hidden / head_dim
  int64_t groups = 8;       // --mamba-num-groups (G)
  int64_t conv_kernel = 4;  // MambaMixer's d_conv
  int64_t expand = 2;       // MambaMixer's expand, used only without `heads`
};

// A hybrid model's Gated DeltaNet mixer (Yang, Kautz & Hatamizadeh, "Gated Delta Networks:
// Improving Mamba2 with Delta Rule", ICLR 2025; Qwen3-Next's linear attention, transformers'
// modeling_qwen3_next.py Qwen3NextGatedDeltaNet; Megatron-Core's GatedDeltaNet,
// megatron/core/ssm/gated_delta_net/gdn.py): an input projection to q and k (key_heads heads of
// key_head_dim), v and the output gate z (value_heads heads of value_head_dim), and a write
// strength b and a decay a per value head; a depthwise causal conv over q, k and v; the gated
// delta rule, each value head carrying a key_head_dim x value_head_dim state; a gated RMSNorm
// per value head; the output projection. Names and defaults as Megatron's --linear-* arguments
// (the defaults of hybrid_flops in megatron/training/training.py).
struct GdnSpec {
  int64_t key_heads = 16;        // --linear-num-key-heads
  int64_t value_heads = 32;      // --linear-num-value-heads
  int64_t key_head_dim = 128;    // --linear-key-head-dim
  int64_t value_head_dim = 128;  // --linear-value-head-dim
  int64_t conv_kernel = 4;       // --linear-conv-kernel-dim
};

// What one layer holds. A transformer layer is attention and an MLP (or MoE block); a hybrid
// model's layer (Megatron's hybrid override pattern) is one of them alone, a Mamba mixer or a
// Gated DeltaNet mixer.
enum class Block { transformer, mamba, attention, mlp, gdn };

// Which layer: its block, dense or MoE (an MoE block: the transformer layer's MLP, or a hybrid
// `E`), with full or sliding-window attention.
struct LayerKind {
  bool moe = false;
  bool windowed = false;
  Block block = Block::transformer;
  bool operator==(const LayerKind&) const = default;
};

// The member of a count per layer kind (ModelSpec::LayerCounts, LayerMix: the same nine names)
// that counts kind k.
template <class Counts>
constexpr auto& count_of(Counts& n, const LayerKind& k) {
  switch (k.block) {
    case Block::mamba: return n.mamba;
    case Block::gdn: return n.gdn;
    case Block::attention: return n.attention;
    case Block::mlp: return k.moe ? n.moe_block : n.mlp;
    case Block::transformer: break;
  }
  if (k.moe) return k.windowed ? n.moe_windowed : n.moe;
  return k.windowed ? n.dense_windowed : n.dense;
}

// Every kind of layer a model can hold, in one table: the four of a transformer, the five of a
// hybrid pattern (`M`, `*`, `-`, `E`, `G`).
inline constexpr std::array<LayerKind, 9> kLayerKinds = {
    LayerKind{false, false}, LayerKind{true, false}, LayerKind{false, true},
    LayerKind{true, true},   LayerKind{false, false, Block::mamba},
    LayerKind{false, false, Block::attention}, LayerKind{false, false, Block::mlp},
    LayerKind{true, false, Block::mlp}, LayerKind{false, false, Block::gdn}};

// Megatron's hybrid override pattern symbols (megatron/core/models/hybrid/
// hybrid_layer_allocation.py, class Symbols: MAMBA, ATTENTION, MLP, MOE, GDN): one character per
// layer.
inline constexpr std::string_view kHybridSymbols = "M*-EG";
// The kind of the layer a pattern character names (the caller checked it is in kHybridSymbols).
LayerKind hybrid_kind(char symbol);

struct ModelSpec {
  std::string id;  // preset id, empty for a custom model
  std::string name;
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t ffn_hidden = 0;
  int64_t vocab = 0;  // unpadded
  int64_t seq_len = 0;
  FfnType ffn_type = FfnType::gelu;
  Position position = Position::learned;
  bool tied_embeddings = true;
  Norm norm = Norm::layernorm;
  bool bias = true;
  int64_t head_size = 0;  // JSON `head_dim`; 0: hidden / heads
  AttentionSpec attention;
  MoeSpec moe;
  int64_t mtp_layers = 0;  // multi-token prediction modules after the last layer (DeepSeek-V3)
  // A hybrid model's MTP module as a pattern of kHybridSymbols (Megatron's
  // mtp_hybrid_override_pattern, Nemotron 3 Super's "*E": an attention layer and an MoE layer);
  // empty: one layer like the model's last.
  std::string mtp_pattern;
  // The MTP modules share one module's parameters, run mtp_layers times (Megatron-Core's
  // mtp_use_repeated_layer, megatron/core/transformer/multi_token_prediction.py).
  bool mtp_repeated = false;
  // Hybrid models: one of kHybridSymbols per layer (Megatron's --hybrid-override-pattern);
  // empty: every layer a transformer layer.
  std::string layer_pattern;
  MambaSpec mamba;  // the Mamba layers' mixer (with `M` in layer_pattern)
  GdnSpec gdn;      // the Gated DeltaNet layers' mixer (with `G` in layer_pattern)

  bool hybrid() const { return !layer_pattern.empty(); }
  // The width of a routed token: the latent with a latent MoE, else the hidden state.
  int64_t moe_token_dim() const { return moe.latent_size > 0 ? moe.latent_size : hidden; }
  // The kinds of the layers of one MTP module, in order.
  std::vector<LayerKind> mtp_kinds() const;
  // MTP modules that hold parameters of their own (one when they repeat one module).
  int64_t mtp_parameter_modules() const { return mtp_repeated && mtp_layers > 0 ? 1 : mtp_layers; }
  int64_t mamba_heads() const {
    return mamba.heads > 0 ? mamba.heads : mamba.expand * hidden / mamba.head_dim;
  }
  int64_t mamba_inner() const { return mamba_heads() * mamba.head_dim; }  // d_inner
  // Channels of the depthwise conv: x, B and C.
  int64_t mamba_conv_dim() const { return mamba_inner() + 2 * mamba.groups * mamba.state_dim; }
  // Gated DeltaNet widths: q and k each, v (and z), the conv's channels (q, k, v).
  int64_t gdn_key_dim() const { return gdn.key_heads * gdn.key_head_dim; }
  int64_t gdn_value_dim() const { return gdn.value_heads * gdn.value_head_dim; }
  int64_t gdn_conv_dim() const { return 2 * gdn_key_dim() + gdn_value_dim(); }
  // The kind of layer i (0-based).
  LayerKind kind_of(int64_t i) const;

  int64_t head_dim() const { return head_size > 0 ? head_size : hidden / heads; }
  int64_t q_dim() const { return heads * head_dim(); }  // queries (and attention output) width
  int64_t kv_dim() const { return kv_heads * head_dim(); }
  bool mla() const { return attention.type == AttentionType::mla; }
  // Layer i (0-based) routes its tokens to experts: Megatron's --moe-layer-freq (an int f: every
  // layer with i % f == 0; or a 0/1 list), with the first `first_dense_layers` dense.
  bool is_moe_layer(int64_t i) const;
  // MoE layers among `count` layers from `first`.
  int64_t moe_layers(int64_t first, int64_t count) const;
  // Layer i attends over a sliding window.
  bool windowed_layer(int64_t i) const;
  // The share of a full causal attention core that chunked attention runs for a sequence of
  // `seq` tokens (1 without chunks, or when the sequence fits in one).
  double chunked_attention_share(double seq) const;
  // How many of `count` layers from `first` are of each kind: dense or MoE, full or sliding-window
  // attention. Counted without visiting each layer (an estimate asks for every stage, a plan
  // search for tens of thousands of plans).
  // A hybrid model's layers are counted by block: mamba, attention (alone), mlp (alone),
  // moe_block (`E`, an MoE block alone) and gdn.
  struct LayerCounts {
    int64_t dense = 0, moe = 0, dense_windowed = 0, moe_windowed = 0;
    int64_t mamba = 0, attention = 0, mlp = 0, moe_block = 0, gdn = 0;
    // The count of one of kLayerKinds.
    int64_t& of(const LayerKind& k) { return count_of(*this, k); }
    int64_t of(const LayerKind& k) const { return count_of(*this, k); }
    // The sum over the layers of per_layer(kind): one call per kind present.
    template <class PerLayer>
    double sum(PerLayer&& per_layer) const {
      double out = 0;
      for (const LayerKind& k : kLayerKinds)
        if (of(k) > 0) out += static_cast<double>(of(k)) * per_layer(k);
      return out;
    }
  };
  LayerCounts layer_counts(int64_t first, int64_t count) const;
  // Uses Megatron-Core's current FLOP formula (MoE, MLA, MTP, sliding windows or hybrid): see
  // model_flops_per_sample.
  bool modern() const {
    return moe.enabled() || mla() || mtp_layers > 0 || attention.window > 0 || hybrid();
  }
};

// Matrices in the MLP: two for GELU/ReLU/squared-ReLU (up, down), three for gated units.
int ffn_matrices(FfnType type);

// Megatron pads the vocabulary to a multiple of make_vocab_size_divisible_by (128) times the
// tensor-parallel size, so every TP rank holds an equal slice (megatron/training/tokenizer).
int64_t padded_vocab(int64_t vocab, int tp);

struct ParameterCount {
  double per_layer = 0;   // one dense transformer layer, weights and biases and norms
  double moe_layer = 0;   // one MoE layer (attention, router, routed and shared experts)
  // Hybrid models: one layer of each block, with its norm (moe_layer then has no attention).
  double mamba_layer = 0, attention_layer = 0, mlp_layer = 0, gdn_layer = 0;
  double routed_experts = 0;  // the routed experts of one MoE layer (part of moe_layer)
  double latent_projections = 0;  // a latent MoE layer's two projections (part of moe_layer)
  double mtp = 0;         // the multi-token prediction modules (layers, projection, norms)
  double mtp_moe_layers = 0;  // MoE layers among the MTP modules' parameters
  double embedding = 0;   // input word embedding (vocab x hidden)
  double position = 0;    // learned position table (seq x hidden), 0 for RoPE
  double output = 0;      // output projection, 0 when tied to the embedding
  double final_norm = 0;  // norm after the last layer
  double total = 0;
};

// Parameters of the model with vocabulary `vocab` (pass the padded vocabulary for what a GPU
// holds, the unpadded one for the model's nominal size).
ParameterCount count_parameters(const ModelSpec& model, int64_t vocab, int64_t seq_len);

// Parameters of one layer's attention (projections and their norms, no layer norms), and the
// part every TP rank holds whole (the output projection's bias; MLA's down-projections).
double attention_parameters(const ModelSpec& model);
double attention_replicated_parameters(const ModelSpec& model);
// Parameters of an MLP of width f (weights and biases).
double mlp_parameters(const ModelSpec& model, double f);
// Parameters of one routed expert (weights and biases), on the tokens' width moe_token_dim().
double expert_parameters(const ModelSpec& model);
// Parameters of a latent MoE layer's two projections, hidden <-> latent (0 without a latent).
double latent_projection_parameters(const ModelSpec& model);
// Parameters of one Mamba-2 mixer without its input norm, and the part every TP rank holds whole
// (the output projection's bias).
double mamba_parameters(const ModelSpec& model);
// Parameters of one Gated DeltaNet mixer without its input norm (every one split over TP by
// heads).
double gdn_parameters(const ModelSpec& model);
// Parameters of one layer of `kind` (its norms included), from `count`'s per-kind figures.
double layer_parameters(const ParameterCount& count, const LayerKind& kind);

// Forward FLOPs of one transformer layer for `tokens` = micro_batch x seq tokens of a sequence of
// length `seq`, before any parallel split. A multiply-add counts as two FLOPs. Attention scores
// and values are counted for the full s x s matrix (or s x window), before a causal mask halves
// it (layers_forward_flops). An MoE layer's mlp is its active experts: top_k routed (less the
// copies a capacity factor below 1 drops) and the shared ones.
struct LayerFlops {
  double qkv = 0;        // every projection into the attention (MLA: down and up projections)
  double attention = 0;  // Q K^T and attention x V
  double projection = 0;
  double mlp = 0;
  double router = 0;  // the router's logits (not in Megatron's model FLOPs)
  // Mamba layers: the input projection is in qkv, the output projection in projection; the SSD
  // scan (as Megatron's num_floating_point_operations counts it: 7 FLOPs per inner channel and
  // state element per token), and the depthwise conv (not in Megatron's model FLOPs).
  // Gated DeltaNet layers: the same places; scan the gated delta rule (Megatron's count: 4
  // multiply-adds per state element per token), conv its conv (in Megatron's model FLOPs).
  double scan = 0;
  double conv = 0;
  double linear() const { return qkv + projection + mlp + router; }
  double total() const { return linear() + attention + scan + conv; }
};
LayerFlops layer_forward_flops(const ModelSpec& model, double micro_batch, double seq,
                               const LayerKind& kind);
inline LayerFlops layer_forward_flops(const ModelSpec& model, double micro_batch, double seq,
                                      bool moe_layer = false, bool windowed = false) {
  return layer_forward_flops(model, micro_batch, seq, LayerKind{moe_layer, windowed});
}

// Forward FLOPs of the output layer (logits) for micro_batch x seq tokens.
double logits_forward_flops(const ModelSpec& model, double micro_batch, double seq, int64_t vocab);

// Model FLOPs of one training sample: 3 x forward (forward, and a backward of twice the forward),
// no recompute. MFU divides this by time and peak. Megatron-LM's num_floating_point_operations
// (megatron/training/training.py since commit 8873b55d6a, 2025-03-06), the figure NVIDIA's
// tables report as model TFLOP/s: causal attention counts half the s x s matrix (a sliding
// window its band), the router is not counted, each MTP module adds a layer, its projection and
// one more output layer; routed tokens a capacity factor drops are not counted.
double model_flops_per_sample(const ModelSpec& model, double seq);

// The model FLOPs the published tables of 2021-24 report, from which the accuracy suite turns a
// reported TFLOP/s into an iteration time: for dense models with full attention the whole s x s
// matrix, as Narayanan et al. (2021) and Megatron-LM's formula until commit 8873b55d6a count it
// (e.g. core_v0.8.0's 12·b·s·l·h²·(1 + g/n + s/h + ...)); model_flops_per_sample otherwise.
double published_model_flops_per_sample(const ModelSpec& model, double seq);

// Forward FLOPs of the model's layers and output for one sequence, as the hardware runs them
// (the router counted, causal attention at half the matrix when `causal_half`, chunked
// attention's chunks when `chunked`; Megatron's count has no chunks).
double layers_forward_flops(const ModelSpec& model, double seq, bool causal_half,
                            bool chunked = false);

}  // namespace stepcast
