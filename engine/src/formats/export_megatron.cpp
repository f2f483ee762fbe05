// The plan as Megatron-LM arguments, a Megatron-Bridge recipe override and a torchrun line
// (export_megatron.h). The flags, their order and the recipe's attribute names come from the
// flag table (formats/megatron_flags.cpp); this file writes them and says, as comment lines,
// what they cannot.
#include "stepcast/export_megatron.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "formats/megatron_flags.h"
#include "scenario/fields.h"

namespace stepcast {

namespace {

using detail::applies;
using detail::FlagForm;
using detail::MegatronFlag;
using detail::megatron_flag;
using detail::megatron_flags;
using detail::value_at;

// One argument: "--flag" and its value ("" for a switch).
using Arg = std::pair<std::string, std::string>;

struct Lines {
  std::vector<std::string> comments;
  std::vector<Arg> args;
  void note(std::string text) { comments.push_back(std::move(text)); }
};

// The scenario as the exports read it: the model's keys and the plan as the estimate runs it
// (the resolved plan: no --sequence-parallel or --tp-comm-overlap at tp 1), by schema path.
Json resolved_document(const Scenario& s) {
  Json model = Json::object();
  detail::write_fields(detail::model_fields(), s.model, model);
  return Json{{"model", std::move(model)}, {"plan", resolved_plan_json(s.plan)}};
}

// A key left unset: nothing for an optional flag to say.
bool unset(const Json& v) {
  return v.is_null() || (v.is_number() && v.get<double>() == 0) ||
         (v.is_string() && v.get_ref<const std::string&>().empty()) ||
         (v.is_boolean() && !v.get<bool>());
}

bool is_default(const DefaultValue& d, const Json& v) {
  if (d.kind == DefaultValue::Kind::number) return v.is_number() && v.get<double>() == d.number;
  if (d.kind == DefaultValue::Kind::text) return v.is_string() && v.get<std::string>() == d.text;
  return false;
}

// What the flag's row says for this scenario: nullopt leaves the flag out, "" writes the switch.
std::optional<std::string> exported(const MegatronFlag& f, const Scenario& s, const Plan& p,
                                    const Json& doc) {
  if (!applies(doc, f.key)) return std::nullopt;  // an MoE flag for a dense model
  if (f.exported) return f.exported(s, p);
  const Json* v = value_at(doc, f.key);
  if (!v || v->is_null()) return std::nullopt;
  const std::optional<std::string> on = "";
  switch (f.form) {
    case FlagForm::on:
      if (!f.is.empty()) return v->is_string() && v->get<std::string>() == f.is ? on : std::nullopt;
      return v->get<bool>() ? on : std::nullopt;
    case FlagForm::off: return v->get<bool>() ? std::nullopt : on;
    case FlagForm::value: break;
  }
  if (f.absent.kind == DefaultValue::Kind::none && unset(*v)) return std::nullopt;
  if (f.quiet && is_default(f.absent, *v)) return std::nullopt;
  if (v->is_number_integer()) return std::to_string(v->get<int64_t>());
  if (v->is_number()) return fmt::format("{}", v->get<double>());
  return detail::shell_word(v->get<std::string>());
}

// Megatron-LM has no zero-bubble or DualPipe schedule (its schedules are 1F1B, interleaved 1F1B
// and the combined 1F1B of EP overlap: megatron/core/pipeline_parallel/schedules.py): what the
// exported arguments run instead, and where the schedule does run.
std::optional<std::string> schedule_note(const Plan& p) {
  switch (p.effective_schedule()) {
    case PipelineSchedule::zero_bubble:
      return "plan.schedule zero_bubble: Megatron-LM has no ZB-H1 schedule; these arguments "
             "run 1F1B on the same stages";
    case PipelineSchedule::zbv:
      return "plan.schedule zbv: Megatron-LM has no ZB-V schedule; these arguments run the "
             "interleaved schedule with 2 chunks per rank in Megatron's loop, not the V "
             "(torchtitan runs ZBVZeroBubble: stepcast export torchtitan)";
    case PipelineSchedule::dualpipev:
      return "plan.schedule dualpipev: Megatron-LM has no DualPipeV schedule; these arguments "
             "run the interleaved schedule with 2 chunks per rank in Megatron's loop, not the V "
             "(torchtitan runs DualPipeV: stepcast export torchtitan)";
    case PipelineSchedule::dualpipe:
      return "plan.schedule dualpipe: Megatron-LM has no DualPipe schedule; these arguments "
             "run 1F1B on the same stages with one copy of the parameters (DualPipe runs in "
             "deepseek-ai/DualPipe)";
    case PipelineSchedule::one_f_one_b:
    case PipelineSchedule::interleaved: break;
  }
  return std::nullopt;
}

// Megatron-LM's --optimizer offers adam, sgd, muon, dist_muon, lion, soap and adaptive_muon
// (megatron/training/arguments.py at NVIDIA/Megatron-LM d98e8a64): no Adafactor.
constexpr const char* kAdafactorNote =
    "plan.optimizer adafactor: Megatron-LM has no Adafactor (--optimizer adam, sgd, muon, lion, "
    "soap); no --optimizer is written";

// Megatron-Core keeps an fp32 master unless its precision-aware optimizer stores remainders
// (OptimizerConfig.store_param_remainders, which the engine's bf16_moments does not model yet:
// tests/validation/README.md, "The fit verdict"); the width is Apex's DistributedFusedAdam's.
constexpr const char* kMasterWeightsNote =
    "the master copy as Apex's DistributedFusedAdam keeps it (NeMo's optim "
    "distributed_fused_adam with optim.dtype), not written here";

// The allocator's setting is the environment's, not an argument (torchrun writes it).
constexpr std::string_view kExpandable = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True";

// What the arguments cannot say, as comment lines.
void notes(const Scenario& s, const Plan& p, Lines& l) {
  const ModelSpec& m = s.model;
  if (p.expandable_segments)
    l.note(fmt::format("plan.expandable_segments: set {} in the environment", kExpandable));
  if (m.ffn_type == FfnType::relu || m.ffn_type == FfnType::geglu)
    l.note(fmt::format("model.ffn_type {}: Megatron-LM has no flag for it (set "
                       "activation_func in the model provider); the arguments say GELU",
                       to_string(m.ffn_type)));
  if (m.attention.window > 0)
    l.note(fmt::format("model.attention.window {} ({} layers): set --window-size and "
                       "--window-attn-skip-freq by hand; they are not written here",
                       m.attention.window, name_of(m.attention.window_layers)));
  if (m.attention.chunk > 0)
    l.note(fmt::format("model.attention.chunk {}: Megatron-LM has no flag for chunked attention "
                       "(Megatron-Bridge's Llama 4 provider sets attention_chunk_size); the "
                       "arguments say full causal attention",
                       m.attention.chunk));
  // Hybrid models run through Megatron-LM's pretrain_hybrid.py (pretrain_mamba.py before it),
  // whose --hybrid-layer-pattern and --mamba-* / --linear-* arguments the flag table does not
  // hold (megatron/training/arguments.py at d98e8a64dd).
  if (m.hybrid())
    l.note(fmt::format("model.layer_pattern ({} layers) with its model.mamba / model.gdn mixers: "
                       "pretrain_hybrid.py's --hybrid-layer-pattern and --mamba-* / --linear-* "
                       "arguments, not written here; --num-layers counts the pattern's blocks",
                       m.layers));
  if (m.attention.output_gate)
    l.note("model.attention.output_gate: --attention-output-gate, not written here");
  // Megatron-LM's --moe-latent-size and --mtp-use-repeated-layer (TransformerConfig fields as
  // arguments: megatron/training/argument_utils.py at d98e8a64dd); a hybrid MTP module's pattern
  // follows the main one after '/' in --hybrid-layer-pattern (arguments.py there).
  if (m.moe.latent_size > 0)
    l.note(fmt::format("model.moe.latent_size {}: --moe-latent-size {}, not written here",
                       m.moe.latent_size, m.moe.latent_size));
  if (!m.mtp_pattern.empty() || m.mtp_repeated)
    l.note(fmt::format("model.mtp_pattern \"{}\"{}: the MTP depths' pattern in "
                       "--hybrid-layer-pattern{}, not written here",
                       m.mtp_pattern, m.mtp_repeated ? " and model.mtp_repeated" : "",
                       m.mtp_repeated ? " and --mtp-use-repeated-layer" : ""));
  if (m.moe.enabled() && p.moe_imbalance != 1)
    l.note(fmt::format("plan.moe_imbalance {}: the estimate's expert load, not a flag",
                       p.moe_imbalance));
  if (p.master_weights != MasterWeights::fp32)
    l.note(fmt::format("plan.master_weights {}: {}", to_string(p.master_weights),
                       kMasterWeightsNote));
  if (p.zero_stage >= 2)
    l.note(fmt::format("plan.zero_stage {}: Megatron-LM shards gradients and parameters with "
                       "Megatron-FSDP (--use-megatron-fsdp --data-parallel-sharding-strategy), "
                       "not written here",
                       p.zero_stage));
  if (p.overlap_param_gather && !p.overlap_grad_reduce)
    l.note("plan.overlap_param_gather without plan.overlap_grad_reduce: Megatron-LM's "
           "--overlap-param-gather needs --overlap-grad-reduce, not written");
  if (p.rank_order != "tp-cp-ep-dp-pp" &&
      p.rank_order != megatron_flag("use-tp-pp-dp-mapping").is)
    l.note(fmt::format("plan.rank_order {}: Megatron-LM numbers ranks tp-cp-ep-dp-pp or, with "
                       "--use-tp-pp-dp-mapping, tp-cp-ep-pp-dp",
                       p.rank_order));
  if (auto note = schedule_note(p)) l.note(*note);
  if (!p.overlap_p2p && p.vpp > 1)
    l.note("plan.overlap_p2p false: Megatron-Core overlaps the interleaved schedule's send/recv "
           "whenever vpp > 1");
  if (p.pp_scatter_gather)
    l.note("plan.pp_scatter_gather: Megatron-LM 2.x's --scatter-gather-tensors-in-pipeline, "
           "gone from Megatron-Core");
  if (p.optimizer == Optimizer::adafactor) l.note(kAdafactorNote);
  if (p.framework != "megatron-core")
    l.note(fmt::format("plan.framework {}: the arguments are Megatron-Core's; the profile's "
                       "execution (kernels, gathers) is not a flag",
                       p.framework));
  if (!p.stages.empty() || !p.replicas.empty() || s.cluster.groups.size() > 1)
    l.note("plan.stages / plan.replicas / several cluster groups: Megatron-LM runs one "
           "homogeneous grid; the placement is not written");
}

// The arguments in the flag table's order (formats/megatron_flags.cpp), and the notes.
Lines megatron_lines(const Scenario& s) {
  const Plan p = s.plan.effective();
  const Json doc = resolved_document(s);
  Lines l;
  for (const MegatronFlag& f : megatron_flags())
    if (auto value = exported(f, s, p, doc))
      l.args.emplace_back("--" + std::string(f.flag), *value);
  notes(s, p, l);
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
         fmt::format("{}torchrun --nnodes {} --nproc-per-node {} --node-rank $NODE_RANK "
                     "--master-addr $MASTER_ADDR --master-port 6000 \\\n  pretrain_gpt.py \\\n",
                     s.plan.expandable_segments ? std::string(kExpandable) + " " : "", nodes,
                     g.gpus_per_node) +
         args_text(l, "  ");
}

std::string py_bool(bool v) { return v ? "True" : "False"; }

// A key's value as Python: True/False, a number, a string in quotes.
std::string python(const Json& v) {
  if (v.is_boolean()) return py_bool(v.get<bool>());
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_string()) return fmt::format("\"{}\"", v.get_ref<const std::string&>());
  return fmt::format("{}", v.get<double>());
}

// The recipe's attributes, named by the flag table's bridge column, in the order a recipe sets
// them (Megatron-Bridge's ConfigContainer: parallelism, schedule, training, DDP, optimizer,
// precision, overlap).
std::string bridge_recipe(const Scenario& s) {
  const ModelSpec& m = s.model;
  const Plan p = s.plan.effective();
  const Json doc = resolved_document(s);
  std::vector<std::string> notes;
  std::string out;
  auto set = [&](std::string_view attribute, const std::string& value) {
    out += fmt::format("cfg.{} = {}\n", attribute, value);
  };
  // The attribute of a flag's row that is not the key's own value.
  auto attribute = [](std::string_view flag) { return megatron_flag(flag).bridge; };
  // The key of a flag's row as it is, into each of the row's attributes ("a, b").
  auto copy = [&](std::string_view flag) {
    const MegatronFlag& f = megatron_flag(flag);
    const Json* v = value_at(doc, f.key);
    if (!applies(doc, f.key) || !v) return;
    if (f.absent.kind == DefaultValue::Kind::none && f.takes_value() && unset(*v)) return;
    for (std::string_view rest = f.bridge; !rest.empty();) {
      const size_t comma = rest.find(", ");
      set(rest.substr(0, comma), python(*v));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
    }
  };
  auto num = [](int64_t v) { return std::to_string(v); };
  copy("tensor-model-parallel-size");
  copy("pipeline-model-parallel-size");
  set(attribute("virtual-pipeline-model-parallel-size"), p.vpp > 1 ? num(p.vpp) : "None");
  if (auto note = schedule_note(p)) notes.push_back(*note);
  copy("context-parallel-size");
  copy("sequence-parallel");
  copy("expert-model-parallel-size");
  copy("expert-tensor-parallel-size");
  copy("moe-token-dispatcher-type");
  copy("moe-expert-rank-capacity-factor");  // (left out where 0: none)
  if (p.moe_overlap) copy("overlap-moe-expert-parallel-comm");  // (set only when on)
  copy("decoder-first-pipeline-num-layers");
  copy("decoder-last-pipeline-num-layers");
  copy("account-for-embedding-in-pipeline-split");
  copy("account-for-loss-in-pipeline-split");
  set(attribute("pipeline-model-parallel-layout"),
      p.pipeline_layout.empty() ? "None" : fmt::format("\"{}\"", p.pipeline_layout));
  switch (p.recompute) {
    case Recompute::none: set(attribute("recompute-granularity"), "None"); break;
    case Recompute::selective: {
      set(attribute("recompute-granularity"), "\"selective\"");
      std::string list;  // a Python list of the module names
      for_each_recompute_module(p.recompute_modules, [&](std::string_view name) {
        list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", name);
      });
      set(attribute("recompute-modules"), "[" + list + "]");
      break;
    }
    case Recompute::full:
      set(attribute("recompute-granularity"), "\"full\"");
      set(attribute("recompute-method"), fmt::format("\"{}\"", name_of(p.recompute_method)));
      set(attribute("recompute-num-layers"), std::to_string(p.recompute_num_layers));
      break;
  }
  set(attribute("cuda-graph-impl"), p.cuda_graphs ? "\"transformer_engine\"" : "\"none\"");
  // Megatron-Bridge's GPTModelProvider fuses the loss by default (gpt_provider.py
  // cross_entropy_loss_fusion = True at NVIDIA-NeMo/Megatron-Bridge 17a381f95): said either way.
  const bool ce_fused = p.cross_entropy_fusion != CrossEntropyFusion::none;
  set(attribute("cross-entropy-loss-fusion"), py_bool(ce_fused));
  if (ce_fused)
    set(attribute("cross-entropy-fusion-impl"),
        fmt::format("\"{}\"", name_of(p.cross_entropy_fusion)));
  if (p.cpu_offloading_num_layers > 0) {
    // As Megatron-Bridge's performance overrides set it (scripts/performance/utils/overrides.py
    // at NVIDIA-NeMo/Megatron-Bridge 067f987d).
    set(attribute("cpu-offloading"), "True");
    copy("cpu-offloading-num-layers");
  }
  if (!p.offload_modules.empty()) {
    set(attribute("fine-grained-activation-offloading"), "True");
    std::string list;  // a Python list of the module names
    for_each_recompute_module(p.offload_modules, [&](std::string_view name) {
      list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", name);
    });
    set(attribute("offload-modules"), "[" + list + "]");
  }
  if (!p.flash_attention) set(attribute("attention-backend"), "\"unfused\"");
  copy("seq-length");
  copy("micro-batch-size");
  copy("global-batch-size");
  copy("use-distributed-optimizer");
  if (p.optimizer != Optimizer::adafactor) copy("optimizer");
  else notes.push_back(kAdafactorNote);
  copy("sgd-momentum");
  if (p.optimizer == Optimizer::muon && p.distributed_optimizer)
    notes.push_back("plan.optimizer muon with the distributed optimizer: Megatron-Core shards it "
                    "layer-wise (OptimizerConfig.use_layer_wise_distributed_optimizer; "
                    "Megatron-LM's arguments.py turns --use-distributed-optimizer into it)");
  copy("overlap-grad-reduce");
  set(attribute("overlap-param-gather"), py_bool(p.overlap_param_gather && p.overlap_grad_reduce));
  if (p.overlap_param_gather && !p.overlap_grad_reduce)
    notes.push_back("plan.overlap_param_gather without plan.overlap_grad_reduce: Megatron-Core's "
                    "DDP overlaps the gather only with the gradient overlap, set False");
  copy("grad-reduce-in-bf16");
  if (p.optimizer_cpu_offload) {
    // Megatron-Bridge's OptimizerConfig defaults the fraction to 0.0 (Megatron-LM's flag to
    // 1.0): written either way; the precision-aware optimizer is its code path.
    set(attribute("optimizer-cpu-offload"), "True");
    set(attribute("optimizer-offload-fraction"), fmt::format("{}", p.optimizer_offload_fraction));
    set(attribute("overlap-cpu-optimizer-d2h-h2d"), py_bool(p.overlap_cpu_optimizer_d2h_h2d));
    if (!p.bf16_moments) set(attribute("use-precision-aware-optimizer"), "True");
  }
  if (p.bf16_moments) {
    set(attribute("use-precision-aware-optimizer"), "True");
    set(attribute("exp-avg-dtype"), "torch.bfloat16");
    set(attribute("exp-avg-sq-dtype"), "torch.bfloat16");
  }
  const std::string_view precision = attribute("bf16");
  switch (p.precision) {
    case Precision::fp32: notes.push_back("plan.precision fp32: keep the recipe's "
                                          "mixed_precision unset (None)"); break;
    case Precision::fp16: set(precision, "\"fp16_mixed\""); break;
    case Precision::bf16: set(precision, "\"bf16_mixed\""); break;
    case Precision::fp8: set(precision, "\"bf16_with_fp8_current_scaling_mixed\""); break;
    case Precision::mxfp8: set(precision, "\"bf16_with_mxfp8_mixed\""); break;
    case Precision::nvfp4: set(precision, "\"bf16_with_nvfp4_mixed\""); break;
  }
  set(attribute("tp-comm-overlap"), fmt::format("CommOverlapConfig(tp_comm_overlap={})",
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
  if (p.master_weights != MasterWeights::fp32)
    notes.push_back(fmt::format("plan.master_weights {}: {}", to_string(p.master_weights),
                                kMasterWeightsNote));
  if (m.moe.enabled() && p.moe_imbalance != 1)
    notes.push_back(fmt::format("plan.moe_imbalance {}: the estimate's expert load, not a "
                                "setting",
                                p.moe_imbalance));
  if (p.expandable_segments)
    notes.push_back(fmt::format("plan.expandable_segments: the job's environment sets {}",
                                kExpandable));
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
