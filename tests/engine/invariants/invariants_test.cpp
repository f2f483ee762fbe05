// Physical invariants over random valid scenarios (generator.h): each test perturbs every base in
// one way the physics orders and compares the two estimates. A perturbation the rules refuse is
// skipped (and counted); a violation prints its seed, the change and both documents, so
// `stepcast estimate` reproduces it. tests/fuzz/README.md says how to run more bases.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <map>
#include <set>

#include "generator.h"
#include "stepcast/report.h"
#include "stepcast/traffic.h"

namespace stepcast::invariants {
namespace {

// Bases in the default run: a few thousand, well under a minute for the whole suite on 2 cores.
constexpr size_t kDefaultBases = 3000;

const std::vector<Base>& bases() {
  static const std::vector<Base> all = draw_bases(first_seed(), bases_wanted(kDefaultBases));
  return all;
}

// Two documents whose estimates the physics orders: `quicker` never takes longer than `slower`
// (per iteration, or per sample where `per_sample`).
struct Ordered {
  std::string change;
  Json quicker, slower;
};
using Perturbation = std::function<std::optional<Ordered>(const Base&, std::mt19937_64&)>;

// Relative slack for rounding: estimates are sums of thousands of terms.
constexpr double kRounding = 1e-9;

struct Tally {
  size_t compared = 0, refused = 0, violations = 0;
};

// Violations the engine still has in the default run (kDefaultBases from seed 1), per invariant.
// A physics fix lowers a count here; the test fails when its count differs either way (a new
// violation, or a fix this table does not record yet), and, in any other run, on any violation.
// The bases are drawn from the preset catalogue, so a new preset redraws them: these counts were
// taken with issue 36's presets (CDNA 4, Turing and the other GPUs heterogeneous clusters mix,
// Nemotron-H and Nemotron 3 Nano). Every violation of this draw is of a transformer model without
// the new keys, and estimates the same with the engine before them. Fixed since: ZeRO-3 replica
// sets with "auto" micro-batches paying only their own micro-batches' gathers (a Qwen3-30B-A3B
// plan on V100 + MI350X groups 17.9 % faster with the MI350X's peaks lowered, one on GB300 +
// H800 15.6 % faster with slower NVLink: every set now takes part in the busiest set's
// collectives, reproducers_test.cpp); more recompute faster by up to 1.3 % on interleaved ZeRO-3
// plans (a stage's exposed gathers were spread over its chunks by their compute shares, which
// move with the compute; now each chunk's follow its layers). Not fixed yet: compute scales
// above 1 slower by up to 0.7 % (seeds 1073 and 1167, interleaved DeepSpeed ZeRO-3, up to 0.19 %:
// the rest of each pass, launch waits included, is still spread over the chunks by compute
// shares; seeds 1147 and 2634, moe_overlap, up to 0.72 %: the exposed EP exchange grows by more
// than the compute shrinks), a busier expert 0.02 % faster (seed 1073). Fixed too: an RTX 4090
// set's lower HBM bandwidth 0.7 % faster (the gradient sync measured apart from the other set's
// parameter gather).
// (Fixed too: flex's EP dispatch above its NICs' line rate in the traffic report, which counted
// the copies flex never sends: traffic_test.cpp.)
// Redrawn with the torchtitan profile (round 3, stop 44). Fixed since: under moe_overlap a pass's
// compute hid the other pass's token exchange and, again, the TP collectives of its GEMMs or the
// ZeRO gradient reduce (a lower peak faster by up to 0.23 %, seeds 1134, 1795, 2349; a compute
// scale above 1 slower, seed 1134: reproducers_test.cpp); ZeRO-3 replica sets' "auto"
// micro-batches balanced by a few rounds at the previous split's busiest count (seed 446, 1.6 %
// slower with a compute scale of 5 than of 2; now the exact balance of balance.h); a stage's
// launch waits spread over its chunks by their compute shares (seed 1746, 0.15 %: each chunk
// now waits for its own launches); an interleaved ZeRO-3 plan with moe_overlap whose chunks each
// gathered their own layers' parameters behind a share of the pass that gave them its exposed
// EP exchange by compute share, which moved to the output layer's chunk as the GEMMs got faster
// (seed 2634: a compute scale of 20 0.58 % slower than 2; the pass's communication now goes
// with each chunk's layers, StageCost::chunk_layers_share); "auto" micro-batches of ZeRO-3
// replica sets balanced on the pipelines' ends while each set's embedding and output gradient
// reduce-scatters, one per micro-batch after its last backward, ran past them (seed 2216,
// BLOOM-176B under pytorch-fsdp on an A800 and a B200 set: the B200's HBM bandwidth x 0.444
// 0.59 % faster, one micro-batch moved; the balance now takes what follows each pipeline,
// replica_sets.cpp). None known in the default run. Fixed at 10,000 bases (stop 47): under the
// EP overlap ZeRO-3 hid behind each pass apart (seeds 8158, 3776: the overlap 0.41 % slower);
// a ring across groups took its lowest-bandwidth hop's node count (seed 8205: fewer NICs 2.1 %
// faster); a host-bound MoE forward left CP's exposed ring out of the GPU's time (seed 3971: a
// lower peak 0.003 % faster); reproducers_test.cpp. What 100,000 bases still find:
// tests/fuzz/README.md. Known since the generator draws the pipeline schedules too (ZB-H1, ZB-V
// and DualPipeV on a fifth of pipelined bases, stop 47): zero-bubble plans whose passes carry
// exposed communication (ZeRO-3's gathers, CP's ring) hide more of it behind a slower GPU's F and
// B while W, which fills the bubble, grows: the bubble shrinks by more than the compute grows
// (seed 26: ZB-H1 on RTX 4090s under torchtitan, pp 2, cp 4: peaks x 0.891 0.012 % faster, the
// bubble 0.15 ms shorter, the exposed DP 0.48 ms shorter, the compute 0.66 ms longer). Since
// ZeRO-3's backward on those schedules hides behind the input-gradient block alone
// (stage_cost.cpp, issue 34) the lower peaks' violations are gone. The generator draws a preset
// model by its index in the catalogue, so a new preset moves the draws (the GLM-4.5,
// DeepSeek-V3.1 and Llama 4 presets did). What the default run finds: a compute scale up, seeds
// 273 (a torchtitan ZB-H1 plan bound by the CPU's launches, 0.78 % slower: its W savings become
// launch waits in B) and 1983 (under 0.001 %); TP comm overlap on, seeds 244 (0.16 %) and 2211
// (0.003 %). Fixed since (stop 49): each pass, and a zero-bubble schedule's W block apart, waits
// for its own launches (one wait for both passes moved a faster W's savings into B's wait:
// seeds 273 and 1983; at 100,000 bases 169 violations became 60); "auto" micro-batches moved from
// the affine balance while the whole step gets shorter (seed 244: a split the TP overlap moved
// was slower than its neighbour; 60 became 47); ZeRO-3's embedding and output-layer
// reduce-scatters in each micro-batch's backward, not all after the last one (a doubled batch
// dearer a sample by up to 0.45 %, seed 55405; 47 became 29, seed 85216 new at 0.015 %); the
// gradient sync behind a simulated pipeline's own drain, not the closed form's (seed 47659; 29
// became 17). Fixed since (stop 50): without pipelining the EP overlap's first forward and last
// backward run unpaired, as Megatron's combined_1f1b runs them, and the gradient sync hides
// behind that last backward (seed 2211: the TP overlap 0.003 % slower; seeds 62679, 45686 and
// 91743, one micro-batch, which pairs nothing: a compute scale up 0.04 to 0.71 % slower); a
// forward and the backward paired with it wait for their launches together (seed 12985).
const std::map<std::string, size_t> kKnownViolations = {};

// Reports the violations of the running test: failures, unless the default run finds exactly
// the known ones.
void report(const std::vector<std::string>& violations) {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const auto known = kKnownViolations.find(test);
  const bool default_run = bases_wanted(kDefaultBases) == kDefaultBases && first_seed() == 1;
  const size_t allowed = default_run && known != kKnownViolations.end() ? known->second : 0;
  if (violations.size() == allowed) {
    if (allowed > 0) std::printf("%zu known violations (kKnownViolations)\n", allowed);
    return;
  }
  for (const auto& v : violations) ADD_FAILURE() << v;
  ADD_FAILURE() << violations.size() << " violations, " << allowed
                << " known: a new violation, or a fix to record in kKnownViolations";
}

std::string violation_text(uint64_t seed, const std::string& change, double quick_s,
                           double slow_s, const Json& quicker, const Json& slower) {
  return fmt::format("seed {}: {}: {:.9g} s, against {:.9g} s ({:+.3f} %)\n  {}\n  {}", seed,
                     change, quick_s, slow_s, 100 * (quick_s / slow_s - 1), quicker.dump(),
                     slower.dump());
}

// The document with every pipeline stage's layers as the base's estimate placed them: "auto"
// layers (given, or implied by the rank order on several groups) written out. Every ordering
// below compares one layout on two machines or plans: "auto" layers are the engine's plan,
// balanced by the slowest stage's time per micro-batch within each stage's memory (layout.cpp),
// and a change that moves them may land on a split that is better for reasons the balancer does
// not weigh (the fill of a short pipeline, each stage's gradient sync). That the balancer's
// split is the best one is not what these invariants test.
Json pinned_layers(const Base& b) {
  Json doc = b.document;
  Json& plan = doc["plan"];
  const bool implied = doc["cluster"].contains("groups") && !plan.contains("replicas") &&
                       plan.value("pp", 1) > 1;
  if (!plan.contains("stages") && !implied) return doc;
  const Report r = estimate(b.scenario);
  Json stages = Json::array();
  for (const auto& st : r.stages) stages.push_back({{"group", st.group}, {"layers", st.layers}});
  plan["stages"] = stages;
  return doc;
}

// Where the physics bounds a quantity without ordering the pair: `bounded` says whether the
// pair, out of order, stays within that bound, given its two estimates (the interleaved order's
// steady state: BiggerBatchNeverSlowerPerSample).
using Bound = std::function<bool(const Ordered&, const Report& quicker, const Report& slower)>;

// Runs one ordering over every base (its layers pinned): `measure` reads the quantity compared
// (iteration time, time per sample); a pair out of order within `bounded` is no violation.
Tally check_order(const Perturbation& perturb,
                  const std::function<double(const Report&, const Json&)>& measure,
                  const Bound& bounded = nullptr) {
  Tally t;
  std::vector<std::string> violations;
  for (const Base& base : bases()) {
    std::mt19937_64 rng(base.seed * 0x9E3779B97F4A7C15ull + 17);
    Base pinned{base.seed, pinned_layers(base), base.scenario};
    const auto pair = perturb(pinned, rng);
    if (!pair) continue;
    const auto quick = estimate_document(pair->quicker);
    const auto slow = estimate_document(pair->slower);
    if (!quick || !slow) {
      ++t.refused;
      continue;
    }
    ++t.compared;
    const double q = measure(*quick, pair->quicker), s = measure(*slow, pair->slower);
    if (q <= s * (1 + kRounding) || (bounded && bounded(*pair, *quick, *slow))) continue;
    ++t.violations;
    violations.push_back(
        violation_text(base.seed, pair->change, q, s, pair->quicker, pair->slower));
  }
  std::printf("%zu bases: %zu compared, %zu refused by the rules, %zu violations\n",
              bases().size(), t.compared, t.refused, t.violations);
  report(violations);
  return t;
}

double iteration_s(const Report& r, const Json&) { return r.iteration_time_s; }
double per_sample_s(const Report& r, const Json& doc) {
  return r.iteration_time_s / doc["plan"]["global_batch"].get<double>();
}

// One group of an explicit document (chosen by rng).
Json& one_group(Json& doc, std::mt19937_64& rng) {
  Json& c = doc["cluster"];
  if (!c.contains("groups")) return c;
  return c["groups"][rng() % c["groups"].size()];
}

double factor(std::mt19937_64& rng) {
  return std::uniform_real_distribution<double>(0.3, 0.95)(rng);
}

// The base with its hardware written out, against the same with `slow` applied: `slow` edits
// the document and names its change (none: the base has nothing to slow).
using Slowing = std::function<std::optional<std::string>(Json&, std::mt19937_64&)>;
Perturbation slower_hardware(Slowing slow) {
  return [slow](const Base& b, std::mt19937_64& rng) -> std::optional<Ordered> {
    Ordered o{"", explicit_hardware(b.document), {}};
    o.slower = o.quicker;
    auto change = slow(o.slower, rng);
    if (!change) return std::nullopt;
    o.change = *change;
    return o;
  };
}

// --- Slower hardware is never faster ---------------------------------------------------------

// Every GEMM, attention and element-wise kernel takes at least as long on a GPU with a lower
// dense peak: nothing the GPU computes speeds up, and the communication does not depend on it.
TEST(Invariants, LowerPeakNeverFaster) {
  const Tally t = check_order(
      slower_hardware([](Json& doc, std::mt19937_64& rng) -> std::optional<std::string> {
        const double f = factor(rng);
        Json& gpu = one_group(doc, rng)["gpu"];
        for (auto& [key, peak] : gpu["peak_tflops"].items()) peak = peak.get<double>() * f;
        return fmt::format("{}'s dense peaks x {:.3f}", gpu.value("name", "GPU"), f);
      }),
      iteration_s);
  EXPECT_GT(t.compared, bases().size() / 2);
}

// Element-wise kernels, memory-bound GEMMs and the optimizer read HBM: lower bandwidth never
// shortens them.
TEST(Invariants, LowerMemoryBandwidthNeverFaster) {
  const Tally t = check_order(
      slower_hardware([](Json& doc, std::mt19937_64& rng) -> std::optional<std::string> {
        const double f = factor(rng);
        Json& gpu = one_group(doc, rng)["gpu"];
        gpu["memory_bandwidth_GBps"] = gpu["memory_bandwidth_GBps"].get<double>() * f;
        return fmt::format("{}'s HBM bandwidth x {:.3f}", gpu.value("name", "GPU"), f);
      }),
      iteration_s);
  EXPECT_GT(t.compared, bases().size() / 2);
}

// Every collective crossing a slower link (lower bus bandwidth, or a higher latency floor) takes
// at least as long, and nothing else gets faster: a ring runs at the pace of its slowest hop.
TEST(Invariants, SlowerLinkNeverFaster) {
  const Tally t = check_order(
      slower_hardware([](Json& doc, std::mt19937_64& rng) -> std::optional<std::string> {
        Json& c = doc["cluster"];
        Json* link = nullptr;
        std::string where;
        if (c.contains("inter_group_link") && rng() % 3 == 0) {
          link = &c["inter_group_link"];
          where = "inter_group_link";
        } else {
          where = rng() % 2 == 0 ? "intra_node_link" : "inter_node_link";
          link = &one_group(doc, rng)[where];
        }
        const double f = factor(rng);
        if (rng() % 4 == 0) {
          (*link)["latency_us"] = link->value("latency_us", 0.0) / f + 1;
          return fmt::format("{} latency / {:.3f} + 1 us", where, f);
        }
        for (const char* key : {"bandwidth_GBps_per_dir", "busbw_GBps", "allreduce_busbw_GBps"})
          if (link->contains(key)) (*link)[key] = (*link)[key].get<double>() * f;
        return fmt::format("{} bandwidths x {:.3f}", where, f);
      }),
      iteration_s);
  EXPECT_GT(t.compared, bases().size() / 2);
}

// Fewer network ports per node share the same traffic: each group's share of the node's NICs
// shrinks, never grows.
TEST(Invariants, FewerNicsNeverFaster) {
  const Tally t = check_order(
      slower_hardware([](Json& doc, std::mt19937_64& rng) -> std::optional<std::string> {
        Json& g = one_group(doc, rng);
        const int nics = g["nics_per_node"];
        if (nics <= 1) return std::nullopt;
        const int fewer = 1 + static_cast<int>(rng() % static_cast<uint64_t>(nics - 1));
        g["nics_per_node"] = fewer;
        return fmt::format("nics_per_node {} -> {}", nics, fewer);
      }),
      iteration_s);
  EXPECT_GT(t.compared, bases().size() / 4);
}

// The calibration's network scale multiplies every link's bus bandwidth, inter-group included.
TEST(Invariants, NetworkScaleDownNeverFaster) {
  const Tally t = check_order(
      [](const Base& b, std::mt19937_64& rng) -> std::optional<Ordered> {
        if (b.document.contains("calibration")) return std::nullopt;
        Ordered o{"", b.document, b.document};
        const double f = factor(rng);
        o.slower["calibration"] = {{"network_scale", f}};
        o.change = fmt::format("calibration.network_scale 1 -> {:.3f}", f);
        return o;
      },
      iteration_s);
  EXPECT_GT(t.compared, bases().size() / 2);
}

// Higher compute efficiency (calibration.compute_scale) shortens every kernel; the communication
// it overlaps can only be less hidden by what it saves, never more exposed than it saves.
TEST(Invariants, ComputeScaleUpNeverSlower) {
  const Tally t = check_order(
      [](const Base& b, std::mt19937_64& rng) -> std::optional<Ordered> {
        if (b.document.contains("calibration")) return std::nullopt;
        const std::vector<double> scales = {0.5, 1, 2, 5, 20};
        const size_t i = rng() % (scales.size() - 1);
        const size_t j = i + 1 + rng() % (scales.size() - 1 - i);
        Ordered o{fmt::format("calibration.compute_scale {} -> {}", scales[i], scales[j]),
                  b.document, b.document};
        o.quicker["calibration"] = {{"compute_scale", scales[j]}};
        o.slower["calibration"] = {{"compute_scale", scales[i]}};
        return o;
      },
      iteration_s);
  EXPECT_GT(t.compared, bases().size() / 2);
}

// --- Overlap is never slower than none ---------------------------------------------------------

// `on` and `off` set on the plan of a base; skipped where the base's plan cannot have it.
Perturbation overlap(const std::string& key, Json on_extra = Json::object(),
                     Json off_extra = Json::object()) {
  return [=](const Base& b, std::mt19937_64&) -> std::optional<Ordered> {
    Ordered o{key + " on, against off", b.document, b.document};
    o.quicker["plan"][key] = true;
    o.slower["plan"][key] = false;
    for (auto& [k, v] : on_extra.items()) o.quicker["plan"][k] = v;
    for (auto& [k, v] : off_extra.items()) o.slower["plan"][k] = v;
    return o;
  };
}

// Gradient buckets reduced during the last backward: the parameter all-gather needs the
// gradient overlap in Megatron-LM, so off turns both off.
TEST(Invariants, GradReduceOverlapNeverSlower) {
  const Tally t =
      check_order(overlap("overlap_grad_reduce", {}, {{"overlap_param_gather", false}}),
                  iteration_s);
  EXPECT_GT(t.compared, bases().size() / 2);
}

TEST(Invariants, ParamGatherOverlapNeverSlower) {
  const Tally t =
      check_order(overlap("overlap_param_gather", {{"overlap_grad_reduce", true}},
                          {{"overlap_grad_reduce", true}}),
                  iteration_s);
  EXPECT_GT(t.compared, bases().size() / 4);
}

TEST(Invariants, TpCommOverlapNeverSlower) {
  const Tally t = check_order(
      overlap("tp_comm_overlap", {{"sequence_parallel", true}}, {{"sequence_parallel", true}}),
      iteration_s);
  EXPECT_GT(t.compared, bases().size() / 4);
}

// Megatron-Core admits the EP overlap with the alltoall or flex dispatcher and without full
// recompute: where the base has neither, both documents take alltoall and selective recompute.
TEST(Invariants, ExpertParallelOverlapNeverSlower) {
  const Tally t = check_order(
      [](const Base& b, std::mt19937_64& rng) -> std::optional<Ordered> {
        if (!b.scenario.model.moe.enabled() || b.scenario.plan.ep <= 1) return std::nullopt;
        Json extra = Json::object();
        if (b.scenario.plan.moe_dispatcher == MoeDispatcher::allgather)
          extra["moe_dispatcher"] = "alltoall";
        if (b.scenario.plan.recompute == Recompute::full) extra["recompute"] = "selective";
        return overlap("moe_overlap", extra, extra)(b, rng);
      },
      iteration_s);
  EXPECT_GT(t.compared, 0u);
}

TEST(Invariants, PipelineP2pOverlapNeverSlower) {
  const Tally t = check_order(overlap("overlap_p2p"), iteration_s);
  EXPECT_GT(t.compared, bases().size() / 4);
}

// --- Work ---------------------------------------------------------------------------------------

// Selective recompute re-runs the attention core, full recompute the whole forward (and its TP
// and EP communication): each runs a superset of the one before, with no less memory traffic.
// (With "auto" layers the memory recompute frees may allow a faster split: that is what
// recompute is for, and why the layers stay the base's.)
TEST(Invariants, MoreRecomputeNeverFaster) {
  const Tally t = check_order(
      [](const Base& b, std::mt19937_64& rng) -> std::optional<Ordered> {
        const std::vector<std::string> modes = {"none", "selective", "full"};
        const size_t i = rng() % 2, j = i + 1 + rng() % (2 - i);
        Ordered o{fmt::format("recompute {} -> {}", modes[i], modes[j]), b.document, b.document};
        o.quicker["plan"]["recompute"] = modes[i];
        o.slower["plan"]["recompute"] = modes[j];
        return o;
      },
      iteration_s);
  EXPECT_GT(t.compared, bases().size() / 2);
}

// Twice the global batch: twice the micro-batches per replica, each replica set's count (as the
// base's estimate split them, where "auto") doubled. Every micro-batch still runs, so the
// iteration is no shorter; the pipeline's fill and drain and the gradient sync are paid once per
// iteration, so a sample costs no more. (With "auto" micro-batches the batch itself may divide
// better over the sets' counts: 9,472 micro-batches over 8 slow and 288 fast replicas leave the
// slow ones 32 each, 18,944 only 28.)
Perturbation doubled_batch() {
  return [](const Base& b, std::mt19937_64&) -> std::optional<Ordered> {
    Ordered o{"global_batch x 2", b.document, b.document};
    const Report r = estimate(b.scenario);
    if (b.scenario.plan.replicas.empty() && r.replicas.size() > 1) {
      // Replica sets placed by the rank order: written out.
      Json sets = Json::array();
      for (const auto& set : r.replicas)
        sets.push_back({{"group", set.group}, {"count", set.count}, {"micro_batches", 1}});
      o.quicker["plan"]["replicas"] = sets;
    }
    Json& plan = o.quicker["plan"];
    if (plan.contains("replicas"))
      for (size_t i = 0; i < plan["replicas"].size(); ++i)
        plan["replicas"][i]["micro_batches"] = r.replicas[i].micro_batches;
    o.slower = o.quicker;
    Json& doubled = o.slower["plan"];
    doubled["global_batch"] = doubled["global_batch"].get<int64_t>() * 2;
    if (doubled.contains("replicas"))
      for (auto& set : doubled["replicas"])
        set["micro_batches"] = set["micro_batches"].get<int64_t>() * 2;
    return o;
  };
}

TEST(Invariants, BiggerBatchNeverShorterIteration) {
  const Tally t = check_order(doubled_batch(), iteration_s);
  EXPECT_GT(t.compared, bases().size() / 2);
}

// The global batch times `k`: each replica set's micro-batches too.
Json times_batch(Json doc, int64_t k) {
  Json& plan = doc["plan"];
  plan["global_batch"] = plan["global_batch"].get<int64_t>() * k;
  if (plan.contains("replicas"))
    for (auto& set : plan["replicas"]) set["micro_batches"] = set["micro_batches"].get<int64_t>() * k;
  return doc;
}

// A sample costs no more in a bigger batch where the pipeline's steady state runs at its
// bottleneck's pace, as in 1F1B ((m - 1)·max u + sum u) and the interleaved schedule on
// identical chunks ((m + (p - 1)/v)·u): the fill and drain are paid once. Megatron's interleaved
// order on chunks that differ can cycle slower than any rank works while its first groups run
// faster than that cycle (Pipeline.InterleavedUnevenChunksCanCycleSlowerThanTheirFirstGroup,
// estimate_test.cpp, by hand; seed 71456 at 100,000 bases,
// Reproducers.InterleavedUnevenChunksGetDearerPerSampleTowardsTheirCycle): time per sample then
// rises with the micro-batches towards the cycle. What the physics orders there is that the
// rise never passes the steady state: the doubled batch is never dearer per sample than a batch
// 16 times the smaller one (the pipeline's time is affine in the groups from the first on, so a
// sample's cost moves monotonically between the two), and the rise is the pipeline's: without
// its bubble a sample still costs no more. The other schedules (1F1B, ZB-H1, ZB-V, DualPipeV)
// keep the strict order.
TEST(Invariants, BiggerBatchNeverSlowerPerSample) {
  size_t towards_cycle = 0;
  const Bound within_interleaved_cycle = [&](const Ordered& o, const Report& bigger,
                                             const Report& smaller) {
    const Json& plan = o.slower["plan"];
    if (plan.value("vpp", 1) <= 1 || plan.value("schedule", "interleaved") != "interleaved")
      return false;
    const auto unbubbled = [](const Report& r, const Json& doc) {
      return (r.iteration_time_s - r.breakdown.bubble) / doc["plan"]["global_batch"].get<double>();
    };
    if (unbubbled(bigger, o.quicker) > unbubbled(smaller, o.slower) * (1 + kRounding))
      return false;
    const Json steady = times_batch(o.slower, 16);
    const auto r = estimate_document(steady);
    if (!r || per_sample_s(bigger, o.quicker) > per_sample_s(*r, steady) * (1 + kRounding))
      return false;
    ++towards_cycle;
    return true;
  };
  const Tally t = check_order(
      [](const Base& b, std::mt19937_64& rng) -> std::optional<Ordered> {
        auto o = doubled_batch()(b, rng);
        std::swap(o->quicker, o->slower);  // the bigger batch is the quicker per sample
        return o;
      },
      per_sample_s, within_interleaved_cycle);
  std::printf("%zu interleaved plans dearer per sample towards their steady state\n",
              towards_cycle);
  EXPECT_GT(t.compared, bases().size() / 2);
}

// A busier expert never speeds the layer up: more tokens on the busiest rank, never fewer (up to
// what routing can put on one rank, min(ep, experts/top_k): rules.cpp refuses more).
TEST(Invariants, MoeImbalanceNeverFaster) {
  const Tally t = check_order(
      [](const Base& b, std::mt19937_64& rng) -> std::optional<Ordered> {
        const MoeSpec& e = b.scenario.model.moe;
        if (!e.enabled()) return std::nullopt;
        const double most = std::min(static_cast<double>(b.scenario.plan.ep),
                                     static_cast<double>(e.experts) / static_cast<double>(e.top_k));
        if (most <= 1) return std::nullopt;
        const double more = std::uniform_real_distribution<double>(1, most)(rng);
        Ordered o{fmt::format("moe_imbalance 1 -> {:.3f}", more), b.document, b.document};
        o.quicker["plan"]["moe_imbalance"] = 1;
        o.slower["plan"]["moe_imbalance"] = more;
        return o;
      },
      iteration_s);
  EXPECT_GT(t.compared, 0u);
}

// --- Each report on its own ------------------------------------------------------------------

// Hardware FLOP/s never exceed the dense peak: HFU counts the work the GPUs run (recompute
// included) at no more than their peak. MFU counts Megatron-LM's model FLOPs, which can be more
// than that work (a hybrid's Mamba mixer counted 2 x hidden wide: seed 9750, Nemotron 3 Nano, MFU
// 1.009 before HFU counted the work): scaled to the work it stays within HFU, and an MFU above 1
// comes with the report's warning.
TEST(Invariants, UtilisationWithinPeak) {
  std::vector<std::string> violations;
  for (const Base& b : bases()) {
    const Report r = estimate(b.scenario);
    const ModelSpec& m = b.scenario.model;
    const double seq = static_cast<double>(m.seq_len);
    // The work as HFU counts it: chunked attention within its chunks (summary.cpp), where
    // Megatron-LM's count takes it full and causal (Llama 4 at 1 M tokens: MFU 2.87).
    const double count_over_work =
        model_flops_per_sample(m, seq) /
        (3 * layers_forward_flops(m, seq, true, /*chunked=*/true));
    bool warned = false;
    for (const auto& w : r.warnings) warned = warned || w.rfind("MFU ", 0) == 0;
    if (r.mfu >= 0 && r.hfu <= 1 + kRounding &&
        r.mfu <= r.hfu * count_over_work * (1 + kRounding) && (r.mfu <= 1 || warned))
      continue;
    violations.push_back(fmt::format("seed {}: MFU {:.4f}, HFU {:.4f}\n  {}", b.seed, r.mfu,
                                     r.hfu, b.document.dump()));
  }
  std::printf("%zu bases, %zu violations\n", bases().size(), violations.size());
  report(violations);
}

// The traffic report's effective bandwidth of each operation against the line rate it could use:
// never above it, except an all-reduce on a fabric that reduces in the switch (NVLS: the
// link's allreduce_busbw above its line rate, docs/scenario.md).
TEST(Invariants, TrafficBandwidthWithinLineRate) {
  std::vector<std::string> violations;
  size_t checked = 0;
  for (const Base& b : bases()) {
    if (!b.scenario.plan.replicas.empty()) continue;  // traffic() covers one replica set
    const auto t = traffic(b.scenario, {TrafficLevel::node});
    if (!t) continue;
    ++checked;
    for (const auto& op : t->bandwidth) {
      if (op.fraction_of_peak <= 1 + kRounding) continue;
      if (op.op.kind == CollectiveKind::all_reduce) continue;  // NVLS (see above)
      violations.push_back(fmt::format("seed {}: stage {} {} ({}) at {:.3f} of its line rate\n  {}",
                                       b.seed, op.stage, op.op.what, op.op.link,
                                       op.fraction_of_peak, b.document.dump()));
      break;
    }
  }
  std::printf("%zu bases checked, %zu violations\n", checked, violations.size());
  report(violations);
  EXPECT_GT(checked, bases().size() / 2);
}

// The breakdown adds up to the iteration time, every part non-negative, every figure finite.
TEST(Invariants, BreakdownAddsUp) {
  for (const Base& b : bases()) {
    const Report r = estimate(b.scenario);
    const Breakdown& k = r.breakdown;
    const double parts[] = {k.forward, k.backward, k.recompute, k.tp_comm, k.cp_comm, k.ep_comm,
                            k.pp_comm, k.bubble, k.dp_comm, k.optimizer, k.other, k.host};
    const double rounding = kRounding * r.iteration_time_s;
    bool ok = std::isfinite(r.iteration_time_s) && r.iteration_time_s > 0 &&
              std::abs(k.sum() - r.iteration_time_s) <= rounding;
    for (double p : parts) ok = ok && std::isfinite(p) && p >= -rounding;
    if (!ok)
      ADD_FAILURE() << fmt::format("seed {}: breakdown sums to {} of {} s\n  {}", b.seed, k.sum(),
                                   r.iteration_time_s, b.document.dump());
  }
}

// The same document read twice estimates to the same report, bit for bit.
TEST(Invariants, Deterministic) {
  for (const Base& b : bases()) {
    const auto again = scenario_from_json(b.document, builtin_catalog());
    ASSERT_TRUE(again.ok());
    const auto first = report_text(estimate(b.scenario)), second = report_text(estimate(*again));
    ASSERT_EQ(first.ok(), second.ok());
    if (first.ok() && *first != *second)
      ADD_FAILURE() << fmt::format("seed {}: two estimates differ\n  {}", b.seed,
                                   b.document.dump());
  }
}

// The generator itself: deterministic, and its bases cover what the invariants must hold over.
TEST(Invariants, GeneratorCoversTheScenarioSpace) {
  const auto again = draw_base(bases().front().seed);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->document, bases().front().document);
  size_t moe = 0, groups = 0, stages = 0, replicas = 0, auto_layers = 0, auto_batches = 0;
  std::set<std::string> frameworks, precisions;
  for (const Base& b : bases()) {
    const Plan& p = b.scenario.plan;
    moe += b.scenario.model.moe.enabled();
    groups += b.scenario.cluster.groups.size() > 1;
    stages += !p.stages.empty();
    replicas += !p.replicas.empty();
    for (const auto& s : p.stages) auto_layers += s.layers == 0;
    for (const auto& r : p.replicas) auto_batches += r.micro_batches == 0;
    frameworks.insert(p.framework);
    precisions.insert(to_string(p.precision));
  }
  std::printf("%zu bases: %zu MoE, %zu on two groups (%zu with stages, %zu with replicas), %zu "
              "frameworks, %zu precisions\n",
              bases().size(), moe, groups, stages, replicas, frameworks.size(), precisions.size());
  EXPECT_EQ(frameworks.size(), builtin_catalog().frameworks.size());
  EXPECT_GE(precisions.size(), 5u);
  EXPECT_GT(moe, bases().size() / 10);
  EXPECT_GT(groups, bases().size() / 20);
  EXPECT_GT(stages, 0u);
  EXPECT_GT(replicas, 0u);
  EXPECT_GT(auto_layers, 0u);
  EXPECT_GT(auto_batches, 0u);
}

}  // namespace
}  // namespace stepcast::invariants
