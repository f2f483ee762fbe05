// `stepcast validate` and `stepcast calibrate`: the accuracy of the engine against published
// training runs (tests/validation/README.md). File I/O lives here; the rest is the
// stepcast_accuracy library (engine/accuracy/).
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_io.h"
#include "stepcast/accuracy/calibrate.h"
#include "stepcast/accuracy/validation.h"

using namespace stepcast;
using namespace stepcast::accuracy;

namespace {

using stepcast::cli::fail;

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return false;
  out << text;
  return static_cast<bool>(out);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

struct Options {
  std::string input;
  std::string format = "text";
  std::string write_cases;
  std::string write;
  std::vector<std::string> exclude;
  std::string error;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string& into) {
      if (i + 1 >= argc) o.error = arg + " needs a value";
      else into = argv[++i];
    };
    if (arg == "--format") value(o.format);
    else if (arg == "--write-cases") value(o.write_cases);
    else if (arg == "--write") value(o.write);
    else if (arg == "--exclude-source") {
      std::string s;
      value(s);
      if (!s.empty()) o.exclude.push_back(s);
    } else if (arg.size() > 1 && arg[0] == '-') o.error = "unknown option " + arg;
    else if (o.input.empty()) o.input = arg;
    else o.error = "one input file only";
    if (!o.error.empty()) break;
  }
  if (o.error.empty() && o.input.empty()) o.error = "give a published-runs CSV or a cases JSONL";
  if (o.error.empty() && o.format != "text" && o.format != "json")
    o.error = fmt::format("--format={} must be json or text", o.format);
  return o;
}

// Cases from a published-runs CSV (converted, with skipped rows) or a committed cases JSONL.
bool load_cases(const Options& o, const Catalog& catalog, Conversion& conv, std::string& error) {
  std::string text;
  if (!stepcast::cli::read_input(o.input, text)) {
    error = fmt::format("cannot read {}", o.input);
    return false;
  }
  if (ends_with(o.input, ".jsonl") || ends_with(o.input, ".json")) {
    auto cases = parse_cases_jsonl(text);
    if (!cases) {
      error = cases.error().message;
      return false;
    }
    conv.cases = std::move(cases).value();
    return true;
  }
  auto table = parse_csv(text);
  if (!table) {
    error = table.error().message;
    return false;
  }
  conv = convert_runs(*table, catalog);
  return true;
}

Json skipped_json(const std::vector<Skipped>& skipped) {
  Json out = Json::array();
  for (const auto& s : skipped)
    out.push_back(Json{{"id", s.id}, {"source", s.source}, {"reason", s.reason}});
  return out;
}

Json ranks_json(const std::vector<RankGroup>& groups) {
  Json out = Json::array();
  for (const auto& g : groups) out.push_back(Json{{"group", g.name}, {"rows", g.rows}, {"spearman", g.rho}});
  return out;
}

std::string skipped_text(const std::vector<Skipped>& skipped) {
  if (skipped.empty()) return {};
  std::string out = "\nskipped rows\n";
  for (const auto& s : skipped) out += fmt::format("  {:<42} {}\n", s.id, s.reason);
  return out;
}

std::string ranks_text(const std::vector<RankGroup>& groups) {
  std::string out = "\nSpearman rank correlation, predicted vs measured time\n";
  for (const auto& g : groups) out += fmt::format("  {:<40} {:>3} rows  rho {:+.3f}\n", g.name, g.rows, g.rho);
  return out;
}

int run_validate(const Options& o, const Catalog& catalog) {
  Conversion conv;
  std::string error;
  if (!load_cases(o, catalog, conv, error)) return fail(error);
  if (!o.write_cases.empty() && !write_file(o.write_cases, to_jsonl(conv.cases)))
    return fail(fmt::format("cannot write {}", o.write_cases));
  auto prepared = prepare(conv.cases, catalog);
  if (!prepared) return fail(prepared.error().message);
  const Accuracy acc = evaluate(*prepared, catalog.calibration);
  const auto ranks = rank_correlations(*prepared, acc);
  if (o.format == "json") {
    Json j = to_json(acc);
    j["skipped"] = skipped_json(conv.skipped);
    j["rank_correlations"] = ranks_json(ranks);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << to_text(acc) << skipped_text(conv.skipped) << ranks_text(ranks);
  }
  return 0;
}

std::string builtin_calibration_text() {
  for (const auto& f : builtin_preset_files())
    if (f.path == "calibration.json") return std::string(f.text);
  return "{}";
}

int run_calibrate(const Options& o, const Catalog& catalog) {
  Conversion conv;
  std::string error;
  if (!load_cases(o, catalog, conv, error)) return fail(error);
  auto prepared = prepare(conv.cases, catalog);
  if (!prepared) return fail(prepared.error().message);
  const CalibrationFit fit = fit_calibration(*prepared, catalog.calibration, catalog, o.exclude);
  const std::string written_text = calibration_json(fit, builtin_calibration_text());
  Json written = Json::parse(written_text, nullptr, false);
  if (written.is_discarded()) written = Json::object();
  if (!o.write.empty() && !write_file(o.write, written_text))
    return fail(fmt::format("cannot write {}", o.write));

  std::vector<PreparedCase> kept;
  for (const auto& c : *prepared)
    if (std::find(o.exclude.begin(), o.exclude.end(), c.data.source) == o.exclude.end())
      kept.push_back(c);
  const Accuracy in_sample = evaluate(*prepared, fit.calibration);
  const LosoResult loso = leave_one_source_out(kept, catalog.calibration, catalog);
  const auto ranks = rank_correlations(*prepared, in_sample);

  if (o.format == "json") {
    Json fams = Json::array();
    for (const auto& f : fit.families) {
      fams.push_back(Json{{"arch", f.arch},
                          {"fitted_keys", f.fitted_keys},
                          {"bounds", [&] {
                             Json b = Json::array();
                             for (const auto& p : f.parameters)
                               b.push_back(Json{{"key", p.key}, {"lo", p.lo}, {"hi", p.hi},
                                                {"source", p.bound_source}});
                             return b;
                           }()},
                          {"fitted_on", f.fitted_on},
                          {"mape_pct", f.mape_pct},
                          {"constants", written.contains("families") ? written["families"].value(f.arch, Json()) : Json()}});
    }
    Json loso_rows = Json::array();
    for (const auto& r : loso.sources)
      loso_rows.push_back(Json{{"source", r.source},
                               {"rows", r.rows},
                               {"in_sample_mape_pct", r.in_sample_mape_pct},
                               {"loso_mape_pct", r.loso_mape_pct},
                               {"loso_worst_pct", r.loso_worst_pct},
                               {"loso_worst_id", r.loso_worst_id}});
    Json j{{"families", fams},
           {"calibration", written},
           {"in_sample", to_json(in_sample)},
           {"leave_one_source_out", {{"sources", loso_rows}, {"predictions", to_json(loso.predictions)}}},
           {"rank_correlations", ranks_json(ranks)},
           {"skipped", skipped_json(conv.skipped)}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "fitted constants (excluded sources:";
  for (const auto& s : o.exclude) std::cout << " " << s;
  std::cout << (o.exclude.empty() ? " none" : "") << ")\n";
  for (const auto& f : fit.families) {
    std::cout << fmt::format("  {:<8} {} rows, in-sample MAPE {:.2f} %\n", f.arch,
                             f.fitted_on.size(), f.mape_pct);
    const ArchCalibration& c = f.constants;
    std::cout << fmt::format(
        "           gemm_efficiency {:.3f}  fp8_gemm_efficiency {:.3f}  attention_efficiency "
        "{:.3f}\n           memory_efficiency {:.3f}  gemm_overhead_us {:.0f}  layer_overhead_us "
        "{:.0f}   (fitted: ",
        c.gemm_efficiency, c.fp8_gemm_efficiency, c.attention_efficiency, c.memory_efficiency,
        c.gemm_overhead_s * 1e6, c.layer_overhead_s * 1e6);
    for (size_t i = 0; i < f.fitted_keys.size(); ++i)
      std::cout << (i ? ", " : "") << f.fitted_keys[i];
    std::cout << ")\n";
    for (const auto& p : f.parameters)
      std::cout << fmt::format("           {:<21} in [{}, {:.3f}]: {}\n", p.key, p.lo, p.hi,
                               p.bound_source);
  }
  std::cout << "\nin sample (every row, fitted constants)\n" << to_text(in_sample);
  std::cout << "\nleave one source out (fit without the source, predict it)\n";
  std::cout << fmt::format("{:<14} {:>5} {:>12} {:>10} {:>9}  {}\n", "source", "rows",
                           "in-sample %", "LOSO %", "worst %", "worst row");
  for (const auto& r : loso.sources)
    std::cout << fmt::format("{:<14} {:>5} {:>12.1f} {:>10.1f} {:>+9.1f}  {}\n", r.source, r.rows,
                             r.in_sample_mape_pct, r.loso_mape_pct, r.loso_worst_pct,
                             r.loso_worst_id);
  const auto& lm = loso.predictions.megatron;
  const auto& lo = loso.predictions.overall;
  std::cout << fmt::format("{:<14} {:>5} {:>12} {:>10.1f} {:>+9.1f}  {}\n", "Megatron-LM", lm.rows,
                           "", lm.mape_pct, lm.worst_pct, lm.worst_id);
  std::cout << fmt::format("{:<14} {:>5} {:>12} {:>10.1f} {:>+9.1f}  {}\n", "overall", lo.rows, "",
                           lo.mape_pct, lo.worst_pct, lo.worst_id);
  std::cout << skipped_text(conv.skipped) << ranks_text(ranks);
  if (!o.write.empty()) std::cout << "\nwrote " << o.write << "\n";
  return 0;
}

}  // namespace

int run_validation_command(const std::string& command, int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (!o.error.empty()) return fail(o.error);
  auto loaded = load_catalog(builtin_preset_files());
  if (!loaded) return fail("built-in presets: " + loaded.error().message);
  if (command == "validate") return run_validate(o, *loaded);
  return run_calibrate(o, *loaded);
}
