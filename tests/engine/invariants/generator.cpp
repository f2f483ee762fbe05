// The scenario generator of the invariant tests (generator.h). A candidate is drawn in three
// parts (model, cluster, plan), the plan sized to the model and the cluster so that most
// candidates divide; the engine then decides, and a refused candidate is replaced by the next
// one drawn from the same stream, so a seed always names the same base.
#include "generator.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <random>

namespace stepcast::invariants {

namespace {

using Rng = std::mt19937_64;

bool coin(Rng& rng, double p = 0.5) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}

template <class T>
T pick(Rng& rng, const std::vector<T>& choices) {
  return choices[rng() % choices.size()];
}

// A random divisor of n no larger than `most` (1 always qualifies).
int64_t divisor(Rng& rng, int64_t n, int64_t most) {
  std::vector<int64_t> all;
  for (int64_t d = 1; d <= std::min(n, most); ++d)
    if (n % d == 0) all.push_back(d);
  return pick(rng, all);
}

const Catalog& catalog() { return builtin_catalog(); }

// What the plan needs to know of the model.
struct ModelFacts {
  int64_t layers = 1, heads = 1, kv_heads = 1, experts = 0, top_k = 1;
};

// A custom shape: dense or MoE, GQA or MLA, full or sliding-window attention.
Json custom_model(Rng& rng) {
  const int64_t heads = pick<int64_t>(rng, {8, 16, 32, 64});
  const int64_t head_dim = pick<int64_t>(rng, {64, 128});
  const int64_t hidden = heads * head_dim;
  Json m = {{"name", "custom"},
            {"layers", pick<int64_t>(rng, {2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 80})},
            {"hidden", hidden},
            {"heads", heads},
            {"kv_heads", divisor(rng, heads, 8)},
            {"ffn_hidden", hidden * pick<int64_t>(rng, {2, 3, 4})},
            {"vocab", pick<int64_t>(rng, {32000, 50257, 128256, 151936})},
            {"seq_len", pick<int64_t>(rng, {1024, 2048, 4096, 8192})},
            {"ffn_type", pick<std::string>(rng, {"gelu", "relu", "squared_relu", "swiglu", "geglu"})},
            {"position", pick<std::string>(rng, {"learned", "rope"})},
            {"tied_embeddings", coin(rng)},
            {"norm", pick<std::string>(rng, {"layernorm", "rmsnorm"})}};
  if (coin(rng, 0.1))
    m["attention"] = {{"type", "mla"}, {"kv_lora_rank", 512}, {"qk_head_dim", 128},
                      {"qk_rope_head_dim", 64}, {"v_head_dim", 128}};
  else if (coin(rng, 0.1))
    m["attention"] = {{"window", pick<int64_t>(rng, {128, 1024})},
                      {"window_layers", pick<std::string>(rng, {"all", "alternate"})}};
  if (coin(rng, 0.4)) {
    const int64_t experts = pick<int64_t>(rng, {8, 16, 32, 64, 128});
    Json moe = {{"experts", experts},
                {"top_k", std::min(experts, pick<int64_t>(rng, {1, 2, 4, 8}))},
                {"ffn_hidden", hidden / pick<int64_t>(rng, {1, 2, 4})}};
    if (coin(rng, 0.3)) moe["shared_experts"] = pick<int64_t>(rng, {1, 2});
    if (coin(rng, 0.2)) moe["first_dense_layers"] = 1;
    if (coin(rng, 0.2)) moe["layer_freq"] = 2;
    if (coin(rng, 0.3)) moe["capacity_factor"] = pick<double>(rng, {0.5, 1.0, 1.25, 2.0});
    m["moe"] = moe;
  }
  if (coin(rng, 0.05)) m["mtp_layers"] = 1;
  return m;
}

ModelFacts facts_of(const Json& model) {
  ModelFacts f;
  if (model.is_string()) {
    const ModelSpec* m = catalog().find_model(model.get<std::string>());
    f = {m->layers, m->heads, m->kv_heads, m->moe.experts, std::max<int64_t>(1, m->moe.top_k)};
  } else {
    f.layers = model["layers"];
    f.heads = model["heads"];
    f.kv_heads = model["kv_heads"];
    if (model.contains("moe")) {
      f.experts = model["moe"]["experts"];
      f.top_k = model["moe"]["top_k"];
    }
  }
  return f;
}

// The plan keys every framework may leave to its profile: set at random half the time, never
// where the profile says the software cannot.
void draw_flags(Rng& rng, Json& plan, const FrameworkProfile& fw, const ModelFacts& m) {
  auto maybe = [&](const char* key, const Json& value) {
    if (!fw.cannot_do(key) && coin(rng)) plan[key] = value;
  };
  maybe("sequence_parallel", coin(rng));
  maybe("recompute", pick<std::string>(rng, {"none", "selective", "full"}));
  if (coin(rng)) {
    if (coin(rng)) maybe("zero_stage", static_cast<int>(rng() % 4));
    else maybe("distributed_optimizer", coin(rng));
  }
  maybe("overlap_grad_reduce", coin(rng));
  maybe("overlap_param_gather", coin(rng));
  maybe("tp_comm_overlap", coin(rng));
  maybe("overlap_p2p", coin(rng));
  maybe("flash_attention", coin(rng, 0.8));
  maybe("grad_reduce_in_fp32", coin(rng));
  maybe("cuda_graphs", coin(rng, 0.3));
  maybe("bf16_moments", coin(rng, 0.3));
  maybe("precision", pick<std::string>(rng, {"bf16", "bf16", "bf16", "fp16", "fp32", "fp8",
                                             "mxfp8", "nvfp4"}));
  maybe("fp8_param_gather", coin(rng, 0.3));
  if (m.experts > 0) {
    maybe("moe_dispatcher", pick<std::string>(rng, {"alltoall", "allgather", "flex"}));
    maybe("moe_overlap", coin(rng));
    // Within what routing can put on one rank (rules.cpp): min(ep, experts/top_k).
    const double most = std::min(static_cast<double>(plan.value("ep", int64_t{1})),
                                 static_cast<double>(m.experts) / static_cast<double>(m.top_k));
    maybe("moe_imbalance", std::min(most, pick<double>(rng, {1.0, 1.2, 2.0, 8.0})));
  }
}

// tp (at most `tp_most`, inside a node) and, where the software has it, cp.
void draw_model_parallel(Rng& rng, Json& plan, const ModelFacts& m, int64_t tp_most,
                         const FrameworkProfile& fw) {
  const int64_t tp = divisor(rng, std::gcd(m.heads, m.kv_heads), tp_most);
  plan["tp"] = tp;
  if (!fw.cannot_do("cp") && coin(rng, 0.2)) plan["cp"] = pick<int64_t>(rng, {2, 4});
}

// Layers per stage of pp stages (each a multiple of vpp, at least vpp), adding up to `layers`.
std::optional<Json> explicit_split(Rng& rng, int64_t layers, int64_t pp, int64_t vpp) {
  if (layers % vpp != 0 || layers / vpp < pp) return std::nullopt;
  std::vector<int64_t> units(pp, 1);
  for (int64_t left = layers / vpp - pp; left > 0; --left) ++units[rng() % pp];
  Json out = Json::array();
  for (int64_t u : units) out.push_back(u * vpp);
  return out;
}

// One candidate document.
Json candidate(Rng& rng) {
  Json doc = Json::object();
  // The model: a preset (most), or a custom shape.
  const auto& models = catalog().models;
  doc["model"] = coin(rng, 0.7) ? Json(models[rng() % models.size()].id) : custom_model(rng);
  const ModelFacts m = facts_of(doc["model"]);
  if (coin(rng, 0.3))
    doc["seq_len"] = pick<int64_t>(rng, {1024, 2048, 4096, 8192, 32768, 131072, 1048576});
  const auto& frameworks = catalog().frameworks;
  const FrameworkProfile& fw = frameworks[rng() % frameworks.size()];
  Json plan = {{"framework", fw.id}};
  const auto& nodes = catalog().nodes;
  const int64_t mb = pick<int64_t>(rng, {1, 1, 2, 4});
  plan["micro_batch"] = mb;
  const int64_t per_replica = pick<int64_t>(rng, {1, 2, 4, 8, 16, 32, 64});

  if (coin(rng, 0.7)) {
    // One group of a node preset.
    const NodePreset& node = nodes[rng() % nodes.size()];
    const int64_t count = pick<int64_t>(rng, {1, 1, 2, 4, 8, 16, 32, 64, 128});
    doc["cluster"] = {{"node", node.id}, {"nodes", count}};
    const int64_t gpus = count * node.gpus_per_node;
    draw_model_parallel(rng, plan, m, node.gpus_per_node, fw);
    const int64_t tp = plan["tp"], cp = plan.value("cp", int64_t{1});
    if (gpus % (tp * cp) != 0) return doc;
    const int64_t pp = divisor(rng, std::gcd(m.layers, gpus / (tp * cp)), 16);
    plan["pp"] = pp;
    const int64_t dp = gpus / (tp * cp * pp);
    if (pp > 1 && coin(rng, 0.3)) plan["vpp"] = pick<int64_t>(rng, {2, 4});
    if (coin(rng)) plan["dp"] = dp;
    if (m.experts > 0 && coin(rng, 0.8)) {
      const int64_t etp = coin(rng, 0.5) ? 1 : tp;
      if (etp != tp) plan["etp"] = etp;
      plan["ep"] = divisor(rng, std::gcd(m.experts, tp * cp * dp / etp), 64);
    }
    plan["global_batch"] = mb * dp * per_replica;
    if (pp > 1 && coin(rng, 0.1)) {  // an uneven split of plan.stages on the one group
      if (auto split = explicit_split(rng, m.layers, pp, plan.value("vpp", int64_t{1}))) {
        Json stages = Json::array();
        for (const auto& l : *split)
          stages.push_back({{"group", 0}, {"layers", coin(rng, 0.3) ? Json("auto") : l}});
        plan["stages"] = stages;
      }
    }
  } else {
    // Two groups: plan.replicas, plan.stages or Megatron's rank order.
    const NodePreset& a = nodes[rng() % nodes.size()];
    const NodePreset& b = nodes[rng() % nodes.size()];
    const int64_t na = pick<int64_t>(rng, {1, 1, 2, 4}), nb = pick<int64_t>(rng, {1, 1, 2, 4});
    doc["cluster"] = {{"groups", {{{"node", a.id}, {"nodes", na}}, {{"node", b.id}, {"nodes", nb}}}}};
    if (coin(rng, 0.3)) {
      std::vector<std::string> networks;
      for (const auto& l : catalog().links)
        if (l.scope == LinkScope::inter_node) networks.push_back(l.id);
      doc["cluster"]["inter_group_link"] = pick(rng, networks);
    }
    const int64_t ga = na * a.gpus_per_node, gb = nb * b.gpus_per_node;
    draw_model_parallel(rng, plan, m, std::gcd(a.gpus_per_node, b.gpus_per_node), fw);
    const int64_t tp = plan["tp"], cp = plan.value("cp", int64_t{1});
    const int mode = static_cast<int>(rng() % 3);
    if (mode == 0) {
      // Replica sets: each replica tp·pp·cp GPUs of one group.
      const int64_t pp = divisor(rng, std::gcd(m.layers, std::gcd(ga, gb) / (tp * cp)), 8);
      plan["pp"] = pp;
      const int64_t unit = tp * pp * cp;
      if (ga % unit != 0 || gb % unit != 0) return doc;
      const int64_t ca = ga / unit, cb = gb / unit;
      Json reps = Json::array();
      if (coin(rng, 0.6)) {
        reps.push_back({{"group", 0}, {"count", ca}, {"micro_batches", "auto"}});
        reps.push_back({{"group", 1}, {"count", cb}, {"micro_batches", "auto"}});
        plan["global_batch"] = mb * (ca + cb) * per_replica;
      } else {
        const int64_t ma = pick<int64_t>(rng, {1, 2, 4, 8, 16, 32}),
                      mbb = pick<int64_t>(rng, {1, 2, 4, 8, 16, 32});
        reps.push_back({{"group", 0}, {"count", ca}, {"micro_batches", ma}});
        reps.push_back({{"group", 1}, {"count", cb}, {"micro_batches", mbb}});
        plan["global_batch"] = mb * (ca * ma + cb * mbb);
      }
      plan["replicas"] = reps;
      if (m.experts > 0 && coin(rng, 0.5)) plan["ep"] = divisor(rng, std::gcd(m.experts, tp * cp), 8);
    } else {
      // Stages on groups (mode 1) or Megatron's rank order (mode 2): tp·cp·dp GPUs per stage.
      const int64_t both = std::gcd(ga, gb);
      if (both % (tp * cp) != 0) return doc;
      const int64_t dp = divisor(rng, both / (tp * cp), 64);
      const int64_t unit = tp * cp * dp;
      const int64_t ka = ga / unit, kb = gb / unit, pp = ka + kb;
      if (pp > m.layers || pp > 32) return doc;
      plan["pp"] = pp;
      plan["global_batch"] = mb * dp * per_replica;
      if (mode == 1) {
        const int64_t vpp = coin(rng, 0.2) ? 2 : 1;
        if (vpp > 1) plan["vpp"] = vpp;
        const auto split = explicit_split(rng, m.layers, pp, vpp);
        const bool b_first = coin(rng, 0.3);
        Json stages = Json::array();
        for (int64_t i = 0; i < pp; ++i) {
          const int64_t group = (i < (b_first ? kb : ka)) == b_first ? 1 : 0;
          const Json layers = !split || coin(rng, 0.6) ? Json("auto") : (*split)[i];
          stages.push_back({{"group", group}, {"layers", layers}});
        }
        plan["stages"] = stages;
      }
      if (m.experts > 0 && coin(rng, 0.5)) plan["ep"] = divisor(rng, std::gcd(m.experts, tp * cp * dp), 16);
    }
  }
  draw_flags(rng, plan, fw, m);
  doc["plan"] = plan;
  // This cluster as measured: compute efficiencies scaled (bounded by the peak: fields.cpp).
  if (coin(rng, 0.1)) doc["calibration"] = {{"compute_scale", pick<double>(rng, {0.5, 2, 5, 20})}};
  return doc;
}

}  // namespace

// A pipeline's other schedules (ZB-H1 on one chunk a rank, ZB-V or DualPipeV on two), drawn for a
// fifth of the pipelined bases from a stream of their own so every other draw stays as it was;
// kept where the rules accept the plan with it.
std::optional<Json> with_schedule(const Json& doc, uint64_t seed) {
  Rng rng(seed ^ 0x5c4ed01e5ULL);
  const Json& plan = doc["plan"];
  if (!coin(rng, 0.2) || plan.value("pp", int64_t{1}) < 2) return std::nullopt;
  const int64_t vpp = plan.value("vpp", int64_t{1});
  if (vpp > 2) return std::nullopt;
  Json out = doc;
  if (vpp == 1 && coin(rng)) {
    out["plan"]["schedule"] = "zero_bubble";
  } else {
    out["plan"]["vpp"] = 2;
    out["plan"]["schedule"] = coin(rng) ? "zbv" : "dualpipev";
  }
  return out;
}

std::optional<Base> draw_base(uint64_t seed) {
  Rng rng(seed);
  for (int attempt = 0; attempt < kAttemptsPerSeed; ++attempt) {
    Json doc = candidate(rng);
    if (!doc.contains("plan")) continue;
    auto s = scenario_from_json(doc, catalog());
    if (!s) continue;
    if (auto other = with_schedule(doc, seed))
      if (auto t = scenario_from_json(*other, catalog()))
        return Base{seed, std::move(*other), std::move(t).value()};
    return Base{seed, std::move(doc), std::move(s).value()};
  }
  return std::nullopt;
}

std::vector<Base> draw_bases(uint64_t first, size_t count) {
  std::vector<Base> out;
  out.reserve(count);
  // Seeds without a base are rare (kAttemptsPerSeed candidates each); the bound keeps a broken
  // generator from looping.
  for (uint64_t seed = first; out.size() < count && seed < first + 4 * count + 64; ++seed)
    if (auto b = draw_base(seed)) out.push_back(std::move(*b));
  return out;
}

size_t bases_wanted(size_t fallback) {
  if (const char* v = std::getenv("STEPCAST_INVARIANT_BASES"))
    if (const long long n = std::atoll(v); n > 0) return static_cast<size_t>(n);
  return fallback;
}

uint64_t first_seed() {
  if (const char* v = std::getenv("STEPCAST_INVARIANT_SEED"))
    return std::strtoull(v, nullptr, 10);
  return 1;
}

Json explicit_hardware(const Json& document) {
  auto gpu_object = [](const std::string& id) {
    for (const auto& g : catalog().documents["gpus"])
      if (g["id"] == id) {
        Json out = g;
        out.erase("id");  // a custom GPU now: its figures may change
        return out;
      }
    return Json();
  };
  auto link_object = [](const std::string& id) {
    for (const auto& l : catalog().documents["links"])
      if (l["id"] == id) {
        Json out = l;
        out.erase("id");
        return out;
      }
    return Json();
  };
  auto group_of = [&](const Json& g) {
    if (!g.contains("node")) return g;
    const NodePreset* n = catalog().find_node(g["node"].get<std::string>());
    return Json{{"gpu", gpu_object(n->gpu)},
                {"gpus_per_node", n->gpus_per_node},
                {"intra_node_link", link_object(n->intra_node_link)},
                {"inter_node_link", link_object(n->inter_node_link)},
                {"nics_per_node", n->nics_per_node},
                {"nodes", g["nodes"]}};
  };
  Json out = document;
  Json& c = out["cluster"];
  if (c.contains("groups")) {
    for (auto& g : c["groups"]) g = group_of(g);
    if (c.contains("inter_group_link") && c["inter_group_link"].is_string())
      c["inter_group_link"] = link_object(c["inter_group_link"].get<std::string>());
  } else {
    c = group_of(c);
  }
  return out;
}

Result<Report> estimate_document(const Json& document) {
  auto s = scenario_from_json(document, catalog());
  if (!s) return s.error();
  return estimate(*s);
}

}  // namespace stepcast::invariants
