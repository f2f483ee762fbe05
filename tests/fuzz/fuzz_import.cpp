// The importers (`stepcast import hf-config`, `stepcast import megatron-args`, `stepcast import
// torchtitan`, the page's importHfConfig() and importMegatronArgs()) on any text; what they
// accept exports (`stepcast export`) and its Megatron arguments and torchtitan job config import
// again, to the same TP, PP and batches.
#include "fuzz_common.h"
#include "stepcast/export_megatron.h"
#include "stepcast/import_hf_config.h"
#include "stepcast/import_megatron_args.h"
#include "stepcast/torchtitan_config.h"

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
  // A torchtitan job config reads back (where the model has a torchtitan flavor) to the same
  // plan, or is refused with an error, never anything else.
  const std::string toml = export_torchtitan_toml(*s);
  if (!valid_utf8(toml)) fuzz::finding("torchtitan export not UTF-8", toml.substr(0, 200));
  if (const auto titan = scenario_from_torchtitan_toml(
          toml, builtin_catalog(), {"dgx-h100", s->cluster.groups.front().nodes});
      titan && (titan->scenario["plan"].value("tp", int64_t{0}) != s->plan.tp ||
                titan->scenario["plan"].value("global_batch", int64_t{0}) != s->plan.global_batch))
    fuzz::finding("torchtitan export imports to another plan", toml.substr(0, 300));
  // The oracle: the same parallel plan and batch (what every exporter writes, whatever else a
  // framework cannot express).
  const Json& plan = back->scenario["plan"];
  const std::pair<const char*, int64_t> same[] = {
      {"tp", s->plan.tp}, {"pp", s->plan.pp}, {"global_batch", s->plan.global_batch},
      {"micro_batch", s->plan.micro_batch}};
  for (const auto& [key, want] : same)
    if (plan.value(key, int64_t{1}) != want)
      fuzz::finding("exported arguments import to another plan",
                    std::string(key) + " " + plan.dump().substr(0, 200));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::text_of(data, size);
  const auto config = model_from_hf_config(text);
  if (const Json* model = fuzz::checked(config)) {
    (void)model->dump();
    check_exports(scenario_with_model(*model));
  }
  const auto titan = scenario_from_torchtitan_toml(text, builtin_catalog(), {"dgx-h100", 4});
  if (const TorchtitanImport* t = fuzz::checked(titan)) {
    (void)to_json(*t).dump(-1, ' ', false, Json::error_handler_t::replace);
    check_exports(t->scenario);
  }
  const auto imported = scenario_from_megatron_args(text, builtin_catalog());
  if (const MegatronImport* m = fuzz::checked(imported)) {
    (void)to_json(*m).dump(-1, ' ', false, Json::error_handler_t::replace);
    if (m->scenario.contains("cluster")) check_exports(m->scenario);
  }
  return 0;
}
