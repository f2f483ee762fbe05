// JSON -> spec structs for presets and for custom objects inside a scenario. Private.
#pragma once

#include <string>

#include "stepcast/catalog.h"

namespace stepcast::detail {

Result<GpuSpec> gpu_from_json(const Json& j, const std::string& path);
Result<LinkSpec> link_from_json(const Json& j, const std::string& path);
Result<NodePreset> node_preset_from_json(const Json& j);
// preset=true requires id and source; a custom model in a scenario needs neither.
Result<ModelSpec> model_from_json(const Json& j, const std::string& path, bool preset);
Result<Calibration> calibration_from_json(const Json& j);
Result<FrameworkProfile> framework_from_json(const Json& j);

}  // namespace stepcast::detail
