// What is trained: the transformer's shape, and the parameter and FLOP counts that follow from it.
#pragma once

#include <cstdint>
#include <string>

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

inline const char* to_string(FfnType v) { return name_of(v).data(); }
inline const char* to_string(Position v) { return name_of(v).data(); }
inline const char* to_string(Norm v) { return name_of(v).data(); }

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

  int64_t head_dim() const { return hidden / heads; }
  int64_t kv_dim() const { return kv_heads * head_dim(); }
};

// Matrices in the MLP: two for GELU/ReLU/squared-ReLU (up, down), three for gated units.
int ffn_matrices(FfnType type);

// Megatron pads the vocabulary to a multiple of make_vocab_size_divisible_by (128) times the
// tensor-parallel size, so every TP rank holds an equal slice (megatron/training/tokenizer).
int64_t padded_vocab(int64_t vocab, int tp);

struct ParameterCount {
  double per_layer = 0;   // one transformer layer, weights and biases and norms
  double embedding = 0;   // input word embedding (vocab x hidden)
  double position = 0;    // learned position table (seq x hidden), 0 for RoPE
  double output = 0;      // output projection, 0 when tied to the embedding
  double final_norm = 0;  // norm after the last layer
  double total = 0;
};

// Parameters of the model with vocabulary `vocab` (pass the padded vocabulary for what a GPU
// holds, the unpadded one for the model's nominal size).
ParameterCount count_parameters(const ModelSpec& model, int64_t vocab, int64_t seq_len);

// Forward FLOPs of one transformer layer for `tokens` = micro_batch x seq tokens of a sequence of
// length `seq`, before any parallel split. A multiply-add counts as two FLOPs. Attention scores
// and values are counted for the full s x s matrix, as Megatron-LM's and Korthikanti et al.'s
// MFU formulas do.
struct LayerFlops {
  double qkv = 0;
  double attention = 0;  // Q K^T and attention x V
  double projection = 0;
  double mlp = 0;
  double linear() const { return qkv + projection + mlp; }
  double total() const { return linear() + attention; }
};
LayerFlops layer_forward_flops(const ModelSpec& model, double micro_batch, double seq);

// Forward FLOPs of the output layer (logits) for micro_batch x seq tokens.
double logits_forward_flops(const ModelSpec& model, double micro_batch, double seq, int64_t vocab);

// Model FLOPs of one training step over `samples` sequences: 3 x forward (forward, and a backward
// of twice the forward), no recompute. MFU divides this by time and peak.
double model_flops_per_sample(const ModelSpec& model, double seq);

}  // namespace stepcast
