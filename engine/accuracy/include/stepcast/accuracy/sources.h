// The sources of the published runs and what each one's rows leave unsaid: the configuration
// its framework of the time used (FlashAttention, overlaps, ZeRO, pipeline messages) and the
// defaults its recipes document.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stepcast::accuracy {

// The source of a row: the part of its id before the first '-' ("SC21-T1-3" -> "SC21").
std::string source_of(std::string_view id);

// The Megatron-LM sources (the 5 % goal): SC21 Table 1, Korthikanti et al., Megatron-Core H100.
bool is_megatron_source(std::string_view source);

// Configuration facts per source that the CSV rows do not repeat (see tests/validation/README.md
// for the evidence behind each).
struct SourceFacts {
  bool known = false;
  bool flash_attention = true;       // fused attention available to the framework of the time
  bool overlap_p2p = true;           // pipeline send/recv overlapped (Megatron-Core, 2023 on)
  bool tp_comm_overlap = false;      // TE userbuffers, when tp > 1
  bool sequence_parallel = false;    // SP on whenever tp > 1 (Megatron-Core recipes)
  bool distributed_optimizer = false;
  int zero_stage = 0;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  bool pp_scatter_gather = false;    // 1/tp activation shards between stages (Megatron 2.x)
  bool embedding_in_split = false;   // the pipeline split counts each embedding as a layer
  std::optional<int64_t> default_micro_batch;  // when the row says "not stated"
  std::string default_recompute;               // when the row says "not stated"
  std::optional<bool> tied_embeddings;         // overrides the architecture default
};

SourceFacts facts_for(const std::string& source);

}  // namespace stepcast::accuracy
