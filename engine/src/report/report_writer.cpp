// The report as JSON text, streamed into one string: the document report_json(report) dumps,
// byte for byte (tests/engine/report_writer_test.cpp and the golden reports check it), at a
// fraction of the cost: the tree cost ~3,500 allocations for a 14 KB report. Keys go in the
// order nlohmann::json prints them (sorted), with the same types (integers stay integers).
#include <fmt/format.h>

#include "scenario/fields.h"
#include "json/json_writer.h"
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

using detail::JsonWriter;

void write_memory(JsonWriter& w, const MemoryBreakdown& m) {
  w.begin_object();
  w.member("activations", m.activations);
  w.member("capacity", m.capacity);
  w.member("gradients", m.gradients);
  w.member("headroom", m.headroom);
  w.member("optimizer", m.optimizer);
  w.member("other", m.other);
  w.member("total", m.total);
  w.member("weights", m.weights);
  w.end_object();
}

void write_op(JsonWriter& w, const CommOp& op) {
  w.begin_object();
  w.member("bytes", op.bytes);
  w.member("count", op.count);
  w.member("group", to_string(op.group));
  w.member("group_size", op.group_size);
  w.member("kind", to_string(op.kind));
  w.member("link", op.link);
  w.member("phase", to_string(op.phase));
  w.member("time_s", op.time_s);
  w.member("total_time_s", op.total_s());
  w.member("what", op.what);
  w.end_object();
}

void write_stage(JsonWriter& w, const StageReport& st, ReportKind kind) {
  w.begin_object();
  w.member("backward_s", st.backward_s);
  if (kind == ReportKind::full) {
    w.key("communication");
    w.begin_array();
    for (const auto& op : st.communication) write_op(w, op);
    w.end_array();
  }
  w.member("dp_sync_s", st.dp_sync_s);
  w.member("fits", st.memory.fits());
  w.member("forward_s", st.forward_s);
  w.member("gpu", st.gpu);
  w.member("group", st.group);
  w.member("index", st.index);
  w.member("layers", st.layers);
  w.key("memory_bytes");
  write_memory(w, st.memory);
  w.member("optimizer_s", st.optimizer_s);
  w.member("p2p_s", st.p2p_s);
  w.member("parameters", st.parameters);
  w.member("recompute_s", st.recompute_s);
  w.end_object();
}

void write_replica(JsonWriter& w, const ReplicaReport& x) {
  w.begin_object();
  w.member("capacity_bytes", x.capacity_bytes);
  w.member("count", x.count);
  w.member("fits", x.fits);
  w.member("gpu", x.gpu);
  w.member("group", x.group);
  w.member("memory_bytes", x.memory_bytes);
  w.member("micro_batches", x.micro_batches);
  w.member("pipeline_s", x.pipeline_s);
  w.end_object();
}

void write_event(JsonWriter& w, const TimelineEvent& e) {
  w.begin_object();
  w.member("chunk", e.chunk);
  w.member("end_s", e.end_s);
  w.member("group", e.group);
  w.member("kind", to_string(e.kind));
  w.member("micro_batch", e.micro_batch);
  w.member("replica", e.replica);
  w.member("stage", e.stage);
  w.member("start_s", e.start_s);
  w.end_object();
}

void write_breakdown(JsonWriter& w, const Breakdown& b) {
  w.begin_object();
  w.member("backward", b.backward);
  w.member("bubble", b.bubble);
  w.member("cp_comm", b.cp_comm);
  w.member("dp_comm", b.dp_comm);
  w.member("ep_comm", b.ep_comm);
  w.member("forward", b.forward);
  w.member("host", b.host);
  w.member("optimizer", b.optimizer);
  w.member("other", b.other);
  w.member("pp_comm", b.pp_comm);
  w.member("recompute", b.recompute);
  w.member("tp_comm", b.tp_comm);
  w.end_object();
}

void write_report(JsonWriter& w, const Report& r, ReportKind kind) {
  w.begin_object();
  w.member("bottleneck_stage", r.bottleneck_stage);
  w.key("breakdown_s");
  write_breakdown(w, r.breakdown);
  if (r.calibration) {  // a small tree (report/calibration_json.cpp), only on calibrated estimates
    w.key("calibration");
    w.value(calibration_json(*r.calibration));
  }
  w.member("fits", r.fits);
  w.member("gpus", r.gpus);
  w.member("hfu", r.hfu);
  w.member("iteration_time_s", r.iteration_time_s);
  w.member("mfu", r.mfu);
  w.member("micro_batches", r.micro_batches);
  w.member("model_tflops_per_gpu", r.model_tflops_per_gpu);
  w.member("parameters", r.parameters);
  w.member("peak_tflops_per_gpu", r.peak_tflops);
  w.key("plan");
  detail::stream_resolved_plan(r.plan, w);
  w.key("replicas");
  w.begin_array();
  for (const auto& x : r.replicas) write_replica(w, x);
  w.end_array();
  w.member("samples_per_s", r.samples_per_s);
  w.key("stages");
  w.begin_array();
  for (const auto& st : r.stages) write_stage(w, st, kind);
  w.end_array();
  w.key("timeline");
  w.begin_object();
  w.key("events");
  w.begin_array();
  for (const auto& e : r.timeline) write_event(w, e);
  w.end_array();
  w.member("truncated", r.timeline_truncated);
  w.end_object();
  w.member("tokens_per_s", r.tokens_per_s);
  w.key("warnings");
  w.begin_array();
  for (const auto& text : r.warnings) w.value(text);
  w.end_array();
  w.end_object();
}

}  // namespace

Result<std::string> report_text(const Report& report, int indent, ReportKind kind) {
  std::string out;
  out.reserve(4096 + 4096 * report.stages.size() + 160 * report.timeline.size());
  JsonWriter w(out, indent);
  write_report(w, report, kind);
  w.finish();
  if (!w.non_finite()) return out;
  // Rare: the tree names the first number that is not finite (report_json's message).
  auto tree = report_json(report);
  if (!tree) return tree.error();
  return Error{ErrorCode::unsupported, "", "the estimate holds a number that is not finite"};
}

}  // namespace stepcast
