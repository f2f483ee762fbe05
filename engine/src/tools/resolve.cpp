// The resolved scenario: what the engine will run, written back through the schema's tables.
#include "stepcast/resolve.h"

#include "scenario/fields.h"
#include "estimate/step.h"
#include "stepcast/estimate.h"
#include "stepcast/report.h"
#include "stepcast/schema.h"

namespace stepcast {

namespace {

// A GPU or link as the document gave it: its preset id, or the object with every key filled.
template <class Spec>
Json reference_json(const Json* given, std::span<const detail::Field<Spec>> fields,
                    const Spec& spec) {
  if (given && given->is_string()) return *given;
  Json out = given && given->is_object() ? *given : Json::object();
  detail::write_fields(fields, spec, out);
  return out;
}

Json group_json(const Json& given, const ClusterGroup& g) {
  if (g.node_id.size()) return Json{{"node", g.node_id}, {"nodes", g.nodes}};
  Json out = given;
  out["gpu"] = reference_json(given.contains("gpu") ? &given["gpu"] : nullptr,
                              detail::gpu_fields(), g.gpu);
  if (out["gpu"].is_object()) {
    Json peaks = Json::object();
    for (size_t i = 0; i < kPrecisions; ++i)
      if (g.gpu.peak[i]) peaks[std::string(enum_names<Precision>()[i])] = *g.gpu.peak[i] / 1e12;
    out["gpu"]["peak_tflops"] = std::move(peaks);
  }
  out["gpus_per_node"] = g.gpus_per_node;
  out["nodes"] = g.nodes;
  out["nics_per_node"] = g.nics_per_node;
  for (const auto& [key, link] : {std::pair{"intra_node_link", &g.intra_node_link},
                                  std::pair{"inter_node_link", &g.inter_node_link}})
    out[key] = reference_json(given.contains(key) ? &given[key] : nullptr, detail::link_fields(),
                              *link);
  return out;
}

}  // namespace

Json resolved_document(const Scenario& s, const Json& doc) {
  Json out = Json::object();
  if (doc.contains("name")) out["name"] = doc["name"];
  const Json& model = doc["model"];
  if (model.is_string()) {
    out["model"] = model;
  } else {
    out["model"] = model;
    detail::write_fields(detail::model_fields(), s.model, out["model"]);
    out["model"].erase("seq_len");  // the scenario's seq_len below is the one that counts
    if (model.contains("seq_len")) out["model"]["seq_len"] = model["seq_len"];
  }
  const Json& cluster = doc["cluster"];
  if (cluster.contains("groups")) {
    Json groups = Json::array();
    for (size_t i = 0; i < s.cluster.groups.size(); ++i)
      groups.push_back(group_json(cluster["groups"][i], s.cluster.groups[i]));
    const Json* link = cluster.contains("inter_group_link") ? &cluster["inter_group_link"]
                                                             : nullptr;
    out["cluster"] = Json{{"groups", std::move(groups)}};
    out["cluster"]["inter_group_link"] =
        link ? reference_json(link, detail::link_fields(), s.cluster.inter_group_link)
             : Json(s.cluster.inter_group_link.id);
  } else {
    out["cluster"] = group_json(cluster, s.cluster.groups.front());
  }

  Json plan = resolved_plan_json(s.plan);
  // DualPipe takes no stages or replica sets of its own (rule dualpipe_layout): its split stays
  // in the keys that give it (first_stage_layers, last_stage_layers, the layout).
  if (s.plan.effective_schedule() != PipelineSchedule::dualpipe) {
    const std::vector<detail::ReplicaSet> sets = detail::replica_sets(s);
    // The stages written below hold the split that first_stage_layers and last_stage_layers
    // asked for.
    plan.erase("first_stage_layers");
    plan.erase("last_stage_layers");
    if (!s.plan.replicas.empty()) {
      Json replicas = Json::array();
      for (const auto& set : sets)
        replicas.push_back(
            Json{{"group", set.group}, {"count", set.count}, {"micro_batches", set.micro_batches}});
      plan["replicas"] = std::move(replicas);
    } else if (!s.plan.pipeline_layout.empty()) {
      // The free-form layout is the split: kept as given.
    } else {
      Json stages = Json::array();
      const auto& lay = sets.front().layout;
      for (size_t i = 0; i < lay.groups.size(); ++i)
        stages.push_back(Json{{"group", lay.groups[i]}, {"layers", lay.layers[i]}});
      plan["stages"] = std::move(stages);
    }
  }
  out["plan"] = std::move(plan);
  out["seq_len"] = s.model.seq_len;
  return out;
}

Json resolve_json(const Json& doc, const Catalog& catalog) {
  std::vector<Error> errors = scenario_errors(doc, catalog);
  if (!errors.empty()) {
    Json list = Json::array();
    for (const auto& e : errors) list.push_back(to_json(e)["error"]);
    return Json{{"errors", std::move(list)}};
  }
  const Scenario s = *scenario_from_json(doc, catalog);
  Json model = Json::object();
  detail::write_fields(detail::model_fields(), s.model, model);
  model["id"] = s.model.id;
  model["parameters"] = count_parameters(s.model, s.model.vocab, s.model.seq_len).total;
  // Which layers route to experts follows from several keys (first_dense_layers, layer_freq as a
  // number or a list): the count, so that a page need not restate the rule.
  if (s.model.moe.enabled()) model["moe_layers"] = s.model.moe_layers(0, s.model.layers);
  Json groups = Json::array();
  for (const auto& g : s.cluster.groups)
    groups.push_back(Json{{"node", g.node_id.empty() ? Json(nullptr) : Json(g.node_id)},
                          {"gpu", g.gpu.id.empty() ? Json(nullptr) : Json(g.gpu.id)},
                          {"gpu_name", g.gpu.name},
                          {"memory_gib", g.gpu.memory_bytes / (1024.0 * 1024.0 * 1024.0)},
                          {"gpus_per_node", g.gpus_per_node},
                          {"nodes", g.nodes},
                          {"gpus", g.gpus()},
                          {"intra_node_link", g.intra_node_link.name},
                          {"inter_node_link", g.inter_node_link.name},
                          {"nics_per_node", g.nics_per_node}});
  return Json{{"scenario", resolved_document(s, doc)},
              {"model", std::move(model)},
              {"groups", std::move(groups)},
              {"gpus", s.cluster.gpus()},
              {"micro_batches", s.plan.micro_batches()}};
}

}  // namespace stepcast
