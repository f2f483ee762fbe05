// The plan's rules against the model and the cluster (divisibility, sizes, placement, what the
// training software can run), each broken rule an Error naming the input first, the inputs it
// involves and, where cheap, values that would satisfy it.
#include "stepcast/scenario.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

#include "scenario/counts.h"
#include "scenario/fields.h"
#include "stepcast/limits.h"
#include "stepcast/pipeline_layout.h"
#include "stepcast/ranks.h"
#include "stepcast/rule_ids.h"

namespace stepcast {

namespace {

using detail::key_in;
using detail::plus;
using detail::times;

// The plan's rules. Each broken rule is reported with the input it names first and the other
// inputs it involves (`related`), plus values that would satisfy it where that is cheap to say.
class Rules {
 public:
  Rules(const Scenario& s, std::vector<Error>* out) : s_(s), out_(out) {}

  // Records a broken rule; returns whether checking should go on (only when collecting).
  template <class Make>
  bool broken(Make make) {
    ok_ = false;
    if (out_) out_->push_back(make());
    return out_ != nullptr;
  }
  bool ok() const { return ok_; }
  const Scenario& s() const { return s_; }

  // The inputs that set the GPU count: every group's node count.
  std::vector<std::string> node_paths() const {
    if (s_.cluster.groups.size() == 1) return {"cluster.nodes"};
    std::vector<std::string> out;
    for (size_t g = 0; g < s_.cluster.groups.size(); ++g)
      out.push_back(fmt::format("cluster.groups[{}].nodes", g));
    return out;
  }

 private:
  const Scenario& s_;
  std::vector<Error>* out_;
  bool ok_ = true;
};

// A broken rule of the plan: its id (rule_ids.h), the input it names first, the message, the
// other inputs it involves and the values its line in kRules lists.
Error rule(Rule id, std::string path, std::string message, std::vector<std::string> related = {},
           Json values = Json::object()) {
  Error e{ErrorCode::invalid_plan, std::move(path), std::move(message), std::move(related)};
  e.rule = id;
  e.values = std::move(values);
  return e;
}

// The values of a `divides` rule: which key must divide which, and their values.
Json divides_values(const std::string& divisor_key, int64_t divisor,
                    const std::string& dividend_key, int64_t dividend) {
  return {{"divisor_key", divisor_key}, {"divisor", divisor}, {"dividend_key", dividend_key},
          {"dividend", dividend}};
}

std::vector<std::string> join(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The divisors of n up to `limit` (at most 12), values that would satisfy a rule.
std::vector<int64_t> divisors(int64_t n, int64_t limit) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i <= std::min(n, limit) && d.size() < 12; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

// "1, 2, 4 or 8": values that would work, for a message.
std::string either_text(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i)
    out += fmt::format("{}{}", i == 0 ? "" : (i + 1 == values.size() ? " or " : ", "), values[i]);
  return out;
}

// The schedules that pair one micro-batch's forward with another's backward, so the EP exchange
// of one can run beside the other's compute: Megatron-Core's combined 1F1B on the interleaved
// schedule (combined_1f1b.py) and DualPipeV's overlapped pairs (dualpipev.cpp).
bool pairs_passes(PipelineSchedule s) {
  return s == PipelineSchedule::interleaved || s == PipelineSchedule::dualpipev ||
         s == PipelineSchedule::dualpipe;
}

// The multiples of `step` nearest `value` (the one below when there is one, and the one above).
std::vector<int64_t> nearest_multiples(int64_t value, int64_t step) {
  const int64_t below = value / step * step;
  return below > 0 ? std::vector<int64_t>{below, below + step} : std::vector<int64_t>{step};
}

// The global batches nearest `global_batch` that `step` divides: "plan.global_batch=496 or 512".
std::string batch_hint(int64_t global_batch, int64_t step) {
  return "plan.global_batch=" + either_text(nearest_multiples(global_batch, step));
}

// What would split `layers` over pp·vpp chunks when they do not divide evenly, as the page and a
// user can act on it: the counts that divide them, then Megatron's other splits
// (pipeline_layout.h). The hint in words, and the same as the error's values.
// Megatron's pipeline layout (plan.pipeline_layout) that splits `layers` over `chunks` virtual
// stages as NVIDIA's recipes do where nothing plainer splits them: the middle chunks k layers
// each (the fewest that hold them all), the first chunk the embedding and the last the MTP
// modules and the loss beside what remains, at most k each (DeepSeek-V3 at PP 8 x VPP 4:
// "Et|(tt|)*30mL", Megatron-Bridge's DeepSeek-V3 recipe). Empty where the ends cannot take it.
std::string recipe_layout(int64_t layers, int64_t chunks, int mtp_layers) {
  if (chunks < 3) return "";
  const int64_t middle = chunks - 2, k = (layers + chunks - 1) / chunks;
  const int64_t rest = layers - middle * k;
  if (rest < 0 || rest > 2 * k) return "";
  const int64_t last = rest / 2, first = rest - last;
  auto run = [](int64_t n) {
    return n <= 3 ? std::string(static_cast<size_t>(n), 't') : fmt::format("t*{}", n);
  };
  return "E" + run(first) + "|" +
         (middle > 1 ? fmt::format("({}|)*{}", run(k), middle) : run(k) + "|") + run(last) +
         std::string(static_cast<size_t>(std::max(mtp_layers, 0)), 'm') + "L";
}

std::string split_hint(int64_t layers, int pp, int vpp, int mtp_layers, Json& values) {
  const std::vector<int64_t> fits = divisors(layers, 64);
  values["would_divide"] = fits;
  std::string hint = fmt::format("pp·vpp {} divides {} layers", either_text(fits), layers);
  if (const auto a = accounted_split(layers, pp, vpp)) {
    values["count_embedding"] = a->embedding_in_split;
    values["count_loss"] = a->loss_in_split;
    hint += a->embedding_in_split ? "; count the embedding and the loss as layers "
                                    "(plan.embedding_in_split, plan.loss_in_split)"
                                  : "; count the loss as a layer (plan.loss_in_split)";
  }
  if (const auto u = uneven_split(layers, pp, vpp)) {
    values["first_stage_layers"] = u->first_stage_layers;
    values["last_stage_layers"] = u->last_stage_layers;
    values["other_stage_layers"] = u->other_stage_layers;
    hint += fmt::format("; plan.first_stage_layers={} and plan.last_stage_layers={}{}",
                        u->first_stage_layers, u->last_stage_layers,
                        pp > 2 ? fmt::format(" ({} on each other stage)", u->other_stage_layers)
                               : "");
  } else if (!values.contains("count_loss")) {
    const std::string layout = recipe_layout(layers, int64_t{pp} * vpp, mtp_layers);
    if (!layout.empty()) {
      values["pipeline_layout"] = layout;
      hint += fmt::format("; plan.pipeline_layout=\"{}\"", layout);
    }
  }
  return hint;
}

// A free-form pipeline layout: the only split the plan gives, pp·vpp virtual stages holding
// every layer once, the embedding first, the loss and the MTP modules last (where the engine
// runs them).
bool check_pipeline_layout(Rules& c) {
  const Plan& p = c.s().plan;
  const ModelSpec& m = c.s().model;
  const char* path = "plan.pipeline_layout";
  if ((p.first_stage_layers > 0 || p.last_stage_layers > 0 || p.embedding_in_split ||
       p.loss_in_split || !p.stages.empty()) &&
      !c.broken([&] {
        return rule(Rule::layout_alone, path,
                    "plan.pipeline_layout gives the whole split: leave out first_stage_layers, "
                    "last_stage_layers, embedding_in_split, loss_in_split and stages");
      }))
    return false;
  auto parsed = parse_pipeline_layout(p.pipeline_layout, path);
  if (!parsed.ok()) return c.broken([&] { return parsed.error(); });
  const auto& stages = parsed.value();
  const int64_t want = int64_t{p.pp} * p.vpp;
  if (static_cast<int64_t>(stages.size()) != want)
    return c.broken([&] {
      return rule(Rule::layout_stages, path,
                  fmt::format("plan.pipeline_layout has {} stages but plan.pp*plan.vpp={}*{}={}",
                              stages.size(), p.pp, p.vpp, want),
                  {"plan.pp", "plan.vpp"}, {{"stages", stages.size()}, {"pp", p.pp}, {"vpp", p.vpp}});
    });
  int64_t layers = 0, mtp = 0;
  for (size_t k = 0; k < stages.size(); ++k) {
    layers += stages[k].layers;
    mtp += stages[k].mtp;
    const bool first = k == 0, last = k + 1 == stages.size();
    if (stages[k].embedding != first || stages[k].loss != last || (stages[k].mtp > 0 && !last))
      return c.broken([&] {
        return rule(Rule::layout_order, path,
                    fmt::format("plan.pipeline_layout: the embedding E goes in the first stage, "
                                "the loss L and the MTP modules m in the last (stage {} breaks it)",
                                k),
                    {}, {{"stage", k}});
      });
  }
  if (layers != m.layers || mtp != m.mtp_layers)
    return c.broken([&] {
      return rule(Rule::layout_layers, path,
                  fmt::format("plan.pipeline_layout holds {} layers and {} MTP modules but the "
                              "model has model.layers={} and model.mtp_layers={}",
                              layers, mtp, m.layers, m.mtp_layers),
                  {"model.layers", "model.mtp_layers"},
                  {{"layers", layers}, {"mtp_layers", mtp}, {"model_layers", m.layers},
                   {"model_mtp_layers", m.mtp_layers}});
    });
  return c.ok();
}

// Megatron's uneven splits (first/last stage layers, the embedding and the loss counted as
// layers): the layers must add up and divide the way Megatron divides them. Sets `even_rule` when
// the plain rule (pp·vpp divides the layers) is the one that applies.
bool check_split(Rules& c, bool& even_rule) {
  const Plan& p = c.s().plan;
  const int64_t L = c.s().model.layers;
  const bool uneven = p.first_stage_layers > 0 || p.last_stage_layers > 0;
  const bool accounted = p.embedding_in_split || p.loss_in_split;
  even_rule = false;
  if (!p.pipeline_layout.empty()) return check_pipeline_layout(c);
  if (!p.stages.empty()) {
    // plan.stages gives every stage's layers; the embedding and the loss may still count as a
    // layer in the split of the first and last stage into virtual chunks.
    if (uneven && !c.broken([&] {
          return rule(Rule::stages_alone,
                      p.first_stage_layers > 0 ? "plan.first_stage_layers"
                                               : "plan.last_stage_layers",
                      "plan.stages gives every stage's layers: leave out first_stage_layers and "
                      "last_stage_layers",
                      {"plan.stages"});
        }))
      return false;
    if (accounted && std::any_of(p.stages.begin(), p.stages.end(),
                                 [](const StageAssignment& a) { return a.layers == 0; }) &&
        !c.broken([&] {
          return rule(Rule::auto_stage_split, "plan.stages",
                      "\"auto\" stage layers with embedding_in_split or loss_in_split are not "
                      "modelled: give the layers",
                      {"plan.embedding_in_split", "plan.loss_in_split"});
        }))
      return false;
    return c.ok();
  }
  if (uneven && accounted)
    return c.broken([&] {
      return rule(Rule::one_uneven_split,
                  p.first_stage_layers > 0 ? "plan.first_stage_layers" : "plan.last_stage_layers",
                  "give either first_stage_layers/last_stage_layers or "
                  "embedding_in_split/loss_in_split, not both (Megatron takes one uneven split)",
                  {"plan.embedding_in_split", "plan.loss_in_split"});
    });
  if (uneven) {
    const int64_t given = p.first_stage_layers + p.last_stage_layers;
    const int64_t others = p.pp - (p.first_stage_layers > 0) - (p.last_stage_layers > 0);
    const char* path = p.first_stage_layers > 0 ? "plan.first_stage_layers" : "plan.last_stage_layers";
    if (p.pp < 2 || (p.pp == 2 && p.first_stage_layers > 0 && p.last_stage_layers > 0 &&
                     given != L) ||
        given >= L + (others == 0 ? 1 : 0) || (others > 0 && (L - given) % others != 0) ||
        (others == 0 && given != L))
      return c.broken([&] {
        return rule(Rule::uneven_split, path,
                    fmt::format("first_stage_layers={} and last_stage_layers={} leave {} of "
                                "model.layers={} for {} other stage(s) of plan.pp={}: they must "
                                "split evenly",
                                p.first_stage_layers, p.last_stage_layers, L - given, L, others,
                                p.pp),
                    {"model.layers", "plan.pp"},
                    {{"first_stage_layers", p.first_stage_layers},
                     {"last_stage_layers", p.last_stage_layers}, {"layers", L}, {"pp", p.pp},
                     {"other_stages", others}});
      });
    const int64_t even = others > 0 ? (L - given) / others : 0;
    for (const int64_t n : {p.first_stage_layers, p.last_stage_layers, even})
      if (n > 0 && n % p.vpp != 0)
        return c.broken([&] {
          Error e = rule(Rule::stage_chunks, path,
                         fmt::format("a stage of {} layer{} does not split into plan.vpp={} chunks",
                                     n, n == 1 ? "" : "s", p.vpp),
                         {"plan.vpp"},
                         {{"layers", n}, {"counted", 0}, {"vpp", p.vpp}, {"pp", p.pp}});
          // First and last stage layers set for one VPP, then a VPP they do not split into
          // (DeepSeek-V3's 6 and 7 of 61 layers at PP 8, then VPP 4): the splits at this VPP
          // that replace them, Megatron's layout among them, as layer_split offers (issue 37
          // item 3: a published plan reachable from the hints at every VPP).
          e.hint = fmt::format("at plan.vpp={}, in place of first_stage_layers and "
                               "last_stage_layers: {}",
                               p.vpp, split_hint(L, p.pp, p.vpp, c.s().model.mtp_layers, e.values));
          return e;
        });
    return c.ok();
  }
  if (accounted) {
    const int64_t total = L + p.embedding_in_split + p.loss_in_split;
    const int64_t chunks = int64_t{p.pp} * p.vpp;
    if (!accounting_divides(L, p.embedding_in_split + p.loss_in_split, p.pp, p.vpp))
      return c.broken([&] {
        return rule(Rule::layer_split, p.vpp > 1 ? "plan.vpp" : "plan.pp",
                    fmt::format("model.layers={} plus the {} counted as layers ({}) must be "
                                "divisible by plan.pp*plan.vpp={}",
                                L,
                                p.embedding_in_split && p.loss_in_split ? "embedding and loss"
                                : p.embedding_in_split                  ? "embedding"
                                                                        : "loss",
                                total, chunks),
                    {"model.layers", "plan.embedding_in_split", "plan.loss_in_split"},
                    {{"layers", L}, {"counted", total - L}, {"pp", p.pp}, {"vpp", p.vpp}});
      });
    return c.ok();
  }
  even_rule = L % (int64_t{p.pp} * p.vpp) != 0;
  return c.ok();
}

// Flags the framework cannot honour, and flags that need another.
bool check_framework(Rules& c, const FrameworkProfile* profile) {
  const Plan& p = c.s().plan;
  // The plan's value of key `key` as the writer writes it, and whether it is "on": a flag on, or
  // a size (plan.cp) or a choice (plan.optimizer) away from its default; with `value` ("sgd"),
  // whether the choice is that one.
  // (Through the field's `holds` where it has one; `v` then holds the value only once
  // `written` has written it, for a broken rule's message.)
  const auto field_of = [](std::string_view key) -> const detail::Field<Plan>* {
    for (const auto& f : detail::plan_fields())
      if (f.info.name == key && f.write) return &f;
    return nullptr;
  };
  const auto written = [&](std::string_view key, Json& v) -> const Json& {
    if (const auto* f = field_of(key)) f->write(p, f->info, v);
    return v[std::string(key)];
  };
  const auto holds = [&](std::string_view key, std::string_view value, Json& v) {
    const auto* f = field_of(key);
    if (!f) return false;
    if (f->holds) return f->holds(p, f->info, value);
    f->write(p, f->info, v);
    const Json& x = v[std::string(key)];
    if (!value.empty()) return x.is_string() && x.get<std::string>() == value;
    const DefaultValue& d = f->info.fallback;
    return x.is_boolean()  ? x.get<bool>()
           : x.is_number() ? d.kind == DefaultValue::Kind::number && x.get<double>() != d.number
                           : x.is_string() && d.kind == DefaultValue::Kind::text &&
                                 x.get<std::string>() != d.text;
  };
  // The values written: one tree for every entry (each entry writes its keys anew), and a key's
  // name copied only for a broken rule's message (a tree an entry and the name copied every
  // time were 615,000 of the 3.3 M allocations of an MoE search, which checks every plan). Null
  // until a key is written into them (operator[] makes an object of a null tree): a field with
  // `holds` writes none.
  Json v, also;
  if (profile)
    for (const auto& entry : profile->cannot) {
      // Named references, not structured bindings: clang 14 (Emscripten) cannot capture those.
      // An entry is "key", "key=value", or either followed by " with " and another that must
      // hold too ("optimizer=sgd with distributed_optimizer": catalog.h).
      const std::string& why = entry.second;
      const FrameworkProfile::Cannot what = FrameworkProfile::cannot_of(entry.first);
      const bool on = holds(what.key, what.value, v) &&
                      (what.with.empty() || holds(what.with, what.with_value, also));
      if (on && !c.broken([&] {
            const std::string key(what.key);
            return rule(Rule::framework_cannot, fmt::format("plan.{}", key),
                        fmt::format("plan.{}={}{}: {} cannot do it ({})", key,
                                    written(key, v).dump(),
                                    what.with.empty()
                                        ? ""
                                        : fmt::format(" with plan.{}={}", what.with,
                                                      written(what.with, also).dump()),
                                    p.framework, why),
                        {"plan.framework"}, {{"framework", p.framework}, {"reason", why}});
          }))
        return false;
    }
  if (p.tp_comm_overlap && p.tp > 1 && !p.sequence_parallel && !c.broken([&] {
        return rule(Rule::needs_sequence_parallel, "plan.tp_comm_overlap",
                    "plan.tp_comm_overlap=true needs plan.sequence_parallel=true (Transformer "
                    "Engine overlaps the all-gathers and reduce-scatters of sequence parallelism)",
                    {"plan.sequence_parallel"}, {{"tp", p.tp}});
      }))
    return false;
  const int zero = p.effective_zero_stage();
  if (p.overlap_param_gather && (zero == 1 || zero == 2) && !p.overlap_grad_reduce &&
      !c.broken([&] {
        return rule(Rule::needs_grad_reduce_overlap, "plan.overlap_param_gather",
                    "plan.overlap_param_gather=true needs plan.overlap_grad_reduce=true (the "
                    "distributed optimizer overlaps both through its gradient buckets; "
                    "Megatron-LM's arguments.py asserts it)",
                    {"plan.overlap_grad_reduce"});
      }))
    return false;
  // Muon (megatron/training/arguments.py and megatron/core/optimizer/__init__.py
  // _get_megatron_emerging_optimizer at NVIDIA/Megatron-LM d98e8a64): the distributed optimizer
  // becomes the layer-wise one, FSDP is asserted away, fp16 raises.
  if (p.optimizer == Optimizer::muon && zero >= 2 && !c.broken([&] {
        return rule(Rule::muon_zero_stage, "plan.zero_stage",
                    fmt::format("plan.zero_stage={} with plan.optimizer=muon: Megatron-Core's "
                                "Muon shards only its optimizer state (the layer-wise "
                                "distributed optimizer, ZeRO-1); use zero_stage 0 or 1",
                                zero),
                    {"plan.optimizer"}, {{"zero_stage", zero}});
      }))
    return false;
  if (p.optimizer == Optimizer::muon && p.precision == Precision::fp16 && !c.broken([&] {
        return rule(Rule::muon_precision, "plan.precision",
                    "plan.precision=fp16 with plan.optimizer=muon: Megatron-Core refuses "
                    "emerging optimizers with fp16; use bf16 or lower",
                    {"plan.optimizer"}, {{"precision", "fp16"}});
      }))
    return false;
  // Adam's moments in bf16 are Megatron-Core's precision-aware optimizer for Adam (its
  // --exp-avg-dtype and --exp-avg-sq-dtype); SGD's buffer and Adafactor's factors have no such
  // setting (FusedSGD and torch.optim.Adafactor keep their state in the master's fp32).
  const bool adam_like = p.optimizer == Optimizer::adam || p.optimizer == Optimizer::muon;
  if (p.bf16_moments && !adam_like && !c.broken([&] {
        return rule(Rule::moments_optimizer, "plan.bf16_moments",
                    fmt::format("plan.bf16_moments=true with plan.optimizer={}: only Adam's "
                                "moments can be kept in bf16 (the precision-aware optimizer); "
                                "use adam or muon, or bf16_moments false",
                                to_string(p.optimizer)),
                    {"plan.optimizer"}, {{"optimizer", to_string(p.optimizer)}});
      }))
    return false;
  // Adafactor's factored state on whole tensors (optimizer.h adafactor_state) counts the
  // attention, MLP and MoE matrices; a hybrid model's Mamba and Gated DeltaNet mixers would be
  // counted wrong, so that plan is refused rather than priced (on a ZeRO/FSDP shard every
  // parameter keeps one value and the mixers do not matter).
  if (p.optimizer == Optimizer::adafactor && zero < 1 && c.s().model.hybrid() && !c.broken([&] {
        return rule(Rule::adafactor_hybrid, "plan.optimizer",
                    fmt::format("plan.optimizer=adafactor with zero_stage 0 on a hybrid model "
                                "({} layers): its factored state is not modelled for Mamba and "
                                "Gated DeltaNet mixers; use zero_stage 1 or more (one value a "
                                "parameter) or another optimizer",
                                c.s().model.layers),
                    {"plan.zero_stage"}, {{"zero_stage", zero}});
      }))
    return false;
  if (p.fp8_param_gather && p.precision != Precision::fp8 && p.precision != Precision::mxfp8 &&
      !c.broken([&] {
        return rule(Rule::needs_fp8, "plan.fp8_param_gather",
                    fmt::format("plan.fp8_param_gather=true needs plan.precision fp8 or mxfp8, "
                                "not {}",
                                to_string(p.precision)),
                    {"plan.precision"}, {{"precision", to_string(p.precision)}});
      }))
    return false;
  return c.ok();
}

// Expert parallelism: the expert grid etp x ep x edp x pp must tile the same GPUs as the dense
// grid (Megatron-Core's parallel_state.py), experts split evenly, and TP in an MoE layer needs
// sequence parallelism (moe_layer.py).
bool check_experts(Rules& c) {
  const Plan& p = c.s().plan;
  const ModelSpec& m = c.s().model;
  if (!m.moe.enabled()) {
    if ((p.ep > 1 || p.etp != p.tp) && !c.broken([&] {
          return rule(Rule::needs_moe, p.ep > 1 ? "plan.ep" : "plan.etp",
                      fmt::format("plan.{}={} needs a mixture-of-experts model (model.moe); "
                                  "{} is dense",
                                  p.ep > 1 ? "ep" : "etp", p.ep > 1 ? p.ep : p.etp, m.name),
                      {"model.moe"});
        }))
      return false;
    // The expert-only keys away from their defaults: on a dense model each would be reported
    // (in the resolved plan and the report) as set while it changes nothing (Megatron-Core
    // asserts expert parallelism for the EP overlap; a dense layer has no tokens to dispatch and
    // no experts to load unevenly).
    const auto dense = [&](const char* key, std::string value, const char* what) {
      return c.broken([&] {
        return rule(Rule::needs_moe, fmt::format("plan.{}", key),
                    fmt::format("plan.{}={} ({}) needs a mixture-of-experts model (model.moe); "
                                "{} is dense",
                                key, value, what, m.name),
                    {"model.moe"});
      });
    };
    if (p.moe_overlap && !dense("moe_overlap", "true", "Megatron-Core's EP overlap")) return false;
    if (p.moe_dispatcher != MoeDispatcher::alltoall &&
        !dense("moe_dispatcher", std::string(to_string(p.moe_dispatcher)), "the token exchange"))
      return false;
    if (p.moe_imbalance != 1.0 &&
        !dense("moe_imbalance", fmt::format("{}", p.moe_imbalance), "the experts' load"))
      return false;
    if (p.moe_rank_capacity != 0 &&
        !dense("moe_rank_capacity_factor", fmt::format("{}", p.moe_rank_capacity),
               "the experts' token budget"))
      return false;
    return c.ok();
  }
  // Megatron-Core's TransformerConfig.__post_init__ (transformer_config.py at d98e8a64) admits
  // moe_expert_rank_capacity_factor only with the hybridep or ncclep flex backend; below 1 it
  // would drop tokens of a perfectly balanced routing.
  if (p.moe_rank_capacity != 0 &&
      (p.moe_rank_capacity < 1 || p.moe_dispatcher != MoeDispatcher::flex) && !c.broken([&] {
        const bool low = p.moe_rank_capacity < 1;
        return rule(Rule::moe_rank_capacity, low ? "plan.moe_rank_capacity_factor" : "plan.moe_dispatcher",
                    low ? fmt::format("plan.moe_rank_capacity_factor={} must be at least 1 (or 0: "
                                      "none); below it a balanced routing drops tokens",
                                      p.moe_rank_capacity)
                        : fmt::format("plan.moe_rank_capacity_factor={} needs plan.moe_dispatcher="
                                      "flex (HybridEP or NCCL-EP), not {}",
                                      p.moe_rank_capacity, name_of(p.moe_dispatcher)),
                    {"plan.moe_rank_capacity_factor", "plan.moe_dispatcher"},
                    {{"factor", p.moe_rank_capacity}});
      }))
    return false;
  // EP communication overlap (--overlap-moe-expert-parallel-comm) as Megatron-Core admits it
  // (TransformerConfig.__post_init__, megatron/core/transformer/transformer_config.py): expert
  // parallelism to overlap, the alltoall or flex dispatcher, no full recompute, the interleaved
  // schedule when pipelined (combined_1f1b pairs chunks), and at most one MTP layer; each named
  // (moe_overlap_admitted, below, is the same conditions at once, for the search).
  if (p.moe_overlap && !moe_overlap_admitted(m, p)) {
    auto needs = [&](bool ok, const char* path, std::string what,
                     std::vector<std::string> related) {
      return ok || c.broken([&] {
               return rule(Rule::moe_overlap, path,
                           "plan.moe_overlap=true (Megatron-Core's EP overlap) needs " + what,
                           std::move(related));
             });
    };
    if (!needs(p.ep > 1, "plan.ep", fmt::format("plan.ep > 1, not {}", p.ep),
               {"plan.moe_overlap"}) ||
        !needs(p.moe_dispatcher != MoeDispatcher::allgather, "plan.moe_dispatcher",
               "plan.moe_dispatcher alltoall or flex, not allgather", {"plan.moe_overlap"}) ||
        !needs(p.recompute != Recompute::full, "plan.recompute",
               "plan.recompute none or selective, not full", {"plan.moe_overlap"}) ||
        !needs(p.pp == 1 || p.vpp > 1, "plan.vpp",
               fmt::format("plan.vpp > 1 with plan.pp={} (the interleaved schedule)", p.pp),
               {"plan.moe_overlap", "plan.pp"}) ||
        // ZB-V's two chunks are no interleaved schedule: combined_1f1b is Megatron's own.
        // DualPipeV pairs a forward with another micro-batch's backward as combined_1f1b does.
        !needs(p.pp == 1 || pairs_passes(p.effective_schedule()), "plan.schedule",
               fmt::format("the interleaved schedule or dualpipev with plan.pp={}, not "
                           "plan.schedule={}",
                           p.pp, name_of(p.effective_schedule())),
               {"plan.moe_overlap", "plan.pp"}) ||
        !needs(m.mtp_layers <= 1, "model.mtp_layers",
               fmt::format("at most one MTP layer, not {}", m.mtp_layers), {"plan.moe_overlap"}))
      return false;
  }
  const MoeSpec& e = m.moe;
  if (e.experts % p.ep != 0 && !c.broken([&] {
        const std::vector<int64_t> fits = divisors(e.experts, 1024);
        Error err = rule(Rule::divides, "plan.ep",
                         fmt::format("plan.ep={} must divide model.moe.experts={} (each "
                                     "expert-parallel rank holds experts/ep experts)",
                                     p.ep, e.experts),
                         {"model.moe.experts"},
                         divides_values("plan.ep", p.ep, "model.moe.experts", e.experts));
        err.values["would_divide"] = fits;
        err.hint = fmt::format("ep {} divides the experts", either_text(fits));
        return err;
      }))
    return false;
  // The busiest rank's load (expert_rows, compute.cpp, scales every local expert's rows by it):
  // each token picks top_k distinct experts and a rank holds experts/ep of them, so at most
  // min(top_k, experts/ep) of a token's copies land on one rank, against top_k/ep on the mean
  // rank: min(ep, experts/top_k) times the mean. Above it the estimate would price tokens no
  // routing can send (issue 38: 8 where at most 2 is possible scaled the time linearly).
  const double most_imbalance =
      std::min(static_cast<double>(p.ep),
               static_cast<double>(e.experts) / static_cast<double>(std::max<int64_t>(1, e.top_k)));
  if (p.moe_imbalance > most_imbalance && !c.broken([&] {
        return rule(Rule::moe_imbalance, "plan.moe_imbalance",
                    fmt::format("plan.moe_imbalance={} is more than routing can put on one "
                                "expert-parallel rank: at most min(plan.ep, "
                                "model.moe.experts/model.moe.top_k) = min({}, {}/{}) = {:.6g}",
                                p.moe_imbalance, p.ep, e.experts, e.top_k, most_imbalance),
                    {"plan.ep", "model.moe.experts", "model.moe.top_k"},
                    {{"moe_imbalance", p.moe_imbalance},
                     {"most", most_imbalance},
                     {"ep", p.ep},
                     {"experts", e.experts},
                     {"top_k", e.top_k}});
      }))
    return false;
  if (e.ffn_hidden % p.etp != 0 && !c.broken([&] {
        return rule(Rule::divides, "plan.etp",
                    fmt::format("plan.etp={} must divide model.moe.ffn_hidden={}", p.etp,
                                e.ffn_hidden),
                    {"model.moe.ffn_hidden"},
                    divides_values("plan.etp", p.etp, "model.moe.ffn_hidden", e.ffn_hidden));
      }))
    return false;
  const int64_t stage_gpus = int64_t{p.tp} * p.cp * p.dp;
  const int64_t grid = int64_t{p.etp} * p.ep;
  if (stage_gpus % grid != 0 && !c.broken([&] {
        return rule(Rule::expert_grid, "plan.ep",
                    fmt::format("plan.etp*plan.ep*plan.pp={}*{}*{}={} must divide the {} GPUs "
                                "(tp*cp*dp*pp): the expert grid folds onto the same GPUs",
                                p.etp, p.ep, p.pp, grid * p.pp, stage_gpus * p.pp),
                    {"plan.etp", "plan.pp", "plan.tp", "plan.dp"},
                    {{"etp", p.etp}, {"ep", p.ep}, {"pp", p.pp}, {"gpus", stage_gpus * p.pp}});
      }))
    return false;
  if (p.tp > 1 && !p.sequence_parallel && !c.broken([&] {
        return rule(Rule::needs_sequence_parallel, "plan.sequence_parallel",
                    fmt::format("plan.tp={} in a mixture-of-experts model needs "
                                "plan.sequence_parallel=true (Megatron-Core's MoE layer "
                                "requires it in training)",
                                p.tp),
                    {"plan.tp", "model.moe"}, {{"tp", p.tp}});
      }))
    return false;
  return c.ok();
}

// A budget the plan passes (limits.h), with its rule id.
Error budget(Rule id, ErrorCode code, std::string path, std::string message,
             std::vector<std::string> related, Json values) {
  Error e = rule(id, std::move(path), std::move(message), std::move(related), std::move(values));
  e.code = code;
  return e;
}

// What an estimate of the plan costs (limits.h): stage evaluations, the balancer's work for
// "auto" layers, and the model's size (the census counts operations in 64-bit integers).
// Recompute as Megatron-Core admits it (TransformerConfig.__post_init__, megatron/core/
// transformer/transformer_config.py at NVIDIA/Megatron-LM d98e8a64): module names from its list
// ("Invalid choices for recompute_modules"), mla_up_proj only with multi-latent attention, and
// full recompute's recompute_num_layers "between 1 and num_layers_per_pipeline_rank".
bool check_recompute(Rules& c) {
  const Plan& p = c.s().plan;
  const ModelSpec& m = c.s().model;
  std::string_view bad, why;  // the first name that breaks the rule, and how
  for_each_recompute_module(p.recompute_modules, [&](std::string_view name) {
    auto listed = [&](auto& list) { return std::find(list.begin(), list.end(), name) != list.end(); };
    if (!bad.empty()) return;
    if (listed(kMegatronOnlyRecomputeModules))
      why = "a Megatron-Core module of an architecture the engine does not express";
    else if (!listed(kRecomputeModules))
      why = "not a module of Megatron-Core's --recompute-modules";
    else if (name == "mla_up_proj" && !m.mla())
      why = "Megatron-Core recomputes it only with multi-latent attention";
    if (!why.empty()) bad = name;
  });
  if (!bad.empty() && !c.broken([&] {
        Json allowed = Json::array();
        for (std::string_view k : kRecomputeModules) allowed.push_back(k);
        const std::string name = printable(std::string(bad));
        return rule(Rule::recompute_modules, "plan.recompute_modules",
                    fmt::format("plan.recompute_modules: '{}' is {} (the modules: {})", name, why,
                                fmt::join(kRecomputeModules, ", ")),
                    {}, {{"module", name}, {"allowed", allowed}});
      }))
    return false;
  const int64_t per_rank = m.layers / std::max(1, p.pp);
  if (p.recompute == Recompute::full && p.recompute_num_layers > per_rank && !c.broken([&] {
        return rule(Rule::recompute_num_layers, "plan.recompute_num_layers",
                    fmt::format("plan.recompute_num_layers={} must be between 1 and the layers "
                                "of a pipeline rank, model.layers/plan.pp={}/{}={} (Megatron-Core)",
                                p.recompute_num_layers, m.layers, p.pp, per_rank),
                    {"plan.pp", "model.layers"},
                    {{"recompute_num_layers", p.recompute_num_layers}, {"most", per_rank}});
      }))
    return false;
  return c.ok();
}

// Activation offloading as Megatron-Core admits it (TransformerConfig.__post_init__ at
// NVIDIA/Megatron-LM d98e8a64): "CPU offloading can be done only for layers less than
// num_layers", "no support for Pipeline parallelism with CPU offloading", "CPU offloading does
// not work when activation recomputation is enabled"; and the copies need the node's host link.
// Fine-grained offloading as Megatron-Core admits it (TransformerConfig.__post_init__ at
// NVIDIA/Megatron-LM d98e8a64): names from its list ("Invalid choices for offload_modules"), the
// MoE experts' modules only where there are experts (megatron/core/transformer/moe/experts.py
// reads them), "attn_proj cannot be set to offload_modules alone without core_attn", "fine_grained_
// activation_offloading cannot be enabled with cpu_offloading", and no offloading inside the MoE
// block while 'moe' is recomputed ("Cannot offload ... while recomputing the entire MoE layer").
bool check_offload_modules(Rules& c) {
  const Plan& p = c.s().plan;
  const ModelSpec& m = c.s().model;
  const std::string key = "plan.offload_modules";
  std::string_view bad, why;  // the first name that breaks the rule, and how
  for_each_recompute_module(p.offload_modules, [&](std::string_view name) {
    auto listed = [&](auto& list) { return std::find(list.begin(), list.end(), name) != list.end(); };
    if (!bad.empty()) return;
    if (name == "gdp_qkv")
      why = "a Megatron-Core module of an architecture the engine does not express "
            "(GatedDeltaProduct)";
    else if (name == "fused_group_mlp")
      why = "Megatron-Core's module of Transformer Engine's op fuser "
            "(--use-transformer-engine-op-fuser), which the engine does not model";
    else if (!listed(kOffloadModules))
      why = "not a module of Megatron-Core's --offload-modules";
    else if ((name == "expert_fc1" || name == "moe_act") && !m.moe.enabled())
      why = "a module of the MoE experts, and the model has none";
    if (!why.empty()) bad = name;
  });
  if (!bad.empty() && !c.broken([&] {
        Json allowed = Json::array();
        for (std::string_view k : kOffloadModules) allowed.push_back(k);
        const std::string name = printable(std::string(bad));
        return rule(Rule::offload_modules, key,
                    fmt::format("{}: '{}' is {} (the modules: {}) (rule offload_modules)", key,
                                name, why, fmt::join(kOffloadModules, ", ")),
                    {}, {{"module", name}, {"allowed", allowed}});
      }))
    return false;
  // The first combination Megatron-Core refuses, with the setting that makes it.
  std::string setting, because;
  Json value;
  const bool moe_recomputed = p.recomputes("moe");
  if (p.offloads("attn_proj") && !p.offloads("core_attn")) {
    setting = "offload_modules", value = "attn_proj";
    because = "attn_proj's input is core_attn's output, which core_attn's backward needs: "
              "offload core_attn too";
  } else if (p.cpu_offloading_num_layers > 0) {
    setting = "cpu_offloading_num_layers", value = p.cpu_offloading_num_layers;
    because = "fine-grained offloading cannot be enabled with layer-level CPU offloading";
  } else if (moe_recomputed && (p.offloads("expert_fc1") || p.offloads("moe_act"))) {
    setting = "recompute_modules", value = "moe";
    because = "recomputing the whole MoE layer leaves nothing inside it to offload "
              "(expert_fc1, moe_act)";
  }
  if (!setting.empty() && !c.broken([&] {
        return rule(Rule::offload_modules_conflict, key,
                    fmt::format("{}=\"{}\"{}: Megatron-Core refuses it, {} "
                                "(rule offload_modules_conflict)",
                                key, printable(p.offload_modules),
                                setting == "offload_modules"
                                    ? std::string()
                                    : fmt::format(" with plan.{}={}", setting, value.dump()),
                                because),
                    {"plan." + setting}, {{"setting", setting}, {"value", value}});
      }))
    return false;
  return c.ok();
}

// Offloading (activations or the optimizer: `key`, its value `shown`) crosses each node's link to
// host memory, which a node preset states.
bool check_host_link(Rules& c, const std::string& key, const std::string& shown) {
  for (const ClusterGroup& g : c.s().cluster.groups)
    if (g.host_link_Bps_per_dir <= 0 && !c.broken([&] {
          const std::string node = g.node_id.empty() ? "a cluster given key by key" : g.node_id;
          return rule(Rule::host_link, key,
                      fmt::format("{}={}: the node's link to host memory is not stated ({}; "
                                  "node presets state host_link_GBps_per_dir) (rule host_link)",
                                  key, shown, node),
                      {"cluster.node"}, {{"node", node}});
        }))
      return false;
  return c.ok();
}

bool check_offload(Rules& c) {
  const Plan& p = c.s().plan;
  const int64_t n = p.cpu_offloading_num_layers;
  if (n <= 0 && p.offload_modules.empty()) return c.ok();
  if (!p.offload_modules.empty() && !check_offload_modules(c)) return false;
  const ModelSpec& m = c.s().model;
  const std::string key =
      n > 0 ? "plan.cpu_offloading_num_layers" : "plan.offload_modules";
  const std::string shown =
      n > 0 ? std::to_string(n) : "\"" + printable(p.offload_modules) + "\"";
  if (n > 0 && n >= m.layers && !c.broken([&] {
        return rule(Rule::offload_layers, key,
                    fmt::format("{}={} must be below model.layers={}: Megatron-Core offloads "
                                "fewer layers than the model has (rule offload_layers)",
                                key, n, m.layers),
                    {"model.layers"}, {{"cpu_offloading_num_layers", n}, {"most", m.layers - 1}});
      }))
    return false;
  // The first setting that stops it: a pipeline, then recompute.
  const bool piped = p.pp > 1, recomputes = p.recompute != Recompute::none;
  if (n > 0 && (piped || recomputes) && !c.broken([&] {
        const std::string setting = piped ? "pp" : "recompute";
        const Json value = piped ? Json(p.pp) : Json(std::string(name_of(p.recompute)));
        return rule(Rule::offload_conflict, key,
                    fmt::format("{}={} with plan.{}={}: Megatron-Core {} (rule offload_conflict)",
                                key, n, setting, value.dump(),
                                piped ? "has no support for pipeline parallelism with CPU "
                                        "offloading"
                                      : "CPU offloading does not work with activation "
                                        "recomputation"),
                    {"plan." + setting}, {{"setting", setting}, {"value", value}});
      }))
    return false;
  return check_host_link(c, key, shown);
}

// Optimizer offloading (plan.optimizer_cpu_offload) as Megatron-Core builds it
// (megatron/core/optimizer/__init__.py, training/arguments.py and fully_sharded_optimizer.py at
// NVIDIA/Megatron-LM d98e8a64): a HybridDeviceOptimizer of Adam or SGD only, whose Adams are
// built without the precision-aware moments' dtypes (fp32 moments), refused by Megatron-FSDP
// (ZeRO-2/3), and with fp8 parameter gathers only under the delayed fp8 recipe (mxfp8 and nvfp4
// are not).
bool check_optimizer_offload(Rules& c) {
  const Plan& p = c.s().plan;
  if (!p.optimizer_cpu_offload) return c.ok();
  const std::string key = "plan.optimizer_cpu_offload";
  std::string setting, because;
  Json value;
  if (p.optimizer != Optimizer::adam && p.optimizer != Optimizer::sgd) {
    setting = "optimizer", value = std::string(to_string(p.optimizer));
    because = "the hybrid device optimizer steps Adam or SGD only";
  } else if (p.bf16_moments) {
    setting = "bf16_moments", value = true;
    because = "the hybrid device optimizer keeps Adam's moments in fp32";
  } else if (p.effective_zero_stage() >= 2) {
    setting = "zero_stage", value = p.effective_zero_stage();
    because = "Megatron-FSDP (ZeRO-2/3) does not support optimizer CPU offload; use zero_stage 0 "
              "or 1";
  } else if (p.fp8_param_gather &&
             (p.precision == Precision::mxfp8 || p.precision == Precision::nvfp4)) {
    setting = "fp8_param_gather", value = true;
    because = "fp8 parameter gathers need the delayed fp8 recipe with it (precision fp8)";
  }
  if (!setting.empty() && !c.broken([&] {
        return rule(Rule::optimizer_offload, key,
                    fmt::format("{}=true with plan.{}={}: {} (rule optimizer_offload)", key,
                                setting, value.dump(), because),
                    {"plan." + setting}, {{"setting", setting}, {"value", value}});
      }))
    return false;
  return check_host_link(c, key, "true");
}

// The master copy's width (plan.master_weights) as the software that keeps it allows: Apex's
// DistributedFusedAdam (apex/contrib/optimizers/distributed_fused_adam.py at NVIDIA/apex
// 6424da3b) keeps remainders only of bf16 weights with fp32 state (dtype fp32, param_sync_dtype
// bf16), and NeMo keeps the fp32 master for fp8 parameters (store_params with fp8_params:
// megatron_base_model.py at NVIDIA/NeMo 070a0bb1); fp32 training has no master to drop, and the
// hybrid device optimizer offloads an fp32 one.
bool check_master_weights(Rules& c) {
  const Plan& p = c.s().plan;
  if (p.master_weights == MasterWeights::fp32) return c.ok();
  const bool remainders = p.master_weights == MasterWeights::remainders;
  std::string setting, because;
  Json value;
  if (p.precision == Precision::fp32) {
    setting = "precision", value = "fp32";
    because = "fp32 training keeps no master copy (its weights are the master); use fp32";
  } else if (p.optimizer != Optimizer::adam) {
    setting = "optimizer", value = std::string(to_string(p.optimizer));
    because = "only Adam's master copy is modelled narrower (Apex's DistributedFusedAdam)";
  } else if (remainders && p.precision == Precision::fp16) {
    setting = "precision", value = "fp16";
    because = "remainders complete a bf16 weight to fp32; fp16 weights keep an fp32 master";
  } else if (p.fp8_param_gather) {
    setting = "fp8_param_gather", value = true;
    because = "fp8 parameters keep the fp32 master (NeMo's store_params with fp8_params)";
  } else if (remainders && p.bf16_moments) {
    setting = "bf16_moments", value = true;
    because = "DistributedFusedAdam keeps remainders only with fp32 state";
  } else if (p.optimizer_cpu_offload) {
    setting = "optimizer_cpu_offload", value = true;
    because = "the hybrid device optimizer offloads an fp32 master";
  }
  if (!setting.empty() && !c.broken([&] {
        return rule(Rule::master_weights, "plan.master_weights",
                    fmt::format("plan.master_weights={} with plan.{}={}: {} (rule "
                                "master_weights)",
                                to_string(p.master_weights), setting,
                                value.is_string() ? value.get<std::string>() : value.dump(),
                                because),
                    {"plan." + setting}, {{"setting", setting}, {"value", value}});
      }))
    return false;
  return c.ok();
}

bool check_budget(Rules& c) {
  const Plan& p = c.s().plan;
  const ModelSpec& m = c.s().model;
  const double parameters = count_parameters(m, m.vocab, m.seq_len).total;
  if (parameters > kMaxParameters)
    return c.broken([&] {
      return budget(Rule::max_parameters, ErrorCode::out_of_range, "model",
                    fmt::format("the model has {:.3g} parameters; at most {:.0e} are modelled",
                                parameters, kMaxParameters),
                    {"model.layers", "model.hidden", "model.vocab"},
                    {{"parameters", parameters}, {"limit", kMaxParameters}});
    });
  const bool auto_layers = std::any_of(p.stages.begin(), p.stages.end(),
                                       [](const StageAssignment& a) { return a.layers == 0; });
  const bool auto_batches =
      std::any_of(p.replicas.begin(), p.replicas.end(),
                  [](const ReplicaAssignment& a) { return a.micro_batches == 0; });
  const int64_t sets = p.replicas.empty() ? 1 : static_cast<int64_t>(p.replicas.size());
  const int64_t evaluations = sets * p.pp * (1 + (auto_layers ? 2 : 0) + (auto_batches ? 1 : 0));
  if (evaluations > kMaxStageEvaluations)
    return c.broken([&] {
      return budget(Rule::max_stage_evaluations, ErrorCode::budget_exceeded,
                    sets > 1 ? "plan.replicas" : "plan.pp",
                    fmt::format("the plan costs {} stage evaluations ({} stage(s) x {} replica "
                                "set(s){}); one estimate makes at most {}",
                                evaluations, p.pp, sets,
                                auto_layers    ? ", x3 to balance \"auto\" layers"
                                : auto_batches ? ", x2 to balance \"auto\" micro-batches"
                                               : "",
                                kMaxStageEvaluations),
                    {"plan.pp", "plan.replicas", "plan.stages"},
                    {{"evaluations", evaluations}, {"limit", kMaxStageEvaluations}});
    });
  if (auto_layers && m.layers * p.pp > kMaxBalanceWork)
    return c.broken([&] {
      return budget(Rule::max_balance_work, ErrorCode::budget_exceeded, "plan.stages",
                    fmt::format("balancing \"auto\" layers costs model.layers x plan.pp = {} x "
                                "{}; at most {} (give the stages' layers)",
                                m.layers, p.pp, kMaxBalanceWork),
                    {"model.layers", "plan.pp"},
                    {{"work", m.layers * p.pp}, {"limit", kMaxBalanceWork}});
    });
  return c.ok();
}

// Stage and replica layouts: every group used exactly, layers and micro-batches adding up.
// A hybrid pattern's mixer of `symbol` (`what`: "Mamba"): TP divides both its `divided` sizes,
// and CP over its layers is refused.
bool check_mixer(Rules& c, char symbol, Rule id, const char* what,
                 std::array<std::pair<const char*, int64_t>, 2> divided) {
  const Plan& p = c.s().plan;
  if (c.s().model.layer_pattern.find(symbol) == std::string::npos) return true;
  for (const auto& d : divided) {
    // (named copies: clang before 16 cannot capture structured bindings in the lambda)
    const char* key = d.first;
    const int64_t size = d.second;
    if (size % p.tp != 0 && !c.broken([&] {
          const std::string model_key = fmt::format("model.{}", key);
          return rule(id, "plan.tp",
                      fmt::format("plan.tp={} must divide {}={} (TP splits the {} mixer)", p.tp,
                                  model_key, size, what),
                      {model_key}, divides_values("plan.tp", p.tp, model_key, size));
        }))
      return false;
  }
  return p.cp <= 1 || c.broken([&] {
    return rule(id, "plan.cp",
                fmt::format("plan.cp={} over {} layers is not modelled (Megatron's all-to-all "
                            "from sequence to heads): use plan.cp=1",
                            p.cp, what),
                {"model.layer_pattern"}, {{"cp", p.cp}});
  });
}

bool check_layout(Rules& c) {
  const Scenario& s = c.s();
  const Plan& p = s.plan;
  const ModelSpec& m = s.model;
  const int groups = static_cast<int>(s.cluster.groups.size());
  if (!p.stages.empty() && !p.replicas.empty())
    return c.broken([&] {
      return rule(Rule::stages_or_replicas, "plan.replicas",
                  "plan.stages and plan.replicas together are not modelled: give one",
                  {"plan.stages"});
    });
  std::vector<int64_t> used(groups, 0);
  const int64_t mp = int64_t{p.tp} * p.cp;
  if (groups > 1 && p.stages.empty() && p.replicas.empty())
    return c.broken([&] {
      return rule(Rule::groups_placement, "plan.stages",
                  fmt::format("cluster has {} groups and the plan's stages ({} GPUs each) do not "
                              "fall within one group each in rank order: give plan.stages "
                              "(which group runs each pipeline stage) or plan.replicas (which "
                              "group runs each data-parallel replica)",
                              groups, times(mp, p.dp)),
                  join({"plan.pp", "plan.tp"}, c.node_paths()),
                  {{"groups", groups}, {"stage_gpus", times(mp, p.dp)}});
    });
  if (!p.stages.empty()) {
    if (static_cast<int>(p.stages.size()) != p.pp)
      return c.broken([&] {
        return rule(Rule::stage_count, "plan.stages",
                    fmt::format("plan.stages has {} entries but plan.pp={}", p.stages.size(),
                                p.pp),
                    {"plan.pp"}, {{"entries", p.stages.size()}, {"pp", p.pp}});
      });
    int64_t fixed = 0, autos = 0;
    for (size_t i = 0; i < p.stages.size(); ++i) {
      const auto& st = p.stages[i];
      const std::string path = fmt::format("plan.stages[{}]", i);
      if (st.group >= groups)
        return c.broken([&] {
          return rule(Rule::group_index, path + ".group",
                      fmt::format("{}.group={} but the cluster has {} group(s)", path, st.group,
                                  groups),
                      {}, {{"group", st.group}, {"groups", groups}});
        });
      // The embedding and the loss, where they count as a layer, share the split into chunks.
      const int64_t counted = (i == 0 && p.embedding_in_split) + (i + 1 == p.stages.size() &&
                                                                   p.loss_in_split);
      if (st.layers > 0 && (st.layers + counted) % p.vpp != 0 && !c.broken([&] {
            return rule(Rule::stage_chunks, path + ".layers",
                        fmt::format("{}.layers={}{} must be divisible by plan.vpp={}", path,
                                    st.layers, counted ? fmt::format(" + {} counted as layers", counted) : "",
                                    p.vpp),
                        {"plan.vpp"}, {{"layers", st.layers}, {"counted", counted}, {"vpp", p.vpp}});
          }))
        return false;
      fixed += st.layers;
      autos += st.layers == 0;
      used[st.group] = plus(used[st.group], times(mp, p.dp));
    }
    if (autos == 0 && fixed != m.layers && !c.broken([&] {
          return rule(Rule::stage_layers, "plan.stages",
                      fmt::format("plan.stages hold {} layers but model.layers={}", fixed,
                                  m.layers),
                      {"model.layers"},
                      {{"layers", fixed}, {"model_layers", m.layers}, {"auto_stages", 0},
                       {"vpp", p.vpp}});
        }))
      return false;
    if (autos > 0 && (m.layers - fixed < autos * p.vpp || (m.layers - fixed) % p.vpp != 0) &&
        !c.broken([&] {
          return rule(Rule::stage_layers, "plan.stages",
                      fmt::format("plan.stages: {} layers left for {} \"auto\" stage(s) "
                                  "(model.layers={}, each stage needs a multiple of vpp={})",
                                  m.layers - fixed, autos, m.layers, p.vpp),
                      {"model.layers", "plan.vpp"},
                      {{"layers", fixed}, {"model_layers", m.layers}, {"auto_stages", autos},
                       {"vpp", p.vpp}});
        }))
      return false;
  } else if (!p.replicas.empty()) {
    int64_t replicas = 0, fixed = 0, autos = 0;
    for (size_t i = 0; i < p.replicas.size(); ++i) {
      const auto& rep = p.replicas[i];
      const std::string path = fmt::format("plan.replicas[{}]", i);
      if (rep.group >= groups)
        return c.broken([&] {
          return rule(Rule::group_index, path + ".group",
                      fmt::format("{}.group={} but the cluster has {} group(s)", path, rep.group,
                                  groups),
                      {}, {{"group", rep.group}, {"groups", groups}});
        });
      replicas += rep.count;
      fixed = plus(fixed, times(rep.count, rep.micro_batches));
      autos += rep.micro_batches == 0 ? rep.count : 0;
      used[rep.group] = plus(used[rep.group], times(times(mp, p.pp), rep.count));
    }
    if (replicas != p.dp && !c.broken([&] {
          return rule(Rule::replica_count, "plan.replicas",
                      fmt::format("plan.replicas count {} replicas but plan.dp={}", replicas,
                                  p.dp),
                      {"plan.dp"}, {{"replicas", replicas}, {"dp", p.dp}});
        }))
      return false;
    if (p.global_batch % p.micro_batch != 0)
      return c.broken([&] {
        return rule(Rule::divides, "plan.global_batch",
                    fmt::format("plan.global_batch={} must be divisible by plan.micro_batch={}",
                                p.global_batch, p.micro_batch),
                    {"plan.micro_batch"},
                    divides_values("plan.micro_batch", p.micro_batch, "plan.global_batch",
                                   p.global_batch));
      });
    const int64_t total = p.global_batch / p.micro_batch;
    if (((autos == 0 && fixed != total) || (autos > 0 && total - fixed < autos)) &&
        !c.broken([&] {
          return rule(Rule::replica_batches, "plan.replicas",
                      fmt::format("plan.replicas take {} micro-batches{} but global_batch / "
                                  "micro_batch = {}",
                                  fixed, autos > 0 ? " before the \"auto\" ones" : "", total),
                      {"plan.global_batch", "plan.micro_batch"},
                      {{"micro_batches", fixed}, {"auto_replicas", autos}, {"total", total}});
        }))
      return false;
  } else {
    used[0] = times(times(mp, p.pp), p.dp);
  }
  if (groups > 1 || !p.stages.empty() || !p.replicas.empty())
    for (int g = 0; g < groups; ++g)
      if (used[g] != s.cluster.groups[g].gpus() && !c.broken([&] {
            return rule(Rule::group_gpus, p.replicas.empty() ? "plan.stages" : "plan.replicas",
                        fmt::format("the plan uses {} GPUs of cluster.groups[{}] but it has {}",
                                    used[g], g, s.cluster.groups[g].gpus()),
                        {fmt::format("cluster.groups[{}].nodes", g), "plan.tp", "plan.cp",
                         "plan.dp"},
                        {{"group", g}, {"used", used[g]}, {"gpus", s.cluster.groups[g].gpus()}});
          }))
        return false;
  return c.ok();
}

// dp left out, and the cluster's GPUs do not hold whole replicas of tp·pp·cp GPUs. On one group
// of nodes that hold whole TP groups, the node counts nearest the cluster's that would: a
// replica of R GPUs on nodes of G needs a multiple of R / gcd(R, G) nodes.
Error whole_replicas(const Scenario& s, int64_t gpus, std::vector<std::string> related) {
  const Plan& p = s.plan;
  const int64_t replica = int64_t{p.tp} * p.pp * p.cp;
  Error e = rule(Rule::whole_replicas, "plan.dp",
                 fmt::format("the cluster's {} GPUs are not divisible by tp*pp*cp={}*{}*{}={}",
                             gpus, p.tp, p.pp, p.cp, replica),
                 std::move(related),
                 {{"gpus", gpus}, {"tp", p.tp}, {"pp", p.pp}, {"cp", p.cp},
                  {"replica_gpus", replica}});
  const auto& groups = s.cluster.groups;
  const int64_t per_node = groups.front().gpus_per_node;
  if (groups.size() == 1 && per_node % p.tp == 0) {
    const int64_t step = replica / std::gcd(replica, per_node);
    std::vector<int64_t> fit;
    for (const int64_t n : nearest_multiples(groups.front().nodes, step))
      if (n <= kMaxGpus / per_node) fit.push_back(n);
    e.values["gpus_per_node"] = per_node;
    e.values["would_fit_nodes"] = fit;
    if (!fit.empty()) e.hint = "cluster.nodes=" + either_text(fit);
  }
  return e;
}

}  // namespace

// plan.rank_order (ranks.h): a permutation of Megatron-Core's five names, which its
// initialize_model_parallel accepts only when the dense and the expert grid agree on the
// pipeline groups (the asserts after building both RankGenerators).
bool check_rank_order(Rules& c, bool counts_agree) {
  const Plan& p = c.s().plan;
  const char* path = "plan.rank_order";
  if (!parse_rank_order(p.rank_order)) {
    return !c.broken([&] {
      Error e = rule(Rule::rank_order, path,
                     fmt::format("plan.rank_order=\"{}\" must name tp, cp, ep, dp and pp "
                                       "once each, joined by '-' (innermost first)",
                                       printable(p.rank_order)));
      e.code = ErrorCode::out_of_range;
      e.hint = "tp-cp-ep-dp-pp (Megatron's default) or tp-cp-ep-pp-dp";
      return e;
    }) && c.ok();
  }
  if (p.rank_order == kDefaultRankOrder) return c.ok();
  // Several groups are placed stage by stage (plan.stages, plan.replicas), not by rank order.
  if ((c.s().cluster.groups.size() > 1 || !p.stages.empty() || !p.replicas.empty()) &&
      !c.broken([&] {
        return rule(Rule::rank_order_groups, path,
                    fmt::format("plan.rank_order=\"{}\" needs one cluster group and no "
                                "plan.stages or plan.replicas: the engine places several groups "
                                "stage by stage",
                                printable(p.rank_order)),
                    {"cluster.groups"});
      }))
    return false;
  if (!counts_agree) return c.ok();
  const bool pp_last = p.rank_order.ends_with("pp");
  const size_t pp = static_cast<size_t>(Dim::pp);
  if ((!(pp_last || p.pp == 1 || p.edp() == p.dp) ||
       dense_grid(p).stride[pp] != expert_grid(p).stride[pp]) &&
      !c.broken([&] {
        return rule(Rule::rank_order_pipeline, path,
                    fmt::format("plan.rank_order=\"{}\" puts pp before another dimension, so "
                                "the expert data-parallel size tp*cp*dp/(etp*ep)={} must equal "
                                "plan.dp={}: Megatron-Core requires the dense and expert grids "
                                "to share their pipeline groups (dense models too)",
                                printable(p.rank_order), p.edp(), p.dp),
                    {"plan.ep", "plan.etp", "plan.dp"}, {{"edp", p.edp()}, {"dp", p.dp}});
      }))
    return false;
  return c.ok();
}

bool check_scenario(const Scenario& s, std::vector<Error>* errors) {
  Rules c(s, errors);
  if (!check_budget(c)) return false;  // the rules below assume counts the engine can hold
  if (!check_framework(c, s.framework) && !errors) return false;
  const Plan& p = s.plan;
  const ModelSpec& m = s.model;
  const int gpus = s.cluster.gpus();
  const int64_t product = times(times(times(p.tp, p.pp), p.cp), p.dp);
  const int per_node = s.cluster.groups.front().gpus_per_node;
  // What the model allows first (the control that causes it), then what the cluster holds.
  for (const auto& divided : {std::pair{"heads", m.heads}, std::pair{"kv_heads", m.kv_heads},
                               std::pair{"ffn_hidden", m.ffn_hidden}}) {
    const char* what = divided.first;  // (clang 14 cannot capture structured bindings)
    const int64_t size = divided.second;
    if (size % p.tp != 0 && !c.broken([&] {
          const std::string model_key = fmt::format("model.{}", what);
          Error e = rule(Rule::divides, "plan.tp",
                         fmt::format("plan.tp={} must divide {}={}", p.tp, model_key, size),
                         {model_key}, divides_values("plan.tp", p.tp, model_key, size));
          const int64_t common = std::gcd(std::gcd(m.heads, m.kv_heads), m.ffn_hidden);
          const std::vector<int64_t> fits = divisors(common, per_node);
          e.values["would_divide"] = fits;
          e.hint = fmt::format("tp {} divides the model", either_text(fits));
          return e;
        }))
      return false;
  }
  // Megatron-Core's MambaMixer splits its heads and groups over TP (mamba_mixer.py asserts
  // both divisible), its GatedDeltaNet its key and value heads (gdn.py); their CP (an all-to-all
  // from sequence to heads: mamba_context_parallel.py, GDN's the same) is not priced here.
  if (!check_mixer(c, 'M', Rule::mamba_dims, "Mamba",
                   {std::pair{"mamba.num_heads", m.mamba_heads()},
                    std::pair{"mamba.num_groups", m.mamba.groups}}) ||
      !check_mixer(c, 'G', Rule::gdn_dims, "Gated DeltaNet",
                   {std::pair{"gdn.key_heads", m.gdn.key_heads},
                    std::pair{"gdn.value_heads", m.gdn.value_heads}}))
    return false;
  if (p.vpp > 1 && p.pp == 1 && !c.broken([&] {
        return rule(Rule::vpp_needs_pp, "plan.vpp",
                    fmt::format("plan.vpp={} needs plan.pp>1 (the interleaved schedule splits "
                                "pipeline stages)",
                                p.vpp),
                    {"plan.pp"}, {{"vpp", p.vpp}});
      }))
    return false;
  // Each schedule's pipeline: model chunks for the interleaved one (any number) and ZB-V (two:
  // its V, Qi et al., ICLR 2024, sec. 5), one for the others, and a pipeline to fill for all but
  // 1F1B (sec. 3.1: ZB-H1 splits each stage's backward, one chunk per rank).
  if (!p.schedule_derived) {
    const PipelineSchedule s = p.schedule;
    struct Needs {
      bool chunks_ok;
      std::string_view text;
    };
    const Needs needs = [&]() -> Needs {
      switch (s) {
        case PipelineSchedule::one_f_one_b: return {p.vpp == 1, "plan.vpp=1"};
        case PipelineSchedule::interleaved:
          return {p.vpp > 1, "plan.vpp > 1 and plan.pp > 1"};
        case PipelineSchedule::zero_bubble: return {p.vpp == 1, "plan.pp > 1 and plan.vpp=1"};
        case PipelineSchedule::zbv:
        case PipelineSchedule::dualpipev:
          return {p.vpp == 2, "plan.pp > 1 and plan.vpp=2 (two chunks per rank in a V)"};
        case PipelineSchedule::dualpipe:  // DualPipe.step asserts num_ranks % 2 == 0
          return {p.vpp == 1 && p.pp % 2 == 0,
                  "an even plan.pp and plan.vpp=1 (each rank holds one stage of each "
                  "direction)"};
      }
      return {false, ""};
    }();
    const bool stages_ok = s == PipelineSchedule::one_f_one_b || p.pp > 1;
    if ((!needs.chunks_ok || !stages_ok) && !c.broken([&] {
          const std::string_view name = name_of(s);
          return rule(Rule::schedule_stages, "plan.schedule",
                      fmt::format("plan.schedule={} needs {}, not plan.pp={} plan.vpp={}", name,
                                  needs.text, p.pp, p.vpp),
                      {"plan.pp", "plan.vpp"},
                      {{"schedule", std::string(name)}, {"pp", p.pp}, {"vpp", p.vpp}});
        }))
      return false;
  }
  bool layers_split = false;
  if (!check_split(c, layers_split) && !errors) return false;
  if (layers_split && !c.broken([&] {
        Error e = rule(Rule::layer_split, p.vpp > 1 ? "plan.vpp" : "plan.pp",
                       fmt::format("model.layers={} must be divisible by plan.pp*plan.vpp={}*{}={}",
                                   m.layers, p.pp, p.vpp, int64_t{p.pp} * p.vpp),
                       {"model.layers", p.vpp > 1 ? "plan.pp" : "plan.vpp"},
                       {{"layers", m.layers}, {"counted", 0}, {"pp", p.pp}, {"vpp", p.vpp}});
        e.hint = split_hint(m.layers, p.pp, p.vpp, m.mtp_layers, e.values);
        return e;
      }))
    return false;
  if (!layers_split && !check_layout(c) && !errors) return false;
  const auto nodes = c.node_paths();
  if (product != gpus && p.dp_derived && !c.broken([&] {
        return whole_replicas(s, gpus, join({"plan.tp", "plan.pp", "plan.cp"}, nodes));
      }))
    return false;
  if (product != gpus && !p.dp_derived && !c.broken([&] {
        return rule(Rule::gpus_product, "plan.dp",
                    fmt::format("plan: tp*pp*cp*dp={}*{}*{}*{}={} must equal the cluster's GPU "
                                "count {}",
                                p.tp, p.pp, p.cp, p.dp, product, gpus),
                    join({"plan.tp", "plan.pp", "plan.cp"}, nodes),
                    {{"tp", p.tp}, {"pp", p.pp}, {"cp", p.cp}, {"dp", p.dp},
                     {"product", product}, {"gpus", gpus}});
      }))
    return false;
  if (product == gpus && !check_experts(c) && !errors) return false;
  if (!check_recompute(c) && !errors) return false;
  if (!check_offload(c) && !errors) return false;
  if (!check_optimizer_offload(c) && !errors) return false;
  if (!check_master_weights(c) && !errors) return false;
  const bool grid_ok = product == gpus && (int64_t{p.etp} * p.ep) > 0 &&
                       (int64_t{p.tp} * p.cp * p.dp) % (int64_t{p.etp} * p.ep) == 0;
  if (!check_rank_order(c, grid_ok) && !errors) return false;
  // A derived dp of GPUs that hold no whole replicas is no one's: the batch is not split by it
  // (one cause, one error: TP 3 on 64 GPUs says the GPUs, not the global batch too).
  const bool dp_meant = !(p.dp_derived && product != gpus);
  if (dp_meant && p.replicas.empty() && p.global_batch % (p.micro_batch * p.dp) != 0 &&
      !c.broken([&] {
        const int64_t step = int64_t{p.micro_batch} * p.dp;
        Error e = rule(Rule::batch_split, "plan.global_batch",
                       fmt::format("plan.global_batch={} must be divisible by "
                                   "plan.micro_batch*plan.dp={}*{}={}",
                                   p.global_batch, p.micro_batch, p.dp, step),
                       {"plan.micro_batch", "plan.dp"},
                       {{"global_batch", p.global_batch}, {"micro_batch", p.micro_batch},
                        {"dp", p.dp}, {"would_split", nearest_multiples(p.global_batch, step)}});
        e.hint = batch_hint(p.global_batch, step);
        return e;
      }))
    return false;
  if (dp_meant && p.effective_schedule() == PipelineSchedule::interleaved && p.replicas.empty() &&
      p.global_batch % (p.micro_batch * p.dp) == 0 &&
      p.micro_batches() % p.pp != 0 && !c.broken([&] {
        const int64_t step = int64_t{p.micro_batch} * p.dp * p.pp;
        Error e = rule(Rule::interleaved_batches, "plan.global_batch",
                       fmt::format("with plan.vpp={} the micro-batches per replica ({}) must be "
                                   "a multiple of plan.pp={}: Megatron's interleaved schedule "
                                   "runs them in groups of pp",
                                   p.vpp, p.micro_batches(), p.pp),
                       {"plan.vpp", "plan.pp", "plan.micro_batch"},
                       {{"micro_batches", p.micro_batches()}, {"pp", p.pp}, {"vpp", p.vpp},
                        {"would_split", nearest_multiples(p.global_batch, step)}});
        e.hint = batch_hint(p.global_batch, step);
        return e;
      }))
    return false;
  // DualPipeV runs at least two micro-batches per virtual stage's rank (its warm-up fills the V
  // with 2p): DualPipeV.step asserts num_chunks >= 2·ranks (deepseek-ai/DualPipe at 3da1bbe),
  // as PyTorch's ScheduleDualPipeV does. Auto-balanced replica sets are counted only in the
  // estimate, after the rules: DualPipeV takes each set's count as given.
  // DualPipe.step asserts the same of the bidirectional original, and an even count (half of
  // it in each direction); its mirrored halves run as two replicas of DualPipeV's pipeline
  // (schedule/dualpipe.cpp), which stages and replica sets of their own are not.
  const PipelineSchedule dual = p.effective_schedule();
  if (dual == PipelineSchedule::dualpipe && p.pp > 1 &&
      (!p.stages.empty() || !p.replicas.empty()) && !c.broken([&] {
        return rule(Rule::dualpipe_layout, p.stages.empty() ? "plan.replicas" : "plan.stages",
                    fmt::format("plan.schedule=dualpipe with plan.{}: DualPipe's two directions "
                                "over stages or replica sets of their own are not modelled; use "
                                "dualpipev (the same order on half the ranks) or leave them out",
                                p.stages.empty() ? "replicas" : "stages"),
                    {"plan.schedule"}, {{"schedule", "dualpipe"}});
      }))
    return false;
  if ((dual == PipelineSchedule::dualpipev || dual == PipelineSchedule::dualpipe) && p.pp > 1) {
    const std::string_view name = name_of(dual);
    const int64_t least = 2 * int64_t{p.pp};
    auto few = [&](int64_t micro_batches, std::string path) {
      return c.broken([&] {
        const int64_t step = int64_t{p.micro_batch} * p.dp;
        Error e = rule(Rule::schedule_batches, std::move(path),
                       micro_batches > 0 || p.replicas.empty()
                           ? fmt::format("plan.schedule={} needs at least 2*plan.pp={} "
                                         "micro-batches per replica, not {}",
                                         name, least, micro_batches)
                           : fmt::format("plan.schedule={} needs each replica set's "
                                         "micro-batches given, at least 2*plan.pp={} (a "
                                         "balanced count could be fewer)",
                                         name, least),
                       {"plan.schedule", "plan.pp", "plan.micro_batch"},
                       {{"schedule", std::string(name)}, {"micro_batches", micro_batches},
                        {"pp", p.pp}});
        if (p.replicas.empty()) {
          e.values["would_split"] = nearest_multiples(least * step, step);
          e.hint = batch_hint(least * step, step);
        }
        return e;
      });
    };
    if (p.replicas.empty()) {
      if (dp_meant && p.global_batch % (p.micro_batch * p.dp) == 0 &&
          p.micro_batches() < least && !few(p.micro_batches(), "plan.global_batch"))
        return false;
      if (dual == PipelineSchedule::dualpipe && dp_meant &&
          p.global_batch % (p.micro_batch * p.dp) == 0 && p.micro_batches() % 2 != 0 &&
          !c.broken([&] {
            const int64_t step = 2 * int64_t{p.micro_batch} * p.dp;
            Error e = rule(Rule::schedule_batches, "plan.global_batch",
                           fmt::format("plan.schedule=dualpipe needs an even number of "
                                       "micro-batches per replica (half in each direction), "
                                       "not {}",
                                       p.micro_batches()),
                           {"plan.schedule", "plan.micro_batch"},
                           {{"schedule", "dualpipe"}, {"micro_batches", p.micro_batches()},
                            {"pp", p.pp}});
            e.values["would_split"] = nearest_multiples(p.global_batch, step);
            e.hint = batch_hint(p.global_batch, step);
            return e;
          }))
        return false;
    } else {
      for (size_t i = 0; i < p.replicas.size(); ++i)
        if (p.replicas[i].micro_batches < least &&
            !few(p.replicas[i].micro_batches,
                 fmt::format("plan.replicas[{}].micro_batches", i)))
          return false;
    }
  }
  if (p.cp > 1 && m.seq_len % (2 * p.cp) != 0 && !c.broken([&] {
        return rule(Rule::cp_divides_sequence, "plan.cp",
                    fmt::format("seq_len={} must be divisible by 2*plan.cp={} (Megatron splits "
                                "each sequence into 2*cp chunks)",
                                m.seq_len, 2 * p.cp),
                    {"seq_len"}, {{"seq_len", m.seq_len}, {"cp", p.cp}});
      }))
    return false;
  // Megatron-Bridge's Llama4SelfAttention (llama4_utils.py at 067f987df) asserts that each of
  // the 2·cp pieces of a sequence longer than a chunk holds whole chunks.
  if (const int64_t chunk = m.attention.chunk;
      chunk > 0 && p.cp > 1 && m.seq_len > chunk && (m.seq_len / (2 * p.cp)) % chunk != 0 &&
      !c.broken([&] {
        return rule(Rule::attention_chunk, "plan.cp",
                    fmt::format("seq_len/(2*plan.cp)={} must be a multiple of "
                                "model.attention.chunk={} (each CP piece holds whole chunks)",
                                m.seq_len / (2 * p.cp), chunk),
                    {"seq_len", "model.attention.chunk"},
                    {{"chunk", chunk}, {"seq_len", m.seq_len}, {"cp", p.cp}});
      }))
    return false;
  for (const auto& g : s.cluster.groups) {
    if (g.gpu.peak_flops(p.precision)) continue;
    if (!c.broken([&] {
          std::string have;
          Json supported = Json::array();
          for (size_t q = 0; q < kPrecisions; ++q)
            if (g.gpu.peak[q]) {
              have += (have.empty() ? "" : ", ") + std::string(enum_names<Precision>()[q]);
              supported.push_back(enum_names<Precision>()[q]);
            }
          return rule(Rule::precision_supported, "plan.precision",
                      fmt::format("plan.precision={} is not supported by {} (it has: {})",
                                  to_string(p.precision), printable(g.gpu.name), have),
                      {}, {{"precision", to_string(p.precision)}, {"gpu", printable(g.gpu.name)},
                           {"supported", std::move(supported)}});
        }))
      return false;
    break;
  }
  return c.ok();
}

bool moe_overlap_admitted(const ModelSpec& m, const Plan& p) {
  return m.moe.enabled() && p.ep > 1 && p.moe_dispatcher != MoeDispatcher::allgather &&
         p.recompute != Recompute::full &&
         (p.pp == 1 || pairs_passes(p.effective_schedule())) &&
         m.mtp_layers <= 1;
}

}  // namespace stepcast
