#include "stepcast/accuracy/sources.h"

#include <fmt/format.h>

#include "data_tables.h"

namespace stepcast::accuracy {

std::string source_of(std::string_view id) {
  const size_t dash = id.find('-');
  return std::string(dash == std::string_view::npos ? id : id.substr(0, dash));
}

const SourceFacts& SourceTable::facts_for(std::string_view source) const {
  for (const auto& f : sources) {
    const bool prefix = !f.id.empty() && f.id.back() == '*';
    const std::string_view id = std::string_view(f.id).substr(0, f.id.size() - (prefix ? 1 : 0));
    if (prefix ? source.starts_with(id) : source == id) return f;
  }
  return unlisted;
}

std::string SourceTable::megatron_lm_name() const {
  std::string ids;
  for (const auto& f : sources)
    if (f.megatron_lm) ids += (ids.empty() ? "" : "+") + f.id;
  return fmt::format("Megatron-LM ({})", ids);
}

namespace {

using stepcast::detail::JsonReader;
using detail::is_null;

// A recompute mode of the scenario's plan, or empty for null.
std::string recompute_mode(JsonReader& r, std::string_view key) {
  if (is_null(r, key)) return "";
  r.choice(key, {"none", "selective", "full"}, std::nullopt);
  return r.ok() ? r.raw(key)->get<std::string>() : "";
}

std::optional<SourceFacts::Heads> heads_when_unstated(JsonReader& r) {
  const std::string_view key = "heads_when_unstated";
  const Json* v = is_null(r, key) ? nullptr : detail::required(r, key);
  if (!v) return std::nullopt;
  JsonReader h(*v, r.field(key));
  h.reject_unknown_keys({"hidden", "heads", "because"});
  SourceFacts::Heads heads;
  heads.hidden = h.integer("hidden", std::nullopt);
  heads.heads = h.integer("heads", std::nullopt);
  heads.because = h.string("because", std::nullopt);
  if (!h.ok()) r.fail(h.error().code, h.error().path, h.error().message);
  return heads;
}

// One entry of the table (`listed`) or the defaults for unlisted sources.
Result<SourceFacts> read_facts(const Json& j, std::string path, bool listed) {
  JsonReader r(j, std::move(path));
  r.reject_unknown_keys({"id", "megatron_lm", "flash_attention", "overlap_p2p",
                         "pp_scatter_gather", "embedding_in_split", "tp_comm_overlap",
                         "sequence_parallel", "distributed_optimizer", "zero_stage",
                         "overlap_grad_reduce", "overlap_grad_reduce_below_params_b",
                         "overlap_param_gather", "tied_embeddings", "default_micro_batch",
                         "default_recompute", "recompute_yes_means", "heads_when_unstated",
                         "iter_time_from_tflops", "why"});
  SourceFacts f;
  f.listed = listed;
  if (listed)
    f.id = r.string("id", std::nullopt);
  else if (r.has("id"))
    r.fail(ErrorCode::unknown_key, r.field("id"),
           fmt::format("{}: the defaults for unlisted sources have no id", r.field("id")));
  f.megatron_lm = r.boolean("megatron_lm", std::nullopt);
  f.flash_attention = r.boolean("flash_attention", std::nullopt);
  f.overlap_p2p = r.boolean("overlap_p2p", std::nullopt);
  f.pp_scatter_gather = r.boolean("pp_scatter_gather", std::nullopt);
  f.embedding_in_split = r.boolean("embedding_in_split", std::nullopt);
  f.tp_comm_overlap = r.boolean("tp_comm_overlap", std::nullopt);
  f.sequence_parallel = r.boolean("sequence_parallel", std::nullopt);
  f.distributed_optimizer = r.boolean("distributed_optimizer", std::nullopt);
  f.zero_stage = static_cast<int>(r.integer("zero_stage", std::nullopt, 0, 3));
  f.overlap_grad_reduce = r.boolean("overlap_grad_reduce", std::nullopt);
  if (!is_null(r, "overlap_grad_reduce_below_params_b"))
    f.overlap_grad_reduce_below_params_b =
        r.number("overlap_grad_reduce_below_params_b", std::nullopt);
  f.overlap_param_gather = r.boolean("overlap_param_gather", std::nullopt);
  if (!is_null(r, "tied_embeddings"))
    f.tied_embeddings = r.boolean("tied_embeddings", std::nullopt);
  if (!is_null(r, "default_micro_batch"))
    f.default_micro_batch = r.integer("default_micro_batch", std::nullopt);
  f.default_recompute = recompute_mode(r, "default_recompute");
  f.recompute_yes_means = recompute_mode(r, "recompute_yes_means");
  f.heads_when_unstated = heads_when_unstated(r);
  f.iter_time_from_tflops = r.boolean("iter_time_from_tflops", std::nullopt);
  f.why = r.string("why", std::nullopt);
  if (!r.ok()) return r.error();
  return f;
}

}  // namespace

Result<SourceTable> parse_source_table(std::string_view json_text) {
  auto doc = detail::parse_table(json_text, "sources.json");
  if (!doc) return doc.error();
  JsonReader top(*doc, "");
  top.reject_unknown_keys({"about", "unlisted", "sources"});
  top.string("about", std::string());  // for people only
  const Json* unlisted = detail::required(top, "unlisted");
  if (!top.ok()) return top.error();
  SourceTable table;
  auto defaults = read_facts(*unlisted, "unlisted", /*listed=*/false);
  if (!defaults) return defaults.error();
  table.unlisted = std::move(defaults).value();
  auto listed = [](const Json& j, std::string path) {
    return read_facts(j, std::move(path), /*listed=*/true);
  };
  if (auto e = detail::read_list(top, "sources", listed, table.sources)) return *e;
  return table;
}

const Result<SourceTable>& builtin_source_table() {
  static const Result<SourceTable> table = parse_source_table(detail::sources_json());
  return table;
}

bool is_megatron_source(std::string_view source) {
  const auto& table = builtin_source_table();
  return table.ok() && table->facts_for(source).megatron_lm;
}

}  // namespace stepcast::accuracy
