#include "stepcast/accuracy/sources.h"

namespace stepcast::accuracy {

std::string source_of(std::string_view id) {
  const size_t dash = id.find('-');
  return std::string(dash == std::string_view::npos ? id : id.substr(0, dash));
}

bool is_megatron_source(std::string_view s) { return s == "SC21" || s == "KORTH" || s == "MCORE"; }

SourceFacts facts_for(const std::string& source) {
  SourceFacts f;
  f.known = true;
  if (source == "SC21" || source == "KORTH") {
    // Megatron-LM of 2021-22: no FlashAttention (unfused softmax), blocking p2p, and the
    // scatter/gather of pipeline messages across the TP group (SC21 sec. 4.1, on by default
    // via --scatter-gather-tensors-in-pipeline in Megatron-LM 2.x).
    f.flash_attention = false;
    f.overlap_p2p = false;
    f.pp_scatter_gather = true;
  } else if (source == "MCORE") {
    // Megatron-LM README: --overlap-grad-reduce --overlap-param-gather --tp-comm-overlap, the
    // distributed optimizer (param gather implies it); parameter counts in the table imply
    // untied input and output embeddings (e.g. 1.7B = 24 x 12 x 2048^2 + 2 x 131072 x 2048).
    f.tp_comm_overlap = true;
    f.sequence_parallel = true;
    f.distributed_optimizer = true;
    f.default_micro_batch = 1;
    f.default_recompute = "none";
    f.tied_embeddings = false;
  } else if (source == "NEMO2407" || source.rfind("MBRIDGE", 0) == 0) {
    // NeMo / Megatron-Bridge performance recipes: distributed optimizer, SP and TP comm
    // overlap with TP > 1, no activation recompute unless the table says so.
    f.tp_comm_overlap = true;
    f.sequence_parallel = true;
    f.distributed_optimizer = true;
    f.default_recompute = "none";
  } else if (source == "BLOOM" || source == "MTNLG") {
    // Megatron-DeepSpeed 2021-22: ZeRO-1, no FlashAttention, DeepSpeed's pipeline engine
    // reduces gradients after the last micro-batch and gathers parameters after the step.
    // DeepSpeed's pipeline engine partitions activations over the model-parallel group before
    // sending and gathers them after (PipelineEngine.is_pipe_partitioned).
    f.flash_attention = false;
    f.overlap_p2p = false;
    f.pp_scatter_gather = true;
    f.zero_stage = 1;
    f.overlap_grad_reduce = false;
    f.overlap_param_gather = false;
    // BLOOM: --pp-partition-method 'type:transformer|embedding' (bigscience train/tr11-176B-ml
    // README, the row's own source): the tied embeddings count as layers in the split.
    f.embedding_in_split = source == "BLOOM";
  } else if (source == "LLMFOUNDRY") {
    // Composer + PyTorch FSDP FULL_SHARD (ZeRO-3), FlashAttention (triton / flash-attn).
    f.zero_stage = 3;
  } else if (source == "DTFM") {
    // Megatron-LM baseline on V100 (2022): no FlashAttention (needs Ampere), local DDP,
    // Megatron 2.x pipeline scatter/gather.
    f.flash_attention = false;
    f.overlap_p2p = false;
    f.pp_scatter_gather = true;
    f.overlap_grad_reduce = false;
  } else {
    f.known = false;
  }
  return f;
}

}  // namespace stepcast::accuracy
