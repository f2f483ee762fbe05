// Muon beside Adam (stepcast/optimizer.h): state bytes, Newton-Schulz FLOPs and the TP gathers,
// against counts derived by hand for Llama 3 8B (h 4096, 32 query and 8 KV heads of 128,
// SwiGLU FFN 14336, vocabulary 128256, 32 layers, untied, RMSNorm, no biases).
#include <gtest/gtest.h>

#include "stepcast/optimizer.h"
#include "stepcast/rule_ids.h"

#include "test_util.h"

namespace stepcast {
namespace {

// Llama 3 8B by hand. One layer's matrices: Q 4096·4096 = 16,777,216; K and V 2·1024·4096 =
// 8,388,608; the output projection 16,777,216; fc1 (gate and up, fused) 28672·4096 =
// 117,440,512; fc2 4096·14336 = 58,720,256: 218,103,808, times 32 layers = 6,979,321,856.
// Adam keeps the rest: the embedding and the output layer 2·128256·4096 = 1,050,673,152 (128256
// is already a multiple of 128), the norms 2·4096 per layer and the final one, 266,240:
// 1,050,939,392. Together 8,030,261,248, Llama 3 8B's 8.03 B.
constexpr double kMatrices = 6'979'321'856;
constexpr double kRest = 1'050'939'392;

std::string llama3_8b(const std::string& plan) {
  return test::doc(plan, R"("llama3-8b")", R"({"node": "dgx-h100", "nodes": 1})",
                   R"(, "seq_len": 2048)");
}

StageReport stage_of(const std::string& plan) {
  return estimate(test::scenario(llama3_8b(plan))).stages[0];
}

TEST(Muon, MatricesOfLlama3_8bByHand) {
  const Scenario s = test::scenario(llama3_8b(R"({"global_batch": 64, "optimizer": "muon"})"));
  StageShape st;
  st.layers = 32;
  st.first = st.last = true;
  const MuonParameters muon = muon_parameters(muon_matrices(s.model, s.plan, st));
  EXPECT_DOUBLE_EQ(muon.dense, kMatrices);
  EXPECT_DOUBLE_EQ(muon.expert, 0);
  EXPECT_DOUBLE_EQ(stage_of(R"({"global_batch": 64})").parameters, kMatrices + kRest);
}

// A hybrid model's matrices by block (Megatron-LM d98e8a64, optimizer.cpp add_mixers): Mamba's
// in_proj is Adam's (use_muon = False), its out_proj Muon's; Gated DeltaNet's in_proj and
// out_proj are both Muon's. Nemotron-H 8B (h 4096, 24 M, 4 *, 24 -): out_proj 4096 x 128·64 =
// 33,554,432; attention Q 4096² = 16,777,216, K and V 2·1024·4096 = 8,388,608, output
// 16,777,216; the squared-ReLU MLP's fc1 and fc2 21504·4096 = 88,080,384 each.
TEST(Muon, HybridMatricesByBlockByHand) {
  const Scenario h8 = test::scenario(test::doc(R"({"global_batch": 64, "optimizer": "muon"})",
                                               R"("nemotron-h-8b")"));
  const StageShape st{.layers = 52, .first = true, .last = true, .attention_layers = 4,
                      .mamba_layers = 24, .mlp_layers = 24};
  EXPECT_DOUBLE_EQ(muon_parameters(muon_matrices(h8.model, h8.plan, st)).dense,
                   24 * 33'554'432.0 + 4 * 41'943'040.0 + 24 * 176'160'768.0);
  // Qwen3-Next-80B-A3B (h 2048; 36 G, 12 *, 48 E): in_proj 2·2048 + 2·4096 + 2·32 = 12,352
  // rows x 2048, out_proj 2048 x 4096; gated attention Q, gate and output 3·4096·2048, K and V
  // 2·512·2048; each E a 512-expert router 512·2048, a shared SwiGLU expert 3·512·2048 and
  // 512 routed experts of 3·512·2048 (ep 1).
  const Scenario next = test::scenario(test::doc(R"({"global_batch": 64, "optimizer": "muon"})",
                                                 R"("qwen3-next-80b-a3b")"));
  const StageShape q{.layers = 96, .first = true, .last = true, .moe_layers = 48,
                     .attention_layers = 12, .gdn_layers = 36};
  const MuonParameters muon = muon_parameters(muon_matrices(next.model, next.plan, q));
  EXPECT_DOUBLE_EQ(muon.dense, 36 * (12352.0 * 2048 + 2048.0 * 4096) +
                                   12 * (3 * 4096.0 * 2048 + 2 * 512.0 * 2048) +
                                   48 * (512.0 * 2048 + 3 * 512.0 * 2048));
  EXPECT_DOUBLE_EQ(muon.expert, 48 * 512 * 3 * 512.0 * 2048);
}

TEST(Muon, StateBytesBesideAdamsByHand) {
  // dp 8, bf16: Muon keeps an fp32 master and one fp32 momentum (8 B) per matrix element, Adam
  // an fp32 master and two fp32 moments (12 B) per other parameter.
  const auto plan = [](const char* optimizer, bool distributed, const char* precision = "bf16") {
    return fmt::format(R"({{"global_batch": 64, "optimizer": "{}", "distributed_optimizer": {},
                           "precision": "{}"}})",
                       optimizer, distributed, precision);
  };
  const StageReport adam = stage_of(plan("adam", true));
  const StageReport sharded = stage_of(plan("muon", true));
  const StageReport whole = stage_of(plan("muon", false));
  EXPECT_DOUBLE_EQ(adam.memory.optimizer, (kMatrices + kRest) * 12 / 8);
  // The layer-wise distributed optimizer shards Muon's matrices over DP as the distributed
  // optimizer shards Adam's share: (6,979,321,856·8 + 1,050,939,392·12) / 8 B = 8.45 GiB.
  EXPECT_DOUBLE_EQ(sharded.memory.optimizer, (kMatrices * 8 + kRest * 12) / 8);
  EXPECT_DOUBLE_EQ(whole.memory.optimizer, kMatrices * 8 + kRest * 12);
  EXPECT_DOUBLE_EQ(sharded.memory.weights, adam.memory.weights);
  EXPECT_DOUBLE_EQ(sharded.memory.gradients, adam.memory.gradients);
  // fp32 training keeps no master copy: 4 B (momentum) and 8 B (moments).
  EXPECT_DOUBLE_EQ(stage_of(plan("muon", true, "fp32")).memory.optimizer,
                   (kMatrices * 4 + kRest * 8) / 8);
  // Adam's moments in bf16 shrink only Adam's share; Muon's momentum stays fp32.
  EXPECT_DOUBLE_EQ(stage_of(R"({"global_batch": 64, "optimizer": "muon", "bf16_moments": true})")
                       .memory.optimizer,
                   (kMatrices * 8 + kRest * 8) / 8);
}

TEST(Muon, NewtonSchulzFlopsOfOneMatrixByHand) {
  // 2 x 3, one iteration: m = 2, n = 3: X·Xᵀ 2·2·2·3 = 24, A·A 2·2·2·2 = 16, B·X 24.
  EXPECT_DOUBLE_EQ(newton_schulz_flops(2, 3, 1), 64);
  EXPECT_DOUBLE_EQ(newton_schulz_flops(3, 2, 1), 64);  // orthogonalised on its smaller side
  // Llama 3 8B's fc1, 28672 x 4096, five iterations: m = 4096, n = 28672:
  // 5·(4·4096²·28672 + 2·4096³) = 5·(1,924,145,348,608 + 137,438,953,472).
  EXPECT_DOUBLE_EQ(newton_schulz_flops(28672, 4096), 10'307'921'510'400.0);
  EXPECT_EQ(kNewtonSchulzSteps, 5);
}

// The gathers of TP-split matrices before the iterations: one per matrix a rank steps, the whole
// fp32 matrix over the TP group.
TEST(Muon, CensusGathersEachTpSplitMatrixWhole) {
  struct Gather {
    const char* what;
    int64_t count;
    double bytes;
  };
  const auto gathers = [](const StageReport& st) {
    std::vector<Gather> out;
    for (const CommOp& op : st.communication)
      if (op.phase == Phase::optimizer && op.group == CommGroup::tp &&
          op.kind == CollectiveKind::all_gather)
        out.push_back({op.what.data(), op.count, op.bytes});
    return out;
  };
  const Gather expected[] = {{"query part of linear_qkv", 32, 4.0 * 4096 * 4096},
                             {"key and value parts of linear_qkv", 64, 4.0 * 1024 * 4096},
                             {"attention output projection", 32, 4.0 * 4096 * 4096},
                             {"fc1", 32, 4.0 * 28672 * 4096},
                             {"fc2", 32, 4.0 * 4096 * 14336}};
  const StageReport tp8 = stage_of(R"({"tp": 8, "global_batch": 64, "optimizer": "muon"})");
  const auto got = gathers(tp8);
  ASSERT_EQ(got.size(), std::size(expected));
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(std::string(got[i].what), expected[i].what);
    EXPECT_EQ(got[i].count, expected[i].count) << expected[i].what;
    EXPECT_DOUBLE_EQ(got[i].bytes, expected[i].bytes) << expected[i].what;
  }
  for (const CommOp& op : tp8.communication)
    if (op.phase == Phase::optimizer && op.group == CommGroup::tp) EXPECT_EQ(op.group_size, 8);
  // TP 4 x DP 2 with the distributed optimizer: each DP rank steps half of the matrices.
  const auto half = gathers(stage_of(R"({"tp": 4, "global_batch": 64, "optimizer": "muon",
                                         "distributed_optimizer": true})"));
  ASSERT_EQ(half.size(), std::size(expected));
  for (size_t i = 0; i < half.size(); ++i) EXPECT_EQ(half[i].count, expected[i].count / 2);
  // Adam gathers nothing; no TP, nothing to gather.
  EXPECT_TRUE(gathers(stage_of(R"({"tp": 8, "global_batch": 64})")).empty());
  EXPECT_TRUE(gathers(stage_of(R"({"global_batch": 64, "optimizer": "muon"})")).empty());
}

TEST(Muon, TheOptimizerStepShowsTheNewtonSchulzIterations) {
  const StageReport adam = stage_of(R"({"tp": 8, "global_batch": 64})");
  const StageReport muon = stage_of(R"({"tp": 8, "global_batch": 64, "optimizer": "muon"})");
  EXPECT_EQ(adam.newton_schulz_s, 0);
  EXPECT_GT(muon.newton_schulz_s, 0);
  EXPECT_GT(muon.optimizer_s, muon.newton_schulz_s);
  // Every TP rank runs the iterations on the whole matrices (duplicated mode): 32 layers' worth.
  const double flops =
      32 * (2 * newton_schulz_flops(4096, 4096) + 2 * newton_schulz_flops(1024, 4096) +
            newton_schulz_flops(28672, 4096) + newton_schulz_flops(4096, 14336));
  double gathers = 0;
  for (const CommOp& op : muon.communication)
    if (op.phase == Phase::optimizer && op.group == CommGroup::tp) gathers += op.total_s();
  const double peak = 989e12;  // H100 SXM dense bf16 (presets/gpus/h100-sxm5-80gb.json)
  EXPECT_GT(muon.newton_schulz_s - gathers, flops / peak);
  EXPECT_LT(muon.newton_schulz_s - gathers, flops / (0.3 * peak));
  // Sharded over DP 2 by the layer-wise optimizer: half the iterations and half the gathers.
  const StageReport whole = stage_of(R"({"tp": 4, "global_batch": 64, "optimizer": "muon",
                                          "distributed_optimizer": false})");
  const StageReport shared = stage_of(R"({"tp": 4, "global_batch": 64, "optimizer": "muon",
                                           "distributed_optimizer": true})");
  EXPECT_NEAR(shared.newton_schulz_s / whole.newton_schulz_s, 0.5, 1e-12);
}

TEST(Muon, MoeExpertsStateShardsOverExpertDataParallel) {
  // Mixtral 8x7B on 8 DGX H100, tp 2 · ep 8: each GPU holds 1 expert (8 / 8) split over etp 2.
  const Scenario s = test::scenario(test::doc(
      R"({"tp": 2, "ep": 8, "pp": 4, "global_batch": 64, "optimizer": "muon",
          "distributed_optimizer": true})",
      R"("mixtral-8x7b")"));
  const Report r = estimate(s);
  StageShape st;
  st.layers = st.moe_layers = s.model.layers / 4;
  const MuonParameters muon = muon_parameters(muon_matrices(s.model, s.plan, st));
  // One expert's fc1 (2·14336 x 4096) and fc2 (4096 x 14336), halved by etp 2, per layer.
  EXPECT_DOUBLE_EQ(muon.expert, 8.0 * 3 * 14336 * 4096 / 2);
  const double edp = s.plan.edp(), dp = s.plan.dp * s.plan.cp;
  const StageReport& mid = r.stages[1];  // no embedding, no output layer
  const double dense = mid.parameters - muon.expert;
  // Everything but the experts is dense; of it, the norms (2·4096 per layer) and the router's
  // expert bias (8 per layer) are Adam's.
  const double vectors = 8.0 * (2 * 4096 + 8);
  EXPECT_DOUBLE_EQ(mid.memory.optimizer,
                   ((dense - vectors) * 8 + vectors * 12) / dp + muon.expert * 8 / edp);
}

// SGD and Adafactor (optimizer.h), on the same Llama 3 8B by hand: 8,030,261,248 parameters, of
// which the matrices (kMatrices, and the embedding and output layer 2·128256·4096 =
// 1,050,673,152) are 8,029,995,008 and the norms 266,240.
constexpr double kParameters = kMatrices + kRest;
constexpr double kNorms = 266'240;

std::string on(const std::string& framework, const std::string& plan) {
  return fmt::format(R"({{"framework": "{}", "global_batch": 64, {}}})", framework, plan);
}

TEST(Sgd, StateIsTheMasterAndOneBuffer) {
  // Megatron-Core without the distributed optimizer (its own asserts Adam): fp32 master and an
  // fp32 buffer on every GPU, 8 B a parameter; FusedSGD keeps the buffer at momentum 0 too.
  const auto megatron = [](const char* extra) {
    return stage_of(on("megatron-core", std::string(R"("optimizer": "sgd",
        "distributed_optimizer": false)") + extra));
  };
  EXPECT_DOUBLE_EQ(megatron("").memory.optimizer, kParameters * 8);
  EXPECT_DOUBLE_EQ(megatron(R"(, "sgd_momentum": 0)").memory.optimizer, kParameters * 8);
  EXPECT_DOUBLE_EQ(megatron(R"(, "precision": "fp32")").memory.optimizer, kParameters * 4);
  // PyTorch FSDP (ZeRO-3 over 8 GPUs): torch.optim.SGD keeps no buffer at momentum 0.
  EXPECT_DOUBLE_EQ(stage_of(on("pytorch-fsdp", R"("optimizer": "sgd")")).memory.optimizer,
                   kParameters * 8 / 8);
  EXPECT_DOUBLE_EQ(
      stage_of(on("pytorch-fsdp", R"("optimizer": "sgd", "sgd_momentum": 0)")).memory.optimizer,
      kParameters * 4 / 8);
}

TEST(Sgd, StepMovesTwentyTwoBytesAParameterAgainstAdamsThirty) {
  // Memory bound: FusedSGD reads master, gradient and buffer and writes master and buffer (20 B)
  // and the 16-bit copy (2 B); Adam 30 B. Without a buffer 14 B.
  const auto step = [](const std::string& framework, const std::string& plan) {
    return stage_of(on(framework, plan)).optimizer_s;
  };
  const double adam = step("megatron-core", R"("distributed_optimizer": false)");
  EXPECT_NEAR(step("megatron-core", R"("optimizer": "sgd", "distributed_optimizer": false)") /
                  adam,
              22.0 / 30, 1e-12);
  EXPECT_NEAR(step("pytorch-fsdp", R"("optimizer": "sgd", "sgd_momentum": 0)") /
                  step("pytorch-fsdp", R"("optimizer": "adam")"),
              14.0 / 30, 1e-12);
  EXPECT_EQ(stage_of(on("megatron-core", R"("optimizer": "sgd", "distributed_optimizer": false)"))
                .newton_schulz_s,
            0);
}

TEST(Adafactor, FactoredSecondMomentOfLlama3_8bByHand) {
  // Per layer, rows + columns of each matrix: Q 4096 + 4096, K and V 2·(1024 + 4096), the output
  // projection 4096 + 4096, fc1 28672 + 4096, fc2 4096 + 14336: 77,824; 32 layers 2,490,368. The
  // embedding and the output layer 2·(128256 + 4096) = 264,704. The norms one value each,
  // 266,240. In all 3,021,312 fp32 values: 12 MB beside 32 GB of master weights.
  const Scenario s = test::scenario(llama3_8b(on("pytorch-fsdp", R"("optimizer": "adafactor",
                                                                  "zero_stage": 0)")));
  const StageReport st = estimate(s).stages[0];
  StageShape shape;
  shape.layers = 32;
  shape.first = shape.last = true;
  shape.parameters = st.parameters;
  const AdafactorState state = adafactor_state(s.model, s.plan, shape);
  EXPECT_DOUBLE_EQ(state.matrix_parameters, kParameters - kNorms);
  EXPECT_DOUBLE_EQ(state.second_moment, 2'490'368.0 + 264'704 + kNorms);
  EXPECT_DOUBLE_EQ(st.memory.optimizer, kParameters * 4 + 3'021'312.0 * 4);
  // On FSDP's flat shards (ZeRO-3 over 8 GPUs) nothing is a matrix: one value a parameter.
  EXPECT_DOUBLE_EQ(stage_of(on("pytorch-fsdp", R"("optimizer": "adafactor")")).memory.optimizer,
                   kParameters * 8 / 8);
  // TP 2: each GPU factors its slices (Q 2048 + 4096, K and V 2·(512 + 4096), the output
  // projection 4096 + 2048, fc1 14336 + 4096, fc2 4096 + 7168: 51,200 a layer), the vocabulary
  // halved (2·(64128 + 4096)), the norms whole.
  const Scenario tp2 = test::scenario(llama3_8b(
      on("pytorch-fsdp", R"("optimizer": "adafactor", "zero_stage": 0, "tp": 2)")));
  EXPECT_DOUBLE_EQ(adafactor_state(tp2.model, tp2.plan, shape).second_moment - shape.parameters +
                       adafactor_state(tp2.model, tp2.plan, shape).matrix_parameters,
                   32 * 51'200.0 + 2 * (64'128 + 4'096));
}

TEST(Adafactor, StepIsTorchsOpsByteByByte) {
  // Factored, 70 B an element of a matrix (the parameter's norm 4, the gradient's row and column
  // norms 8, the estimate written 4 and divided 8, clamp and rsqrt 16, times the gradient 12,
  // the update's norm 4, param.add_ 12, the 16-bit copy 2); a vector's, 78 B (grad * grad 8,
  // lerp_ 12 and clone 8 instead of 20).
  Plan p;
  EXPECT_DOUBLE_EQ(adafactor_step_bytes(p, true), 70);
  EXPECT_DOUBLE_EQ(adafactor_step_bytes(p, false), 78);
  p.precision = Precision::fp32;
  EXPECT_DOUBLE_EQ(adafactor_step_bytes(p, true), 68);
  const double adam = stage_of(on("pytorch-fsdp", R"("optimizer": "adam", "zero_stage": 0)"))
                          .optimizer_s;
  const double factored =
      stage_of(on("pytorch-fsdp", R"("optimizer": "adafactor", "zero_stage": 0)")).optimizer_s;
  EXPECT_NEAR(factored / adam, ((kParameters - kNorms) * 70 + kNorms * 78) / (kParameters * 30),
              1e-12);
  const double flat = stage_of(on("pytorch-fsdp", R"("optimizer": "adafactor")")).optimizer_s;
  EXPECT_NEAR(flat / stage_of(on("pytorch-fsdp", R"("optimizer": "adam")")).optimizer_s,
              78.0 / 30, 1e-12);
}

TEST(Optimizers, FrameworksRefuseWhatTheirSoftwareLacks) {
  struct Case {
    const char* framework;
    const char* plan;
    const char* says;  // in the error's message
  };
  const Case refused[] = {
      {"megatron-core", R"("optimizer": "adafactor")", "no Adafactor"},
      {"megatron-core", R"("optimizer": "sgd", "distributed_optimizer": true)",
       "plan.optimizer=\"sgd\" with plan.distributed_optimizer=true"},
      {"megatron-fsdp", R"("optimizer": "adafactor")", "Megatron FSDP"},
      {"megatron-lm-2021", R"("optimizer": "muon")", "adam and sgd only"},
      {"torchtitan", R"("optimizer": "sgd")", "Adam and AdamW only"},
      {"torchtitan", R"("optimizer": "muon")", "Adam and AdamW only"},
      {"deepspeed", R"("optimizer": "adafactor")", "no Adafactor"},
      {"pytorch-fsdp", R"("optimizer": "muon")", "torch.optim.Muon"},
  };
  for (const Case& c : refused) {
    const Error e = test::error_of(llama3_8b(on(c.framework, c.plan)));
    EXPECT_EQ(e.rule, Rule::framework_cannot) << c.framework << " " << c.plan;
    EXPECT_EQ(e.path, "plan.optimizer") << c.framework << " " << c.plan;
    EXPECT_NE(e.message.find(c.says), std::string::npos) << e.message;
  }
  // And what they have.
  const Case allowed[] = {{"megatron-lm-2021", R"("optimizer": "sgd")", ""},
                          {"megatron-fsdp", R"("optimizer": "sgd")", ""},
                          {"deepspeed", R"("optimizer": "sgd")", ""},
                          {"pytorch-fsdp", R"("optimizer": "adafactor")", ""}};
  for (const Case& c : allowed)
    EXPECT_TRUE(parse_scenario(llama3_8b(on(c.framework, c.plan)), test::catalog()).ok())
        << c.framework << " " << c.plan;
  // Out of range, not a choice.
  EXPECT_EQ(test::error_of(llama3_8b(on("pytorch-fsdp", R"("optimizer": "sgd",
                                                          "sgd_momentum": 1.5)")))
                .path,
            "plan.sgd_momentum");
  EXPECT_EQ(test::error_of(llama3_8b(on("pytorch-fsdp", R"("optimizer": "lion")"))).path,
            "plan.optimizer");
}

// torch.optim.Adam keeps its moments in its parameters' dtype: under FSDP's mixed precision the
// sharded parameters are fp32, so bf16 moments need a model built in bf16, whose parameters the
// optimizer steps without a master (plan.master_weights none: NeMo AutoModel's recipes,
// engine/accuracy/sources.json); the rule names the pair.
TEST(Optimizers, FsdpKeepsBf16MomentsOnlyOfBf16Parameters) {
  const Error e = test::error_of(llama3_8b(on("pytorch-fsdp", R"("bf16_moments": true)")));
  EXPECT_EQ(e.rule, Rule::framework_cannot);
  EXPECT_EQ(e.path, "plan.bf16_moments");
  EXPECT_NE(e.message.find("with plan.master_weights=\"fp32\""), std::string::npos) << e.message;
  EXPECT_TRUE(parse_scenario(llama3_8b(on("pytorch-fsdp", R"("bf16_moments": true,
                                                          "master_weights": "none")")),
                             test::catalog())
                  .ok());
}

}  // namespace
}  // namespace stepcast
