// The loss's passes over the logits (compute.cpp, cross_entropy_bytes_per_logit): each loss
// implementation's bytes a logit, counted by hand from its code, and what they cost a small model
// with a large vocabulary, where the loss is a visible share of the step.
#include <gtest/gtest.h>

#include "stepcast/compute.h"
#include "test_util.h"

namespace stepcast {
namespace {

// Megatron's eager vocab_parallel_cross_entropy on 16-bit logits: forward .float() (2 + 4),
// max (4), subtract in place (4 + 4), exp in place (4 + 4), sum (4), divide in place (4 + 4);
// backward multiply in place (4 + 4) and the cast of the gradient back (4 + 2). Its jit-fused
// form: forward cast+max (2 + 4), subtract+exp+sum (4 + 4), divide (4 + 4); backward multiply
// and cast (4 + 2). Transformer Engine's Triton kernels: forward two reads and the gradient
// written in place (2 + 2 + 2), backward the in-place scaling (2 + 2).
TEST(CrossEntropy, BytesPerLogitAsEachImplementationRunsIt) {
  const LossTraffic none = cross_entropy_bytes_per_logit(CrossEntropyFusion::none, Precision::bf16);
  EXPECT_DOUBLE_EQ(none.forward, 38);
  EXPECT_DOUBLE_EQ(none.backward, 14);
  const LossTraffic native =
      cross_entropy_bytes_per_logit(CrossEntropyFusion::native, Precision::bf16);
  EXPECT_DOUBLE_EQ(native.forward, 22);
  EXPECT_DOUBLE_EQ(native.backward, 6);
  const LossTraffic te = cross_entropy_bytes_per_logit(CrossEntropyFusion::te, Precision::bf16);
  EXPECT_DOUBLE_EQ(te.forward, 6);
  EXPECT_DOUBLE_EQ(te.backward, 4);
  // fp32 logits: .float() and the cast back are no-ops (no kernel, no bytes).
  const LossTraffic fp32 = cross_entropy_bytes_per_logit(CrossEntropyFusion::none, Precision::fp32);
  EXPECT_DOUBLE_EQ(fp32.forward, 32);
  EXPECT_DOUBLE_EQ(fp32.backward, 8);
  // The output layer runs in 16 bits under fp8 training: its logits are bf16.
  const LossTraffic fp8 = cross_entropy_bytes_per_logit(CrossEntropyFusion::none, Precision::fp8);
  EXPECT_DOUBLE_EQ(fp8.forward, 38);
}

// Megatron-Core's GPT 1.7B of its README's weak-scaling table (vocabulary 131,072, hidden 2,048,
// one 4,096-token micro-batch on an H100): 4,096 x 131,072 logits. The eager loss moves 32 bytes
// a logit more than Transformer Engine's in the forward (38 - 6) and 10 more in the backward
// (14 - 4): 17.18 GB and 5.37 GB at the H100's 3.35 TB/s x 0.933 (its family's STREAM share),
// 5.50 ms and 1.72 ms a micro-batch, against a forward of about 27 ms.
TEST(CrossEntropy, TheEagerLossCostsASmallLargeVocabularyModelMilliseconds) {
  const std::string model = R"({"name": "GPT-1.7B", "layers": 24, "hidden": 2048, "heads": 16,
      "kv_heads": 16, "ffn_hidden": 8192, "ffn_type": "gelu", "norm": "layernorm",
      "position": "learned", "bias": true, "seq_len": 4096, "vocab": 131072,
      "tied_embeddings": false})";
  auto head = [&](const char* fusion) {
    const Scenario s = test::scenario(test::doc(
        std::string(R"({"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1, "global_batch": 32,
            "precision": "bf16", "cross_entropy_fusion": ")") + fusion + "\"}",
        model, R"({"node": "dgx-h100", "nodes": 1})"));
    const Device d = make_device(s.cluster.groups[0].gpu, s.plan.precision, s.calibration);
    EXPECT_DOUBLE_EQ(d.memory_Bps * d.cal.memory_efficiency, 3.35e12 * 0.933);
    return head_compute(s.model, s.plan, d);
  };
  const HeadCompute none = head("none"), te = head("te"), native = head("native");
  const double logits = 4096.0 * 131072.0;
  const double bandwidth = 3.35e12 * 0.933;
  EXPECT_NEAR(none.forward_s - te.forward_s, logits * 32 / bandwidth, 1e-9);
  EXPECT_NEAR(none.forward_s - te.forward_s, 5.50e-3, 0.01e-3);
  EXPECT_NEAR(none.backward_s - te.backward_s, logits * 10 / bandwidth, 1e-9);
  EXPECT_NEAR(none.backward_s - te.backward_s, 1.72e-3, 0.01e-3);
  EXPECT_NEAR(none.forward_s - native.forward_s, logits * 16 / bandwidth, 1e-9);
  // The loss has no weights: the W share is the logits GEMM's alone, whatever the kernel.
  EXPECT_DOUBLE_EQ(none.weight_grad_s, te.weight_grad_s);
}

}  // namespace
}  // namespace stepcast
