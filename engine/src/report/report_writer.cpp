// The report as JSON text, streamed into one string: the document report_json(report) dumps,
// byte for byte (tests/engine/report_writer_test.cpp and the golden reports check it), at a
// fraction of the cost: the tree cost ~3,500 allocations for a 14 KB report. Keys go in the
// order nlohmann::json prints them (sorted), with the same types (integers stay integers).
#include <fmt/format.h>

#include "json/json_writer.h"
#include "report/report_keys.h"
#include "stepcast/estimate.h"
#include "stepcast/report.h"

namespace stepcast {

namespace detail {

void JsonWriter::value(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      begin_object();
      for (auto it = j.begin(); it != j.end(); ++it) {
        separate();
        if (tracking_) frames_.back().key = it.key();
        string(it.key());  // (a document's key may need escaping)
        put(indent_ < 0 ? ":" : ": ");
        after_key_ = true;
        value(*it);
      }
      end_object();
      return;
    case Json::value_t::array:
      begin_array();
      for (const auto& element : j) value(element);
      end_array();
      return;
    case Json::value_t::string: value(j.get_ref<const std::string&>()); return;
    case Json::value_t::boolean: value(j.get<bool>()); return;
    case Json::value_t::number_integer: value(j.get<int64_t>()); return;
    case Json::value_t::number_unsigned: {
      separate();
      const fmt::format_int digits(j.get<uint64_t>());
      put(std::string_view(digits.data(), digits.size()));
      return;
    }
    case Json::value_t::number_float: value(j.get<double>()); return;
    default:  // null (a tree never holds the rest)
      separate();
      put("null");
      return;
  }
}

void JsonWriter::grow(size_t n) { out_.resize(std::max(2 * out_.size(), pos_ + n)); }

void JsonWriter::string(std::string_view s) {
  bool plain = true;
  for (const char c : s)
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  if (plain) {
    put('"');
    put(s);
    put('"');
    return;
  }
  // Escapes and invalid UTF-8 (replaced by U+FFFD) exactly as the tree's dump() treats them.
  put(Json(std::string(s)).dump(-1, ' ', /*ensure_ascii=*/false,
                                    Json::error_handler_t::replace));
}

}  // namespace detail

namespace {

// Writes the report through its key table; whether a number was NaN or infinite, and (when
// `where` is given) the path of the first.
bool write_report(std::string& out, const Report& report, int indent, ReportKind kind,
                  std::string* where = nullptr) {
  detail::JsonWriter w(out, indent);
  if (where) w.track_path();
  const auto& t = detail::report_table();
  detail::write_object<Report>(w, report, t.keys, t.order, kind);
  w.finish();
  if (where) *where = w.first_non_finite_path();
  return !w.non_finite();
}

}  // namespace

Result<std::string> report_text(const Report& report, int indent, ReportKind kind) {
  std::string out;
  out.reserve(4096 + 4096 * report.stages.size() + 160 * report.timeline.size());
  if (write_report(out, report, indent, kind)) return out;
  // Rare: written again, keeping track of where, to name the first number that is not finite.
  std::string scratch, where;
  write_report(scratch, report, indent, kind, &where);
  return Error{ErrorCode::unsupported, "",
               fmt::format("the estimate's {} is not a finite number: the inputs are beyond what "
                           "the model computes",
                           where)};
}

}  // namespace stepcast
