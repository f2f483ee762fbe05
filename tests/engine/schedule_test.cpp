// The pipeline schedules behind schedule.h: the backward split into input gradients (B) and
// weight gradients (W) in the compute model, and each schedule's bubble and micro-batches in
// flight against its paper's formulas, by hand-computed values.
#include <gtest/gtest.h>


#include "stepcast/compute.h"
#include "stepcast/pipeline.h"
#include "stepcast/schedule.h"
#include "test_util.h"

namespace stepcast {
namespace {

// A linear layer's backward is a data-gradient and a weight-gradient GEMM of the forward's FLOPs
// (Qi et al., ICLR 2024, sec. 2): W is the forward GEMMs' time again; the attention core, the
// norms and the element-wise gradients are all B.
TEST(BackwardSplit, WeightGradientsAreTheForwardGemmsAgain) {
  const Scenario s = test::scenario(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"tp": 2, "global_batch": 64}, "seq_len": 4096})");
  const Device d = make_device(s.cluster.groups[0].gpu, s.plan.precision, s.calibration);
  const LayerCompute l = layer_compute(s.model, s.plan, d);
  EXPECT_DOUBLE_EQ(l.weight_grad_s, l.gemms.total());
  EXPECT_DOUBLE_EQ(l.weight_grad_s, l.linear_forward_s);
  EXPECT_DOUBLE_EQ(2 * l.weight_grad_s, l.linear_backward_s);  // dgrad + wgrad
  // B keeps the dgrad GEMMs, the attention core's backward and the element-wise work.
  EXPECT_GT(l.backward_s - l.weight_grad_s, l.weight_grad_s + l.attention_backward_s);
  // The output layer's wgrad is its logits GEMM (backward: dgrad, wgrad and the loss); the
  // embedding computes only its table's gradient.
  const HeadCompute head = head_compute(s.model, s.plan, d);
  EXPECT_GT(head.weight_grad_s, 0);
  EXPECT_LT(2 * head.weight_grad_s, head.backward_s);
  const HeadCompute embed = embedding_compute(s.model, s.plan, d);
  EXPECT_DOUBLE_EQ(embed.weight_grad_s, embed.backward_s);
}

// 1F1B's backward block is B followed at once by W: the weight gradients given to the simulation
// move nothing (its gradient goes back after both, as Megatron's backward_step sends it).
TEST(BackwardSplit, OneFOneBRunsBAndWAsOneBlock) {
  const std::vector<double> f{1, 1.5, 1, 2}, b{2, 3, 2.5, 4}, w{1, 1.2, 0.3, 2}, link(4, 0.1);
  for (int64_t m : {1, 4, 9}) {
    double plain = 0, split = 0;
    simulate_virtual_pipeline(f, b, 4, m, 1, link, true, &plain);
    const auto events = simulate_virtual_pipeline(f, b, 4, m, 1, link, true, &split, nullptr, w);
    EXPECT_EQ(split, plain);
    for (const auto& e : events) {
      EXPECT_NE(e.kind, PipelineEvent::Kind::input_grad);
      EXPECT_NE(e.kind, PipelineEvent::Kind::weight_grad);
    }
    EXPECT_EQ(simulate_schedule_time(f, b, 4, m, 1, link, true, 0, nullptr, w).makespan_s, plain);
  }
}

}  // namespace
}  // namespace stepcast
