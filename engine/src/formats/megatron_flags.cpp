// Megatron-LM's flags and the scenario keys they say (megatron_flags.h), in the order
// `stepcast export megatron-args` writes them. A plain flag is one line here: the importer copies
// it and the exporter writes it from its row. A flag with a rule is read by hand in the importer
// (the rule says how) and written here by its `exported` function.
#include "formats/megatron_flags.h"

#include "stepcast/export_megatron.h"

#include <fmt/format.h>

#include <cstdlib>

namespace stepcast::detail {

namespace {

using D = DefaultValue;
using F = FlagForm;
using Text = std::optional<std::string>;

Text switch_if(bool on) { return on ? Text("") : std::nullopt; }

// plan.recompute_modules as argparse's list: its names, one space between them.
std::string recompute_module_words(std::string_view modules) {
  std::string out;
  for_each_recompute_module(modules, [&](std::string_view name) {
    if (!out.empty()) out += ' ';
    out += name;
  });
  return out;
}
Text never(const Scenario&, const Plan&) { return std::nullopt; }

// --moe-layer-freq as Megatron evaluates it: an integer, or a Python list written in runs
// ("[0]*3+[1]*58").
std::string layer_freq_text(const ModelSpec& m) {
  if (m.moe.layer_pattern.empty() && m.moe.first_dense_layers == 0)
    return std::to_string(m.moe.layer_freq);
  std::string out;
  int64_t i = 0;
  while (i < m.layers) {
    const bool moe = m.is_moe_layer(i);
    int64_t run = 1;
    while (i + run < m.layers && m.is_moe_layer(i + run) == moe) ++run;
    out += fmt::format("{}[{}]*{}", out.empty() ? "" : "+", moe ? 1 : 0, run);
    i += run;
  }
  return out;
}

// Interleaved stages: Megatron's layers per virtual stage where they split evenly, else the
// count of virtual stages per rank.
bool even_virtual_stages(const Scenario& s, const Plan& p) {
  return p.first_stage_layers == 0 && p.last_stage_layers == 0 && p.pipeline_layout.empty() &&
         s.model.layers % (int64_t{p.pp} * p.vpp) == 0;
}

// Precision: --bf16 (or --fp16) and the low-precision recipe on top (Transformer Engine keeps
// 16-bit activations around fp8 and fp4 GEMMs).
constexpr const char* kPrecisionRule =
    "--fp4-format: nvfp4; --fp8-format with --fp8-recipe mxfp8: mxfp8; --fp8-format: fp8 "
    "(blockwise and custom recipes noted as per-tensor); --bf16: bf16; --fp16: fp16; else fp32";
constexpr const char* kRecomputeRule =
    "--recompute-granularity full or selective, none without it; with full, "
    "--recompute-method (uniform without it) and --recompute-num-layers (1 without it); with "
    "selective, --recompute-modules (core_attn without it)";
constexpr const char* kMomentsRule =
    "--use-precision-aware-optimizer with both moments 16-bit (fp8 counted as 16-bit); one "
    "16-bit moment, or none without the optimizer flag, is noted as fp32 moments";

constexpr const char* kCrossEntropyRule =
    "--cross-entropy-loss-fusion with --cross-entropy-fusion-impl (native without it): that "
    "kernel; none without the fusion flag";

constexpr MegatronFlag kFlags[] = {
    // --- The model.
    {.flag = "num-layers", .key = "model.layers", .absent = D::required()},
    {.flag = "hidden-size", .key = "model.hidden", .absent = D::required()},
    {.flag = "ffn-hidden-size", .key = "model.ffn_hidden",
     .absent = D::rule("4·hidden, or with --swiglu 2/3 of it rounded down to a multiple of 64")},
    {.flag = "num-attention-heads", .key = "model.heads", .absent = D::required()},
    {.flag = "group-query-attention", .key = "model.kv_heads", .form = F::on,
     .absent = D::rule("with it, --num-query-groups; without, kv_heads = heads"),
     .exported = [](const Scenario& s, const Plan&) {
       return switch_if(!s.model.mla() && s.model.kv_heads != s.model.heads);
     }},
    {.flag = "num-query-groups", .key = "model.kv_heads",
     .absent = D::rule("required with --group-query-attention"),
     .exported = [](const Scenario& s, const Plan&) -> Text {
       if (s.model.mla() || s.model.kv_heads == s.model.heads) return std::nullopt;
       return std::to_string(s.model.kv_heads);
     }},
    {.flag = "kv-channels", .key = "model.head_dim",
     .absent = D::rule("written where kv-channels·heads differs from hidden")},
    {.flag = "seq-length", .key = "model.seq_len", .absent = D::required(),
     .bridge = "model.seq_length, dataset.seq_length"},
    {.flag = "max-position-embeddings", .key = "model.seq_len",
     .absent = D::rule("read, not used: the engine's positions follow --seq-length")},
    {.flag = "vocab-size", .key = "model.vocab",
     .absent = D::rule("required, or --padded-vocab-size in its place (noted)")},
    {.flag = "padded-vocab-size", .key = "model.vocab",
     .absent = D::rule("the vocabulary where --vocab-size is not given (noted either way)"),
     .exported = &never},
    {.flag = "swiglu", .key = "model.ffn_type", .form = F::on,
     .absent = D::rule("swiglu; with --squared-relu squared_relu; neither gelu"),
     .exported = [](const Scenario& s, const Plan&) {
       return switch_if(s.model.ffn_type == FfnType::swiglu);
     }},
    {.flag = "squared-relu", .key = "model.ffn_type", .form = F::on,
     .absent = D::rule("see --swiglu"),
     .exported = [](const Scenario& s, const Plan&) {
       return switch_if(s.model.ffn_type == FfnType::squared_relu);
     }},
    {.flag = "position-embedding-type", .key = "model.position",
     .absent = D::rule("learned_absolute: learned; rope, mrope, yarn or none (noted): rope; "
                       "absent: rope with --use-rotary-position-embeddings, else learned"),
     .exported = [](const Scenario& s, const Plan&) -> Text {
       return s.model.position == Position::rope ? "rope" : "learned_absolute";
     }},
    {.flag = "use-rotary-position-embeddings", .key = "model.position", .form = F::on,
     .absent = D::rule("see --position-embedding-type"), .exported = &never},
    {.flag = "normalization", .key = "model.norm",
     .absent = D::rule("RMSNorm: rmsnorm; LayerNorm or absent: layernorm"),
     .exported = [](const Scenario& s, const Plan&) -> Text {
       return s.model.norm == Norm::rmsnorm ? "RMSNorm" : "LayerNorm";
     }},
    {.flag = "disable-bias-linear", .key = "model.bias", .form = F::off},
    {.flag = "untie-embeddings-and-output-weights", .key = "model.tied_embeddings",
     .form = F::off},
    // Multi-latent attention (Megatron's MLATransformerConfig defaults).
    {.flag = "multi-latent-attention", .key = "model.attention.type", .form = F::on, .is = "mla"},
    {.flag = "q-lora-rank", .key = "model.attention.q_lora_rank"},
    {.flag = "kv-lora-rank", .key = "model.attention.kv_lora_rank", .absent = D::of(32.0)},
    {.flag = "qk-head-dim", .key = "model.attention.qk_head_dim", .absent = D::of(128.0)},
    {.flag = "qk-pos-emb-head-dim", .key = "model.attention.qk_rope_head_dim",
     .absent = D::of(64.0)},
    {.flag = "v-head-dim", .key = "model.attention.v_head_dim", .absent = D::of(128.0)},
    // Mixture of experts: the model's experts, then the plan's expert parallelism.
    {.flag = "num-experts", .key = "model.moe.experts"},
    {.flag = "moe-router-topk", .key = "model.moe.top_k", .absent = D::of(2.0)},
    {.flag = "moe-ffn-hidden-size", .key = "model.moe.ffn_hidden",
     .absent = D::rule("the model's ffn_hidden")},
    {.flag = "moe-shared-expert-intermediate-size", .key = "model.moe.shared_ffn_hidden",
     .absent = D::rule("one shared expert that wide (Megatron gives the shared experts' total "
                       "width)"),
     .exported = [](const Scenario& s, const Plan&) -> Text {
       const MoeSpec& e = s.model.moe;
       if (e.shared_experts == 0) return std::nullopt;
       return std::to_string(e.shared_experts * e.shared_ffn_hidden);
     }},
    {.flag = "moe-layer-freq", .key = "model.moe.layer_freq",
     .absent = D::rule("an integer, or a Python list such as \"[0]*3+[1]*58\": leading dense "
                       "layers, every f-th layer, or the 0/1 list"),
     .exported = [](const Scenario& s, const Plan&) -> Text {
       const std::string freq = layer_freq_text(s.model);
       if (freq == "1") return std::nullopt;
       return shell_word(freq);
     }},
    {.flag = "moe-router-num-groups", .key = "model.moe.router_groups"},
    {.flag = "moe-router-group-topk", .key = "model.moe.router_group_top_k"},
    {.flag = "moe-expert-capacity-factor", .key = "model.moe.capacity_factor"},
    {.flag = "moe-token-dispatcher-type", .key = "plan.moe_dispatcher",
     .absent = D::of("allgather"), .bridge = "model.moe_token_dispatcher_type"},
    {.flag = "expert-model-parallel-size", .key = "plan.ep", .absent = D::of(1.0),
     .bridge = "model.expert_model_parallel_size"},
    {.flag = "expert-tensor-parallel-size", .key = "plan.etp", .absent = D::rule("plan.tp"),
     .bridge = "model.expert_tensor_parallel_size"},
    {.flag = "moe-expert-rank-capacity-factor", .key = "plan.moe_rank_capacity_factor",
     .bridge = "model.moe_expert_rank_capacity_factor"},
    {.flag = "overlap-moe-expert-parallel-comm", .key = "plan.moe_overlap", .form = F::on,
     .bridge = "model.overlap_moe_expert_parallel_comm"},
    {.flag = "mtp-num-layers", .key = "model.mtp_layers",
     .absent = D::rule("0 to 64, written where above 0")},

    // --- The plan.
    {.flag = "tensor-model-parallel-size", .key = "plan.tp", .absent = D::of(1.0),
     .bridge = "model.tensor_model_parallel_size"},
    {.flag = "pipeline-model-parallel-size", .key = "plan.pp", .absent = D::of(1.0),
     .bridge = "model.pipeline_model_parallel_size"},
    {.flag = "context-parallel-size", .key = "plan.cp", .absent = D::of(1.0), .quiet = true,
     .bridge = "model.context_parallel_size"},
    {.flag = "num-layers-per-virtual-pipeline-stage", .key = "plan.vpp",
     .absent = D::rule("vpp = layers / (pp · this), where above 1 and it divides"),
     .exported = [](const Scenario& s, const Plan& p) -> Text {
       if (p.vpp == 1 || !even_virtual_stages(s, p)) return std::nullopt;
       return std::to_string(s.model.layers / (int64_t{p.pp} * p.vpp));
     }},
    {.flag = "num-virtual-stages-per-pipeline-rank", .key = "plan.vpp",
     .absent = D::rule("vpp, where above 1"),
     .exported = [](const Scenario& s, const Plan& p) -> Text {
       if (p.vpp == 1 || even_virtual_stages(s, p)) return std::nullopt;
       return std::to_string(p.vpp);
     }},
    {.flag = "virtual-pipeline-model-parallel-size", .key = "plan.vpp",
     .absent = D::rule("the same, by the name NeMo and older launch scripts use"),
     .exported = &never, .bridge = "model.virtual_pipeline_model_parallel_size"},
    {.flag = "decoder-first-pipeline-num-layers", .key = "plan.first_stage_layers",
     .bridge = "model.num_layers_in_first_pipeline_stage"},
    {.flag = "decoder-last-pipeline-num-layers", .key = "plan.last_stage_layers",
     .bridge = "model.num_layers_in_last_pipeline_stage"},
    {.flag = "account-for-embedding-in-pipeline-split", .key = "plan.embedding_in_split",
     .form = F::on, .bridge = "model.account_for_embedding_in_pipeline_split"},
    {.flag = "account-for-loss-in-pipeline-split", .key = "plan.loss_in_split", .form = F::on,
     .bridge = "model.account_for_loss_in_pipeline_split"},
    {.flag = "pipeline-model-parallel-layout", .key = "plan.pipeline_layout",
     .bridge = "model.pipeline_model_parallel_layout"},
    {.flag = "micro-batch-size", .key = "plan.micro_batch", .absent = D::of(1.0),
     .bridge = "train.micro_batch_size"},
    {.flag = "global-batch-size", .key = "plan.global_batch", .absent = D::required(),
     .bridge = "train.global_batch_size"},
    {.flag = "sequence-parallel", .key = "plan.sequence_parallel", .form = F::on,
     .bridge = "model.sequence_parallel"},
    {.flag = "recompute-granularity", .key = "plan.recompute", .absent = D::rule(kRecomputeRule),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       if (p.recompute == Recompute::none) return std::nullopt;
       return std::string(name_of(p.recompute));
     },
     .bridge = "model.recompute_granularity"},
    {.flag = "recompute-method", .key = "plan.recompute_method",
     .absent = D::rule(kRecomputeRule),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       if (p.recompute != Recompute::full) return std::nullopt;
       return std::string(name_of(p.recompute_method));
     },
     .bridge = "model.recompute_method"},
    {.flag = "recompute-num-layers", .key = "plan.recompute_num_layers",
     .absent = D::rule(kRecomputeRule),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       if (p.recompute != Recompute::full) return std::nullopt;
       return std::to_string(p.recompute_num_layers);
     },
     .bridge = "model.recompute_num_layers"},
    {.flag = "recompute-modules", .key = "plan.recompute_modules",
     .absent = D::rule(kRecomputeRule),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       // Left out where it is Megatron-Core's default, core_attn alone.
       const std::string words = recompute_module_words(p.recompute_modules);
       if (p.recompute != Recompute::selective || words == "core_attn") return std::nullopt;
       return words;
     },
     .bridge = "model.recompute_modules", .many = true},
    // --optimizer (arguments.py at d98e8a64: adam by default; muon with
    // --use-distributed-optimizer runs the layer-wise distributed optimizer).
    {.flag = "optimizer", .key = "plan.optimizer", .absent = D::of("adam"), .quiet = true,
     .exported = [](const Scenario&, const Plan& p) -> std::optional<std::string> {
       // Adam is the default; Megatron-LM has no Adafactor (a note says so, export_megatron.cpp).
       if (p.optimizer == Optimizer::adam || p.optimizer == Optimizer::adafactor)
         return std::nullopt;
       return std::string(name_of(p.optimizer));
     },
     .bridge = "optimizer.optimizer"},
    // --sgd-momentum (arguments.py at d98e8a64: 0.9 by default; read by Megatron-Core's SGD).
    {.flag = "sgd-momentum", .key = "plan.sgd_momentum", .absent = D::of(0.9), .quiet = true,
     .bridge = "optimizer.sgd_momentum"},
    {.flag = "use-distributed-optimizer", .key = "plan.distributed_optimizer", .form = F::on,
     .bridge = "ddp.use_distributed_optimizer, optimizer.use_distributed_optimizer"},
    {.flag = "fp16", .key = "plan.precision", .form = F::on, .absent = D::rule(kPrecisionRule),
     .exported = [](const Scenario&, const Plan& p) {
       return switch_if(p.precision == Precision::fp16);
     }},
    {.flag = "bf16", .key = "plan.precision", .form = F::on, .absent = D::rule(kPrecisionRule),
     .exported = [](const Scenario&, const Plan& p) {
       return switch_if(p.precision == Precision::bf16 || low_precision(p.precision));
     },
     .bridge = "mixed_precision"},
    {.flag = "fp8-format", .key = "plan.precision", .absent = D::rule(kPrecisionRule),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       if (p.precision == Precision::fp8) return "hybrid";
       if (p.precision == Precision::mxfp8) return "e4m3";
       return std::nullopt;
     }},
    {.flag = "fp8-recipe", .key = "plan.precision", .absent = D::rule(kPrecisionRule),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       if (p.precision == Precision::mxfp8) return "mxfp8";
       return std::nullopt;
     }},
    {.flag = "fp4-format", .key = "plan.precision", .absent = D::rule(kPrecisionRule),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       if (p.precision == Precision::nvfp4) return "e2m1";
       return std::nullopt;
     }},
    {.flag = "fp8-param-gather", .key = "plan.fp8_param_gather", .form = F::on},
    {.flag = "overlap-grad-reduce", .key = "plan.overlap_grad_reduce", .form = F::on,
     .bridge = "ddp.overlap_grad_reduce"},
    // Megatron-LM asserts the gradient overlap with the gather's (arguments.py); ZeRO-3 software
    // prefetches parameters without it, which the flag cannot say (the exporter notes it).
    {.flag = "overlap-param-gather", .key = "plan.overlap_param_gather", .form = F::on,
     .exported = [](const Scenario&, const Plan& p) {
       return switch_if(p.overlap_param_gather && p.overlap_grad_reduce);
     },
     .bridge = "ddp.overlap_param_gather"},
    {.flag = "tp-comm-overlap", .key = "plan.tp_comm_overlap", .form = F::on,
     .bridge = "comm_overlap"},
    {.flag = "grad-reduce-in-bf16", .key = "plan.grad_reduce_in_fp32", .form = F::off,
     .bridge = "ddp.grad_reduce_in_fp32"},
    {.flag = "use-precision-aware-optimizer", .key = "plan.bf16_moments", .form = F::on,
     .absent = D::rule(kMomentsRule),
     // Megatron-LM asserts it under --optimizer-cpu-offload too (arguments.py at d98e8a64: "the
     // hybrid device optimizer reuses the code path of this flag").
     .exported = [](const Scenario&, const Plan& p) {
       return switch_if(p.bf16_moments || p.optimizer_cpu_offload);
     },
     .bridge = "optimizer.use_precision_aware_optimizer"},
    {.flag = "exp-avg-dtype", .key = "plan.bf16_moments", .absent = D::rule(kMomentsRule),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       if (!p.bf16_moments) return std::nullopt;
       return "bf16";
     },
     .bridge = "optimizer.exp_avg_dtype"},
    {.flag = "exp-avg-sq-dtype", .key = "plan.bf16_moments", .absent = D::rule(kMomentsRule),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       if (!p.bf16_moments) return std::nullopt;
       return "bf16";
     },
     .bridge = "optimizer.exp_avg_sq_dtype"},
    {.flag = "attention-backend", .key = "plan.flash_attention",
     .absent = D::rule("unfused or local: false; flash, fused, auto or absent: true"),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       if (p.flash_attention) return std::nullopt;
       return "unfused";
     },
     .bridge = "model.attention_backend"},
    {.flag = "use-flash-attn", .key = "plan.flash_attention", .form = F::on,
     .absent = D::rule("read, not used: --attention-backend says it"), .exported = &never},
    {.flag = "cuda-graph-impl", .key = "plan.cuda_graphs",
     .absent = D::rule("anything but none: true"),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       if (!p.cuda_graphs) return std::nullopt;
       return "transformer_engine";
     },
     .bridge = "model.cuda_graph_impl"},
    {.flag = "cross-entropy-loss-fusion", .key = "plan.cross_entropy_fusion", .form = F::on,
     .absent = D::rule(kCrossEntropyRule),
     .exported = [](const Scenario&, const Plan& p) {
       return switch_if(p.cross_entropy_fusion != CrossEntropyFusion::none);
     },
     .bridge = "model.cross_entropy_loss_fusion"},
    {.flag = "cross-entropy-fusion-impl", .key = "plan.cross_entropy_fusion",
     .absent = D::rule(kCrossEntropyRule),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       if (p.cross_entropy_fusion == CrossEntropyFusion::none) return std::nullopt;
       return std::string(name_of(p.cross_entropy_fusion));
     },
     .bridge = "model.cross_entropy_fusion_impl"},
    // Megatron-LM turns --cpu-offloading on where --cpu-offloading-num-layers is above 0
    // (megatron/training/arguments.py at d98e8a64); a recipe sets both.
    {.flag = "cpu-offloading", .key = "plan.cpu_offloading_num_layers", .form = F::on,
     .absent = D::rule("on where --cpu-offloading-num-layers is above 0; alone it offloads no "
                       "layer"),
     .exported = [](const Scenario&, const Plan& p) {
       return switch_if(p.cpu_offloading_num_layers > 0);
     },
     .bridge = "model.cpu_offloading"},
    {.flag = "cpu-offloading-num-layers", .key = "plan.cpu_offloading_num_layers",
     .bridge = "model.cpu_offloading_num_layers"},
    // Optimizer offloading (arguments.py at NVIDIA/Megatron-LM d98e8a64: --optimizer-cpu-offload,
    // --optimizer-offload-fraction default 1.0, --overlap-cpu-optimizer-d2h-h2d); Megatron-Bridge's
    // OptimizerConfig holds them (its fraction's default is 0.0, so the recipe writes it).
    {.flag = "optimizer-cpu-offload", .key = "plan.optimizer_cpu_offload", .form = F::on,
     .bridge = "optimizer.optimizer_cpu_offload"},
    {.flag = "optimizer-offload-fraction", .key = "plan.optimizer_offload_fraction",
     .absent = D::rule("1.0 (Megatron-LM's default); counts only with --optimizer-cpu-offload"),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       if (!p.optimizer_cpu_offload) return std::nullopt;
       return fmt::format("{}", p.optimizer_offload_fraction);
     },
     .bridge = "optimizer.optimizer_offload_fraction"},
    {.flag = "overlap-cpu-optimizer-d2h-h2d", .key = "plan.overlap_cpu_optimizer_d2h_h2d",
     .form = F::on,
     .absent = D::rule("off; counts only with --optimizer-cpu-offload"),
     .exported = [](const Scenario&, const Plan& p) {
       return switch_if(p.optimizer_cpu_offload && p.overlap_cpu_optimizer_d2h_h2d);
     },
     .bridge = "optimizer.overlap_cpu_optimizer_d2h_h2d"},
    // Fine-grained offloading (arguments.py at NVIDIA/Megatron-LM d98e8a64: --fine-grained-
    // activation-offloading, --offload-modules nargs='*'): the list counts only with the switch.
    {.flag = "fine-grained-activation-offloading", .key = "plan.offload_modules", .form = F::on,
     .absent = D::rule("on where plan.offload_modules names a module; --offload-modules counts "
                       "only with it"),
     .exported = [](const Scenario&, const Plan& p) {
       return switch_if(!p.offload_modules.empty());
     },
     .bridge = "model.fine_grained_activation_offloading"},
    {.flag = "offload-modules", .key = "plan.offload_modules",
     .absent = D::rule("no module offloaded; read only with --fine-grained-activation-"
                       "offloading"),
     .exported = [](const Scenario&, const Plan& p) -> Text {
       if (p.offload_modules.empty()) return std::nullopt;
       return recompute_module_words(p.offload_modules);
     },
     .bridge = "model.offload_modules", .many = true},
    // Megatron-LM's default 0.1: the flag is TransformerConfig.hidden_dropout's
    // (megatron/core/transformer/transformer_config.py at NVIDIA/Megatron-LM d98e8a64).
    // Megatron-Bridge's recipes leave it to the model bridges (no `bridge` attribute).
    {.flag = "hidden-dropout", .key = "plan.hidden_dropout", .absent = D::of(0.1)},
    // Megatron-LM numbers ranks tp-cp-ep-dp-pp, or tp-cp-ep-pp-dp with this switch.
    {.flag = "use-tp-pp-dp-mapping", .key = "plan.rank_order", .form = F::on,
     .is = "tp-cp-ep-pp-dp"},
};

}  // namespace

std::span<const MegatronFlag> megatron_flags() { return kFlags; }

const MegatronFlag* find_megatron_flag(std::string_view flag) {
  for (const MegatronFlag& f : kFlags)
    if (f.flag == flag) return &f;
  return nullptr;
}

const MegatronFlag& megatron_flag(std::string_view flag) {
  if (const MegatronFlag* f = find_megatron_flag(flag)) return *f;
  std::abort();  // a fixed table: a name missing from it is a typo in the engine
}

const KeyInfo& key_of(const MegatronFlag& row) {
  const size_t dot = row.key.rfind('.');
  if (const KeyInfo* k = find_key(row.key.substr(0, dot), row.key.substr(dot + 1))) return *k;
  // Every row's key is a schema key (MegatronArgs.EveryFlagOfTheTableIsWrittenOrRead).
  std::abort();
}

const Json* value_at(const Json& document, std::string_view path) {
  const Json* at = &document;
  while (!path.empty()) {
    const size_t dot = path.find('.');
    const std::string name(path.substr(0, dot));
    if (!at->is_object() || !at->contains(name)) return nullptr;
    at = &(*at)[name];
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  }
  return at;
}

bool applies(const Json& document, std::string_view path) {
  const size_t dot = path.rfind('.');
  const std::string_view object = path.substr(0, dot);
  const Json* holder = value_at(document, object);
  if (!holder || !holder->is_object()) return false;
  const KeyInfo* key = find_key(object, path.substr(dot + 1));
  if (!key || key->needs.empty()) return true;
  // "model.moe": given; "model.attention.type=mla": given with that value.
  const size_t eq = key->needs.find('=');
  const Json* v = value_at(document, key->needs.substr(0, eq));
  if (!v || v->is_null()) return false;
  return eq == std::string_view::npos ||
         (v->is_string() && v->get_ref<const std::string&>() == key->needs.substr(eq + 1));
}

std::string shell_word(const std::string& v) {
  const bool plain = !v.empty() && v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
                                                       "opqrstuvwxyz0123456789_./:=,+-") ==
                                       std::string::npos;
  if (plain) return v;
  std::string out = "'";
  for (char c : v) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace stepcast::detail

namespace stepcast {

Json megatron_flag_table() {
  Json out = Json::array();
  for (const detail::MegatronFlag& f : detail::megatron_flags())
    out.push_back({{"flag", f.flag},
                   {"key", f.key},
                   {"value", f.takes_value()},
                   {"by_hand", f.by_hand()},
                   {"bridge", f.bridge}});
  return out;
}

}  // namespace stepcast
