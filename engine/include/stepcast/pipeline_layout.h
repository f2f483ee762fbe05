// Megatron-Core's free-form pipeline layout (--pipeline-model-parallel-layout,
// megatron/core/transformer/pipeline_parallel_layer_layout.py): the model's blocks per virtual
// pipeline stage, stages separated by '|', 'E' the embedding, 't' a transformer layer, 'm' a
// multi-token prediction module, 'L' the output layer and loss; "t*3" repeats a symbol and
// "(tt|)*29" a group. Stage k of the list is virtual stage k: pipeline rank k % pp, model chunk
// k / pp. DeepSeek-V3 on 1024 H100 (Megatron-Bridge): "Et|(tt|)*30mL" for pp 8 x vpp 4.
#pragma once

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

// The virtual stages of a layout string; errors name `path` and say where the text is wrong.
// Limits: 1 << 16 stages, 100000 layers, repeat counts of 100000 (a link's text is short).
Result<std::vector<VirtualStage>> parse_pipeline_layout(std::string_view text,
                                                        const std::string& path);

}  // namespace stepcast
