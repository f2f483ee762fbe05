// The importers (`stepcast import hf-config`, `stepcast import megatron-args`, the page's
// importHfConfig() and importMegatronArgs()) on any text; what they accept exports
// (`stepcast export`) and its Megatron arguments import again.
#include "fuzz_common.h"
#include "stepcast/export_megatron.h"
#include "stepcast/import_hf_config.h"
#include "stepcast/import_megatron_args.h"

namespace {

using namespace stepcast;

// A valid scenario's exports are text a shell reads back: the Megatron arguments import again.
void check_exports(const Json& doc) {
  const auto scenario = parse_scenario(doc.dump(), builtin_catalog());
  const Scenario* s = fuzz::checked(scenario);
  if (!s) return;
  for (auto kind : {PlanExport::megatron_args, PlanExport::bridge_recipe, PlanExport::torchrun}) {
    const std::string text = export_plan(*s, kind);
    if (!valid_utf8(text)) fuzz::finding("export not UTF-8", text.substr(0, 200));
  }
  const auto back = scenario_from_megatron_args(export_plan(*s, PlanExport::torchrun),
                                                builtin_catalog(),
                                                {.node = s->cluster.groups.front().node_id.empty()
                                                             ? "dgx-h100"
                                                             : s->cluster.groups.front().node_id});
  if (!back) fuzz::finding("exported arguments do not import", back.error().message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::text_of(data, size);
  const auto config = model_from_hf_config(text);
  if (const Json* model = fuzz::checked(config)) {
    (void)model->dump();
    check_exports(scenario_with_model(*model));
  }
  const auto imported = scenario_from_megatron_args(text, builtin_catalog());
  if (const MegatronImport* m = fuzz::checked(imported)) {
    (void)to_json(*m).dump(-1, ' ', false, Json::error_handler_t::replace);
    if (m->scenario.contains("cluster")) check_exports(m->scenario);
  }
  return 0;
}
