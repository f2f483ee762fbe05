// Megatron-Core's free-form pipeline layout (--pipeline-model-parallel-layout,
// megatron/core/transformer/pipeline_parallel_layer_layout.py): the model's blocks per virtual
// pipeline stage, stages separated by '|', 'E' the embedding, 't' a transformer layer, 'm' a
// multi-token prediction module, 'L' the output layer and loss; "t*3" repeats a symbol and
// "(tt|)*29" a group. Stage k of the list is virtual stage k: pipeline rank k % pp, model chunk
// k / pp. DeepSeek-V3 on 1024 H100 (Megatron-Bridge): "Et|(tt|)*30mL" for pp 8 x vpp 4.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "stepcast/result.h"

namespace stepcast {

struct VirtualStage {
  int64_t layers = 0;  // 't'
  int64_t mtp = 0;     // 'm'
  bool embedding = false;  // 'E'
  bool loss = false;       // 'L'
};

// How Megatron can split `layers` over pp pipeline stages of vpp model chunks when pp·vpp does
// not divide them (the rules' hint proposes it; the search tries it):
// - counting the embedding and the loss as layers (--account-for-embedding-in-pipeline-split and
//   --account-for-loss-in-pipeline-split), or the loss alone, where the count then divides:
//   NVIDIA's Llama 3.1 405B recipes, 126 + 2 layers over 8·8 chunks;
// - a lighter first and last stage (--decoder-first-pipeline-num-layers and
//   --decoder-last-pipeline-num-layers), each stage's layers a multiple of vpp: DeepSeek-V3's 61
//   layers on 8 stages as 6, then 8 on each other stage, then 7. Of the splits whose ends hold
//   no more than the stages between them, the one whose busiest stage holds the fewest layers,
//   then the most even; the first stage (it also holds the embedding) the lighter of the two.
struct LayerSplit {
  bool embedding_in_split = false;
  bool loss_in_split = false;
  int64_t first_stage_layers = 0;  // 0: not uneven
  int64_t last_stage_layers = 0;
  int64_t other_stage_layers = 0;  // each stage between them
};
// Whether `layers` plus `counted` (the embedding and/or the loss counted as layers) split evenly
// over pp·vpp chunks, each holding a layer (one chunk: the counted ones and a layer besides).
bool accounting_divides(int64_t layers, int64_t counted, int pp, int vpp);
// The split that counts the embedding and the loss (or the loss alone) as layers, if one divides.
std::optional<LayerSplit> accounted_split(int64_t layers, int pp, int vpp);
// The uneven first and last stage, if there is one (pp >= 2).
std::optional<LayerSplit> uneven_split(int64_t layers, int pp, int vpp);

// The virtual stages of a layout string; errors name `path` and say where the text is wrong.
// Limits: 1 << 16 stages, 100000 layers, repeat counts of 100000 (a link's text is short).
Result<std::vector<VirtualStage>> parse_pipeline_layout(std::string_view text,
                                                        const std::string& path);

}  // namespace stepcast
