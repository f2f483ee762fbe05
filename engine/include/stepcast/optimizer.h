// Muon as Megatron-Core runs it (--optimizer muon; megatron/core/optimizer/emerging_optimizers.py
// and layer_wise_optimizer.py at NVIDIA/Megatron-LM d98e8a64, over NVIDIA-NeMo/
// Emerging-Optimizers' orthogonalized_optimizers): which of a stage's parameters Muon steps, the
// Newton-Schulz iterations on whole matrices, and the parameters Adam keeps.
//
// Muon takes every 2-D weight that is not the word embedding or the output layer
// (_is_muon_excluded: `is_embedding_or_output_parameter` or not 2-D); norms, biases and the
// router's expert bias go to Adam (--muon-scalar-optimizer adam). Each matrix is orthogonalised
// whole: --muon-tp-mode duplicated all-gathers a TP-split matrix's shards over its TP group and
// every TP rank runs the iterations on the whole (newton_schulz_tp). The attention's fused QKV
// weight is split into its Q, K and V parts first (--muon-split-qkv, on by default). Without the
// distributed optimizer every DP rank steps every matrix; with it (--use-distributed-optimizer
// becomes the layer-wise distributed optimizer, arguments.py) each rank of DP x CP steps whole
// matrices, about 1/(dp·cp) of them (routed experts: 1/edp), bin-packed by Newton-Schulz cost
// (LayerWiseDistributedOptimizer._compute_per_buffer_param_layout).
#pragma once

#include <string_view>
#include <vector>

#include "stepcast/census.h"
#include "stepcast/compute.h"
#include "stepcast/model.h"
#include "stepcast/plan.h"

namespace stepcast {

// --muon-num-ns-steps' default (megatron/training/arguments.py at d98e8a64).
inline constexpr int kNewtonSchulzSteps = 5;

// One kind of weight matrix Muon orthogonalises, as Megatron-Core holds it.
struct MuonMatrix {
  std::string_view what;      // which weight, in Megatron-Core's terms (a static string)
  double rows = 0;            // the whole matrix: output features ...
  double cols = 0;            // ... by input features
  double count = 0;           // matrices of this kind on one GPU of the stage
  int shards = 1;             // the TP (or expert-TP) ranks splitting it; 1: whole on each
  bool expert = false;        // a routed expert's (stepped over the expert DP group)
  bool row_parallel = false;  // split over its input features (else its output features)
  double local_parameters() const { return rows * cols * count / shards; }
  // One GPU's slice: its rows and columns.
  double local_rows() const { return row_parallel ? rows : rows / shards; }
  double local_cols() const { return row_parallel ? cols / shards : cols; }
};

// The matrices Muon steps on one GPU of a stage: its layers' (a hybrid model's by block, of the
// Mamba mixer out_proj alone), the learned position table on the
// first stage (2-D and not flagged as an embedding, so Muon's), the MTP modules' on the last.
std::vector<MuonMatrix> muon_matrices(const ModelSpec& model, const Plan& plan,
                                      const StageShape& stage);

// Of a stage's parameters on one GPU, those Muon steps (dense, and the routed experts' part).
struct MuonParameters {
  double dense = 0;
  double expert = 0;
};
MuonParameters muon_parameters(const std::vector<MuonMatrix>& matrices);

// FLOPs of `steps` Newton-Schulz iterations on one rows x cols matrix (muon_utils.py
// newton_schulz_step, on the matrix transposed so that m = min(rows, cols) rows and n =
// max(rows, cols)): A = X·Xᵀ 2·m·m·n, B = b·A + c·A·A 2·m·m·m, X = a·X + B·X 2·m·m·n.
double newton_schulz_flops(double rows, double cols, int steps = kNewtonSchulzSteps);

// Matrices of one kind this GPU steps: all of them, or its DP rank's share under the
// distributed (layer-wise) optimizer.
double muon_owned(const MuonMatrix& matrix, const Plan& plan);

// Muon's step on one GPU: the element-wise work on its share of the matrices, and the
// Newton-Schulz iterations (their GEMMs in bf16: --muon-fp32-matmul-prec medium casts X to bf16,
// muon_utils.py) on the whole matrices it owns. The TP gathers before them are census entries
// (census.cpp).
struct MuonStep {
  double elementwise_s = 0;
  double newton_schulz_s = 0;
};
MuonStep muon_step(const std::vector<MuonMatrix>& matrices, const Plan& plan,
                   const Device& device);

// SGD (--optimizer sgd) and Adafactor (Shazeer & Stern, "Adafactor: Adaptive Learning Rates with
// Sublinear Memory Cost", ICML 2018, arXiv 1804.04235), as the software steps them.
//
// SGD keeps one momentum buffer per parameter, fp32 beside the fp32 master weights. Whether it
// exists: torch.optim.SGD makes it only where the momentum is not 0 (torch/optim/sgd.py);
// Transformer Engine's and apex's FusedSGD, which Megatron-Core and Megatron-LM build (the fused
// kernels of their profiles), make one for every parameter whatever the momentum
// (transformer_engine/pytorch/optimizers/fused_sgd.py get_momentums, NVIDIA/TransformerEngine
// d0067d0d; megatron/core/optimizer/__init__.py at NVIDIA/Megatron-LM d98e8a64).
bool sgd_keeps_buffer(const Plan& plan);

// Bytes of optimizer state a parameter stepped element by element keeps beside its weight and
// gradient: the fp32 master (none when training in fp32) and Adam's two moments (fp32, or bf16
// with plan.bf16_moments), SGD's buffer, or Adafactor's unfactored second moment (one fp32
// value: what it keeps on a ZeRO or FSDP shard, which is flat, one-dimensional).
double state_bytes_per_parameter(const Plan& plan);

// Bytes of the optimizer's master copy a parameter: none when training in fp32 (the weights
// are the master), else as plan.master_weights says (fp32 4, remainders 2, none 0).
double master_bytes_per_parameter(const Plan& plan);

// Adafactor on whole tensors (no ZeRO or FSDP sharding: zero_stage 0), as torch.optim.Adafactor
// keeps it (torch/optim/_adafactor.py, pytorch/pytorch 516f64b7; PyTorch 2.5 and later): no first
// moment (the paper's beta1 = 0 default; torch's has none), and for each tensor of two or more
// dimensions the fp32 row and column means of the squared gradient (row_var, col_var: rows +
// cols values, the paper's factored second moment, Algorithm 4), for every other tensor one fp32
// value per element (variance). A TP-split matrix is its GPU's slice. Of one GPU of a stage:
struct AdafactorState {
  double matrix_parameters = 0;  // the parameters of its matrices (factored)
  double second_moment = 0;      // values of second moment: factored rows + cols, and vectors
};
// The matrices are Muon's (muon_matrices) with the word embedding and the output layer.
AdafactorState adafactor_state(const ModelSpec& model, const Plan& plan, const StageShape& stage);

// Bytes one parameter's step reads and writes (memory bound, as optimizer_step_s prices Adam).
double sgd_step_bytes(const Plan& plan);
// `factored`: a matrix's element under adafactor_state; else an element of a vector or of a flat
// shard.
double adafactor_step_bytes(const Plan& plan, bool factored);

}  // namespace stepcast
