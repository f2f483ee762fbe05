#include "stepcast/catalog.h"

#include <fmt/format.h>

#include <cstdint>

#include "scenario/json_reader.h"
#include "scenario/specs_json.h"

namespace stepcast {

namespace {

template <class T>
const T* find_by_id(const std::vector<T>& items, std::string_view id) {
  for (const auto& item : items)
    if (item.id == id) return &item;
  return nullptr;
}

Error in_file(std::string_view file, Error e) {
  e.message = fmt::format("{}: {}", file, e.message);
  return e;
}

// The id must match the file name, so that a preset is found where its name says it is.
std::optional<Error> check_id(std::string_view file, std::string_view id) {
  const auto slash = file.rfind('/');
  std::string_view stem = file.substr(slash == std::string_view::npos ? 0 : slash + 1);
  if (stem.size() > 5 && stem.substr(stem.size() - 5) == ".json") stem.remove_suffix(5);
  if (stem != id)
    return Error{ErrorCode::parse_error, "id",
                 fmt::format("{}: id \"{}\" does not match the file name", file, id)};
  return std::nullopt;
}

}  // namespace

const GpuSpec* Catalog::find_gpu(std::string_view id) const { return find_by_id(gpus, id); }
const LinkSpec* Catalog::find_link(std::string_view id) const { return find_by_id(links, id); }
const NodePreset* Catalog::find_node(std::string_view id) const { return find_by_id(nodes, id); }
const ModelSpec* Catalog::find_model(std::string_view id) const { return find_by_id(models, id); }
const FrameworkProfile* Catalog::find_framework(std::string_view id) const {
  return find_by_id(frameworks, id);
}

Result<Catalog> load_catalog(std::span<const PresetFile> files) {
  Catalog catalog;
  catalog.documents = Json{{"gpus", Json::array()},   {"links", Json::array()},
                           {"nodes", Json::array()},  {"models", Json::array()},
                           {"frameworks", Json::array()}};
  bool have_calibration = false;
  for (const auto& file : files) {
    // (Through the engine's one parse: a key given twice in a preset is an error too.)
    auto parsed = parse_json(file.text, "the file", SIZE_MAX);
    if (!parsed) return in_file(file.path, parsed.error());
    Json doc = std::move(parsed).value();
    const std::string_view folder = file.path.substr(0, file.path.find('/'));
    if (file.path == "calibration.json") {
      auto cal = detail::calibration_from_json(doc);
      if (!cal) return in_file(file.path, cal.error());
      catalog.calibration = std::move(cal).value();
      have_calibration = true;
      continue;
    }
    std::optional<Error> id_error;
    if (folder == "gpus") {
      auto gpu = detail::gpu_from_json(doc, "");
      if (!gpu) return in_file(file.path, gpu.error());
      id_error = check_id(file.path, gpu->id);
      catalog.gpus.push_back(std::move(gpu).value());
    } else if (folder == "links") {
      auto link = detail::link_from_json(doc, "");
      if (!link) return in_file(file.path, link.error());
      id_error = check_id(file.path, link->id);
      catalog.links.push_back(std::move(link).value());
    } else if (folder == "nodes") {
      auto node = detail::node_preset_from_json(doc);
      if (!node) return in_file(file.path, node.error());
      id_error = check_id(file.path, node->id);
      catalog.nodes.push_back(std::move(node).value());
    } else if (folder == "frameworks") {
      auto profile = detail::framework_from_json(doc);
      if (!profile) return in_file(file.path, profile.error());
      id_error = check_id(file.path, profile->id);
      catalog.frameworks.push_back(std::move(profile).value());
    } else if (folder == "models") {
      auto model = detail::model_from_json(doc, "", /*preset=*/true);
      if (!model) return in_file(file.path, model.error());
      id_error = check_id(file.path, model->id);
      catalog.models.push_back(std::move(model).value());
    } else {
      return Error{ErrorCode::parse_error, "",
                   fmt::format("{}: not in gpus/, links/, nodes/, models/ or frameworks/", file.path)};
    }
    if (id_error) return *id_error;
    catalog.documents[std::string(folder)].push_back(std::move(doc));
  }
  if (!have_calibration)
    return Error{ErrorCode::parse_error, "", "presets: calibration.json is missing"};
  // Nodes refer to GPUs and links by id: check every reference once, here.
  for (const auto& node : catalog.nodes) {
    const auto* intra = catalog.find_link(node.intra_node_link);
    const auto* inter = catalog.find_link(node.inter_node_link);
    if (!catalog.find_gpu(node.gpu) || !intra || !inter)
      return Error{ErrorCode::unknown_preset, "",
                   fmt::format("nodes/{}.json refers to a gpu or link that is not a preset",
                               node.id)};
    if (intra->scope != LinkScope::intra_node || inter->scope != LinkScope::inter_node)
      return Error{ErrorCode::parse_error, "",
                   fmt::format("nodes/{}.json: intra_node_link must be an intra-node link and "
                               "inter_node_link an inter-node link",
                               node.id)};
  }
  return catalog;
}

const Catalog& builtin_catalog() {
  // Parsed once; the presets are compiled in, so a failure here is a build defect that the
  // presets test catches. An empty catalog keeps the program alive and every lookup failing.
  static const Catalog catalog = [] {
    auto loaded = load_catalog(builtin_preset_files());
    return loaded ? std::move(loaded).value() : Catalog{};
  }();
  return catalog;
}

}  // namespace stepcast
