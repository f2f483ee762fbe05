// The plan as Megatron-LM arguments, a Megatron-Bridge recipe override and a torchrun line
// (export_megatron.h). Flag names: Megatron-LM megatron/training/arguments.py and the
// TransformerConfig / ModelParallelConfig fields it turns into flags; recipe names:
// Megatron-Bridge's ConfigContainer (cfg.model, cfg.train, cfg.ddp, cfg.optimizer, cfg.dataset,
// cfg.mixed_precision, cfg.comm_overlap).
#include "stepcast/export_megatron.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

namespace stepcast {

namespace {

// One argument: "--flag" and its value ("" for a switch).
using Arg = std::pair<std::string, std::string>;

struct Lines {
  std::vector<std::string> comments;
  std::vector<Arg> args;
  void note(std::string text) { comments.push_back(std::move(text)); }
  void add(std::string flag, std::string value = {}) {
    args.emplace_back(std::move(flag), std::move(value));
  }
  void add(std::string flag, int64_t value) { add(std::move(flag), std::to_string(value)); }
};

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

// A value as one shell word, never split or expanded: in single quotes unless it is plain, an
// embedded quote written '\'' (what the importer's splitter reads back).
std::string quoted(const std::string& v) {
  const bool plain = !v.empty() && v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
                                                       "opqrstuvwxyz0123456789_./:=,+-") ==
                                       std::string::npos;
  if (plain) return v;
  std::string out = "'";
  for (char c : v) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Lines megatron_lines(const Scenario& s) {
  const ModelSpec& m = s.model;
  const Plan p = s.plan.effective();  // no --sequence-parallel or --tp-comm-overlap at tp 1
  Lines l;
  // The model.
  l.add("--num-layers", m.layers);
  l.add("--hidden-size", m.hidden);
  l.add("--ffn-hidden-size", m.ffn_hidden);
  l.add("--num-attention-heads", m.heads);
  if (!m.mla() && m.kv_heads != m.heads) {
    l.add("--group-query-attention");
    l.add("--num-query-groups", m.kv_heads);
  }
  if (m.head_size > 0) l.add("--kv-channels", m.head_size);
  l.add("--seq-length", m.seq_len);
  l.add("--max-position-embeddings", m.seq_len);
  l.add("--vocab-size", m.vocab);
  switch (m.ffn_type) {
    case FfnType::swiglu: l.add("--swiglu"); break;
    case FfnType::squared_relu: l.add("--squared-relu"); break;
    case FfnType::gelu: break;
    case FfnType::relu:
    case FfnType::geglu:
      l.note(fmt::format("model.ffn_type {}: Megatron-LM has no flag for it (set "
                         "activation_func in the model provider); the arguments say GELU",
                         to_string(m.ffn_type)));
      break;
  }
  l.add("--position-embedding-type", m.position == Position::rope ? "rope" : "learned_absolute");
  l.add("--normalization", m.norm == Norm::rmsnorm ? "RMSNorm" : "LayerNorm");
  if (!m.bias) l.add("--disable-bias-linear");
  if (!m.tied_embeddings) l.add("--untie-embeddings-and-output-weights");
  if (m.mla()) {
    const AttentionSpec& a = m.attention;
    l.add("--multi-latent-attention");
    if (a.q_lora_rank > 0) l.add("--q-lora-rank", a.q_lora_rank);
    l.add("--kv-lora-rank", a.kv_lora_rank);
    l.add("--qk-head-dim", a.qk_head_dim);
    l.add("--qk-pos-emb-head-dim", a.qk_rope_head_dim);
    l.add("--v-head-dim", a.v_head_dim);
  }
  if (m.attention.window > 0)
    l.note(fmt::format("model.attention.window {} ({} layers): set --window-size and "
                       "--window-attn-skip-freq by hand; they are not written here",
                       m.attention.window, name_of(m.attention.window_layers)));
  if (m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    l.add("--num-experts", e.experts);
    l.add("--moe-router-topk", e.top_k);
    l.add("--moe-ffn-hidden-size", e.ffn_hidden);
    if (e.shared_experts > 0)
      l.add("--moe-shared-expert-intermediate-size", e.shared_experts * e.shared_ffn_hidden);
    if (const std::string freq = layer_freq_text(m); freq != "1")
      l.add("--moe-layer-freq", quoted(freq));
    if (e.router_groups > 0) {
      l.add("--moe-router-num-groups", e.router_groups);
      if (e.router_group_top_k > 0) l.add("--moe-router-group-topk", e.router_group_top_k);
    }
    if (e.capacity_factor > 0)
      l.add("--moe-expert-capacity-factor", fmt::format("{}", e.capacity_factor));
    l.add("--moe-token-dispatcher-type", std::string(name_of(p.moe_dispatcher)));
    l.add("--expert-model-parallel-size", p.ep);
    l.add("--expert-tensor-parallel-size", p.etp);
    if (p.moe_overlap) l.add("--overlap-moe-expert-parallel-comm");
    if (p.moe_imbalance != 1)
      l.note(fmt::format("plan.moe_imbalance {}: the estimate's expert load, not a flag",
                         p.moe_imbalance));
  }
  if (m.mtp_layers > 0) l.add("--mtp-num-layers", m.mtp_layers);

  // The plan.
  l.add("--tensor-model-parallel-size", p.tp);
  l.add("--pipeline-model-parallel-size", p.pp);
  if (p.cp > 1) l.add("--context-parallel-size", p.cp);
  if (p.vpp > 1) {
    const bool even = p.first_stage_layers == 0 && p.last_stage_layers == 0 &&
                      p.pipeline_layout.empty() && m.layers % (int64_t{p.pp} * p.vpp) == 0;
    if (even) l.add("--num-layers-per-virtual-pipeline-stage", m.layers / (int64_t{p.pp} * p.vpp));
    else l.add("--num-virtual-stages-per-pipeline-rank", p.vpp);
  }
  if (p.first_stage_layers > 0) l.add("--decoder-first-pipeline-num-layers", p.first_stage_layers);
  if (p.last_stage_layers > 0) l.add("--decoder-last-pipeline-num-layers", p.last_stage_layers);
  if (p.embedding_in_split) l.add("--account-for-embedding-in-pipeline-split");
  if (p.loss_in_split) l.add("--account-for-loss-in-pipeline-split");
  if (!p.pipeline_layout.empty())
    l.add("--pipeline-model-parallel-layout", quoted(p.pipeline_layout));
  l.add("--micro-batch-size", p.micro_batch);
  l.add("--global-batch-size", p.global_batch);
  if (p.sequence_parallel) l.add("--sequence-parallel");
  if (p.recompute == Recompute::selective) l.add("--recompute-granularity", "selective");
  if (p.recompute == Recompute::full) {
    l.add("--recompute-granularity", "full");
    l.add("--recompute-method", "uniform");
    l.add("--recompute-num-layers", 1);
  }
  if (p.distributed_optimizer || p.zero_stage >= 1) l.add("--use-distributed-optimizer");
  if (p.zero_stage >= 2)
    l.note(fmt::format("plan.zero_stage {}: Megatron-LM shards gradients and parameters with "
                       "Megatron-FSDP (--use-megatron-fsdp --data-parallel-sharding-strategy), "
                       "not written here",
                       p.zero_stage));
  switch (p.precision) {
    case Precision::fp32: break;
    case Precision::fp16: l.add("--fp16"); break;
    case Precision::bf16: l.add("--bf16"); break;
    case Precision::fp8:
      l.add("--bf16");
      l.add("--fp8-format", "hybrid");
      break;
    case Precision::mxfp8:
      l.add("--bf16");
      l.add("--fp8-format", "e4m3");
      l.add("--fp8-recipe", "mxfp8");
      break;
    case Precision::nvfp4:
      l.add("--bf16");
      l.add("--fp4-format", "e2m1");
      break;
  }
  if (p.fp8_param_gather) l.add("--fp8-param-gather");
  if (p.overlap_grad_reduce) l.add("--overlap-grad-reduce");
  // Megatron-LM asserts the gradient overlap with the gather's (arguments.py); ZeRO-3 software
  // prefetches parameters without it, which the flag cannot say.
  if (p.overlap_param_gather && p.overlap_grad_reduce) l.add("--overlap-param-gather");
  else if (p.overlap_param_gather)
    l.note("plan.overlap_param_gather without plan.overlap_grad_reduce: Megatron-LM's "
           "--overlap-param-gather needs --overlap-grad-reduce, not written");
  if (p.tp_comm_overlap) l.add("--tp-comm-overlap");
  if (!p.grad_reduce_in_fp32) l.add("--grad-reduce-in-bf16");
  if (p.bf16_moments) {
    l.add("--use-precision-aware-optimizer");
    l.add("--exp-avg-dtype", "bf16");
    l.add("--exp-avg-sq-dtype", "bf16");
  }
  if (!p.flash_attention) l.add("--attention-backend", "unfused");
  if (p.cuda_graphs) l.add("--cuda-graph-impl", "transformer_engine");
  if (p.rank_order == "tp-cp-ep-pp-dp") l.add("--use-tp-pp-dp-mapping");
  else if (p.rank_order != "tp-cp-ep-dp-pp")
    l.note(fmt::format("plan.rank_order {}: Megatron-LM numbers ranks tp-cp-ep-dp-pp or, with "
                       "--use-tp-pp-dp-mapping, tp-cp-ep-pp-dp",
                       p.rank_order));
  if (!p.overlap_p2p && p.vpp > 1)
    l.note("plan.overlap_p2p false: Megatron-Core overlaps the interleaved schedule's send/recv "
           "whenever vpp > 1");
  if (p.pp_scatter_gather)
    l.note("plan.pp_scatter_gather: Megatron-LM 2.x's --scatter-gather-tensors-in-pipeline, "
           "gone from Megatron-Core");
  if (p.framework != "megatron-core")
    l.note(fmt::format("plan.framework {}: the arguments are Megatron-Core's; the profile's "
                       "execution (kernels, gathers) is not a flag",
                       p.framework));
  if (!p.stages.empty() || !p.replicas.empty() || s.cluster.groups.size() > 1)
    l.note("plan.stages / plan.replicas / several cluster groups: Megatron-LM runs one "
           "homogeneous grid; the placement is not written");
  return l;
}

std::string args_text(const Lines& l, std::string_view indent) {
  std::string out;
  for (size_t i = 0; i < l.args.size(); ++i) {
    const auto& [flag, value] = l.args[i];
    out += fmt::format("{}{}{}{}\n", indent, flag, value.empty() ? "" : " " + value,
                       i + 1 < l.args.size() ? " \\" : "");
  }
  return out;
}

std::string comments_text(std::string_view header, const std::vector<std::string>& comments) {
  std::string out = fmt::format("# {}\n", header);
  for (const auto& c : comments) out += "# " + c + "\n";
  return out;
}

std::string megatron_args(const Scenario& s) {
  Lines l = megatron_lines(s);
  l.note(fmt::format("the GPU count ({}) is the launcher's: stepcast export torchrun",
                     s.cluster.gpus()));
  return comments_text("stepcast export megatron-args: pretrain_gpt.py arguments", l.comments) +
         args_text(l, "");
}

std::string torchrun(const Scenario& s) {
  Lines l = megatron_lines(s);
  const ClusterGroup& g = s.cluster.groups.front();
  int nodes = 0;
  for (const auto& group : s.cluster.groups) nodes += group.nodes;
  if (s.cluster.groups.size() > 1)
    l.note(fmt::format("several cluster groups: --nproc-per-node is the first group's ({})",
                       g.gpus_per_node));
  return comments_text(fmt::format("stepcast export torchrun: run on each of the {} nodes "
                                   "(NODE_RANK 0 to {}, MASTER_ADDR the rank-0 node)",
                                   nodes, nodes - 1),
                       l.comments) +
         fmt::format("torchrun --nnodes {} --nproc-per-node {} --node-rank $NODE_RANK "
                     "--master-addr $MASTER_ADDR --master-port 6000 \\\n  pretrain_gpt.py \\\n",
                     nodes, g.gpus_per_node) +
         args_text(l, "  ");
}

std::string py_bool(bool v) { return v ? "True" : "False"; }

std::string bridge_recipe(const Scenario& s) {
  const ModelSpec& m = s.model;
  const Plan p = s.plan.effective();
  std::vector<std::string> notes;
  std::string out;
  auto set = [&](std::string_view key, const std::string& value) {
    out += fmt::format("cfg.{} = {}\n", key, value);
  };
  auto num = [](int64_t v) { return std::to_string(v); };
  set("model.tensor_model_parallel_size", num(p.tp));
  set("model.pipeline_model_parallel_size", num(p.pp));
  set("model.virtual_pipeline_model_parallel_size", p.vpp > 1 ? num(p.vpp) : "None");
  set("model.context_parallel_size", num(p.cp));
  set("model.sequence_parallel", py_bool(p.sequence_parallel));
  if (m.moe.enabled()) {
    set("model.expert_model_parallel_size", num(p.ep));
    set("model.expert_tensor_parallel_size", num(p.etp));
    set("model.moe_token_dispatcher_type", fmt::format("\"{}\"", name_of(p.moe_dispatcher)));
    if (p.moe_overlap) set("model.overlap_moe_expert_parallel_comm", "True");
  }
  if (p.first_stage_layers > 0)
    set("model.num_layers_in_first_pipeline_stage", num(p.first_stage_layers));
  if (p.last_stage_layers > 0)
    set("model.num_layers_in_last_pipeline_stage", num(p.last_stage_layers));
  set("model.account_for_embedding_in_pipeline_split", py_bool(p.embedding_in_split));
  set("model.account_for_loss_in_pipeline_split", py_bool(p.loss_in_split));
  set("model.pipeline_model_parallel_layout",
      p.pipeline_layout.empty() ? "None" : fmt::format("\"{}\"", p.pipeline_layout));
  switch (p.recompute) {
    case Recompute::none: set("model.recompute_granularity", "None"); break;
    case Recompute::selective: set("model.recompute_granularity", "\"selective\""); break;
    case Recompute::full:
      set("model.recompute_granularity", "\"full\"");
      set("model.recompute_method", "\"uniform\"");
      set("model.recompute_num_layers", "1");
      break;
  }
  set("model.cuda_graph_impl", p.cuda_graphs ? "\"transformer_engine\"" : "\"none\"");
  if (!p.flash_attention) set("model.attention_backend", "\"unfused\"");
  set("model.seq_length", num(m.seq_len));
  set("dataset.seq_length", num(m.seq_len));
  set("train.micro_batch_size", num(p.micro_batch));
  set("train.global_batch_size", num(p.global_batch));
  const bool distributed = p.distributed_optimizer || p.zero_stage >= 1;
  set("ddp.use_distributed_optimizer", py_bool(distributed));
  set("optimizer.use_distributed_optimizer", py_bool(distributed));
  set("ddp.overlap_grad_reduce", py_bool(p.overlap_grad_reduce));
  set("ddp.overlap_param_gather", py_bool(p.overlap_param_gather && p.overlap_grad_reduce));
  if (p.overlap_param_gather && !p.overlap_grad_reduce)
    notes.push_back("plan.overlap_param_gather without plan.overlap_grad_reduce: Megatron-Core's "
                    "DDP overlaps the gather only with the gradient overlap, set False");
  set("ddp.grad_reduce_in_fp32", py_bool(p.grad_reduce_in_fp32));
  if (p.bf16_moments) {
    set("optimizer.use_precision_aware_optimizer", "True");
    set("optimizer.exp_avg_dtype", "torch.bfloat16");
    set("optimizer.exp_avg_sq_dtype", "torch.bfloat16");
  }
  switch (p.precision) {
    case Precision::fp32: notes.push_back("plan.precision fp32: keep the recipe's "
                                          "mixed_precision unset (None)"); break;
    case Precision::fp16: set("mixed_precision", "\"fp16_mixed\""); break;
    case Precision::bf16: set("mixed_precision", "\"bf16_mixed\""); break;
    case Precision::fp8: set("mixed_precision", "\"bf16_with_fp8_current_scaling_mixed\""); break;
    case Precision::mxfp8: set("mixed_precision", "\"bf16_with_mxfp8_mixed\""); break;
    case Precision::nvfp4: set("mixed_precision", "\"bf16_with_nvfp4_mixed\""); break;
  }
  set("comm_overlap", fmt::format("CommOverlapConfig(tp_comm_overlap={})",
                                  py_bool(p.tp_comm_overlap)));
  // What the recipe's model provider holds, and what no recipe field says.
  notes.push_back(fmt::format(
      "the model's shape comes from the recipe's model provider; this scenario's: num_layers "
      "{}, hidden_size {}, ffn_hidden_size {}, num_attention_heads {}, num_query_groups {}, "
      "vocab_size {}",
      m.layers, m.hidden, m.ffn_hidden, m.heads, m.kv_heads, m.vocab));
  int nodes = 0;
  for (const auto& g : s.cluster.groups) nodes += g.nodes;
  notes.push_back(fmt::format("the GPU count ({} GPUs on {} nodes) is the launcher's",
                              s.cluster.gpus(), nodes));
  if (p.zero_stage >= 2)
    notes.push_back(fmt::format("plan.zero_stage {}: use Megatron-FSDP (cfg.ddp."
                                "use_megatron_fsdp, data_parallel_sharding_strategy)",
                                p.zero_stage));
  if (m.moe.enabled() && p.moe_imbalance != 1)
    notes.push_back(fmt::format("plan.moe_imbalance {}: the estimate's expert load, not a "
                                "setting",
                                p.moe_imbalance));
  if (p.framework != "megatron-core")
    notes.push_back(fmt::format("plan.framework {}: the recipe runs Megatron-Core", p.framework));
  if (!p.stages.empty() || !p.replicas.empty() || s.cluster.groups.size() > 1)
    notes.push_back("plan.stages / plan.replicas / several cluster groups: not expressible in "
                    "a recipe; the placement is not written");
  return comments_text("stepcast export bridge-recipe: overrides of a Megatron-Bridge recipe's "
                       "ConfigContainer `cfg`",
                       notes) +
         (p.bf16_moments ? "import torch\n" : "") +
         "from megatron.bridge.training.comm_overlap import CommOverlapConfig\n\n" + out;
}

}  // namespace

std::optional<PlanExport> plan_export_kind(std::string_view name) {
  const auto names = enum_names<PlanExport>();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<PlanExport>(i);
  return std::nullopt;
}

std::string export_plan(const Scenario& scenario, PlanExport kind) {
  switch (kind) {
    case PlanExport::megatron_args: return megatron_args(scenario);
    case PlanExport::bridge_recipe: return bridge_recipe(scenario);
    case PlanExport::torchrun: return torchrun(scenario);
  }
  return {};
}

}  // namespace stepcast
