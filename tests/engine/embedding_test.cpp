// The input embedding's backward (compute.cpp, embedding_compute): PyTorch writes a gradient of
// the whole table, zeros first, and Megatron adds it into the parameter's main gradient, a pass
// over the table each micro-batch that a small model with a large vocabulary feels.
#include <gtest/gtest.h>

#include "stepcast/compute.h"
#include "test_util.h"

namespace stepcast {
namespace {

// Megatron-Core's GPT 1.7B of its README's weak-scaling table: vocabulary 131,072, hidden 2,048,
// one 4,096-token micro-batch on an H100 at 3.35 TB/s x 0.933. The tokens' scatter-add moves
// 4 x 4,096 x 2,048 x 2 B = 67.1 MB; the table 131,072 x 2,048 x (2 zeros + 2 read + 4 + 4 for
// the fp32 main gradient read and written) = 3.22 GB: 1.052 ms in all. Under bf16 gradient
// buffers 2.15 GB of table; under ZeRO-3 only the zeros, 0.54 GB.
TEST(EmbeddingBackward, WritesTheWholeTableAndAddsItToTheGradientBuffer) {
  const std::string model = R"({"name": "GPT-1.7B", "layers": 24, "hidden": 2048, "heads": 16,
      "kv_heads": 16, "ffn_hidden": 8192, "ffn_type": "gelu", "norm": "layernorm",
      "position": "learned", "bias": true, "seq_len": 4096, "vocab": 131072,
      "tied_embeddings": false})";
  auto embedding = [&](const std::string& extra, int tp = 1) {
    const Scenario s = test::scenario(test::doc(
        fmt::format(R"({{"tp": {}, "pp": 1, "dp": {}, "micro_batch": 1, "global_batch": 32,
            "precision": "bf16")", tp, 8 / tp) + extra + "}",
        model, R"({"node": "dgx-h100", "nodes": 1})"));
    const Device d = make_device(s.cluster.groups[0].gpu, s.plan.precision, s.calibration);
    EXPECT_DOUBLE_EQ(d.memory_Bps * d.cal.memory_efficiency, 3.35e12 * 0.933);
    return embedding_compute(s.model, s.plan, d);
  };
  const double bandwidth = 3.35e12 * 0.933;
  const double tokens = 4 * 4096.0 * 2048 * 2, table = 131072.0 * 2048;
  const HeadCompute fp32 = embedding(R"(, "grad_reduce_in_fp32": true)");
  EXPECT_NEAR(fp32.backward_s, (tokens + table * 12) / bandwidth, 1e-12);
  EXPECT_NEAR(fp32.backward_s, 1.052e-3, 0.001e-3);
  EXPECT_DOUBLE_EQ(fp32.weight_grad_s, fp32.backward_s);
  const HeadCompute bf16 = embedding(R"(, "grad_reduce_in_fp32": false)");
  EXPECT_NEAR(bf16.backward_s, (tokens + table * 8) / bandwidth, 1e-12);
  const HeadCompute zero3 =
      embedding(R"(, "framework": "pytorch-fsdp", "zero_stage": 3, "grad_reduce_in_fp32": false)");
  EXPECT_NEAR(zero3.backward_s, (tokens + table * 2) / bandwidth, 1e-12);
  // TP splits the table by vocabulary: each rank zeroes and accumulates its slice.
  const HeadCompute tp2 = embedding(R"(, "grad_reduce_in_fp32": true)", 2);
  EXPECT_NEAR(tp2.backward_s, (tokens + table / 2 * 12) / bandwidth, 1e-12);
}

}  // namespace
}  // namespace stepcast
