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
#include "stepcast/accuracy/anchored.h"
#include "stepcast/accuracy/calibrate.h"
#include "stepcast/accuracy/cases.h"
#include "stepcast/accuracy/csv.h"
#include "stepcast/accuracy/memory_accuracy.h"
#include "stepcast/accuracy/report.h"
#include "stepcast/accuracy/runs.h"
#include "stepcast/accuracy/statistics.h"

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
  std::vector<std::string> inputs;
  std::string format = "text";
  std::string write_cases;
  std::string write;
  std::vector<std::string> exclude;
  bool anchored = false;  // validate: calibrated on one or two runs of each cluster
  std::string error;
};

Options parse(int argc, char** argv) {
  Options o;
  std::vector<std::string> excluded;
  o.error = stepcast::cli::read_options(
      argc, argv, 2,
      {{"--format", &o.format}, {"--write-cases", &o.write_cases}, {"--write", &o.write},
       {"--anchored", nullptr, &o.anchored}, {"--exclude-source", nullptr, nullptr, &excluded}},
      o.inputs);
  for (auto& s : excluded)
    if (!s.empty()) o.exclude.push_back(std::move(s));
  if (o.error.empty() && o.inputs.empty())
    o.error = "give published-runs or modern-runs CSVs, or a cases JSONL";
  if (o.error.empty() && o.format != "text" && o.format != "json")
    o.error = fmt::format("--format={} must be json or text", o.format);
  return o;
}

// Cases from run tables (published-runs or modern-runs CSVs, converted, with skipped rows) or
// committed cases JSONL files, in the order given.
bool load_cases(const Options& o, const Catalog& catalog, Conversion& conv, std::string& error) {
  for (const auto& input : o.inputs) {
    std::string text;
    if (auto e = stepcast::cli::read_input(input, text); !e.empty()) {
      error = e;
      return false;
    }
    Conversion one;
    if (ends_with(input, ".jsonl") || ends_with(input, ".json")) {
      auto cases = parse_cases_jsonl(text);
      if (!cases) {
        error = fmt::format("{}: {}", input, cases.error().message);
        return false;
      }
      one.cases = std::move(cases).value();
    } else {
      auto table = parse_csv(text);
      if (!table) {
        error = fmt::format("{}: {}", input, table.error().message);
        return false;
      }
      one = convert_runs(*table, catalog);
    }
    add_table(conv, std::move(one));
  }
  return true;
}

// Inputs that hold no run (a scenario, a CSV of something else) are an error, not a report of
// "MAPE 0.0 %" over nothing.
std::string no_cases_error(const Options& o, const Conversion& conv) {
  if (!conv.cases.empty()) return "";
  std::string inputs;
  for (const auto& i : o.inputs) inputs += (inputs.empty() ? "" : ", ") + i;
  return fmt::format("{}: no runs read ({} rows skipped): not a published-runs or modern-runs "
                     "table, or a cases JSONL",
                     inputs, conv.skipped.size());
}

int run_validate(const Options& o, const Catalog& catalog) {
  Conversion conv;
  std::string error;
  if (!load_cases(o, catalog, conv, error)) return fail(error);
  if (auto e = no_cases_error(o, conv); !e.empty()) return fail(e);
  if (!o.write_cases.empty() && !write_file(o.write_cases, to_jsonl(conv.cases)))
    return fail(fmt::format("cannot write {}", o.write_cases));
  auto all = prepare(conv.cases, catalog);
  if (!all) return fail(all.error());
  // Time cases and memory cases (tests/validation/memory-runs.csv) are reported apart.
  const std::vector<PreparedCase> memory = memory_cases(*all);
  const auto prepared = time_cases(*all);
  if (o.anchored) {  // engine/accuracy/include/stepcast/accuracy/anchored.h
    const AnchoredAccuracy cluster = anchored_accuracy(prepared, catalog.calibration);
    const AnchoredAccuracy model = anchored_accuracy(prepared, catalog.calibration, true);
    if (o.format == "json")
      std::cout << Json{{"cluster", to_json(cluster)}, {"model", to_json(model)}}.dump(2) << "\n";
    else
      std::cout << "runs on one cluster\n" << to_text(cluster) << "\nruns of one model on one cluster\n"
                << to_text(model);
    return 0;
  }
  ValidationReport report;
  report.accuracy = evaluate(prepared, catalog.calibration);
  report.skipped = conv.skipped;
  report.ranks = rank_correlations(prepared, report.accuracy);
  if (!memory.empty()) report.memory = evaluate_memory(memory, catalog.calibration);
  if (o.format == "json") std::cout << to_json(report).dump(2) << "\n";
  else std::cout << to_text(report);
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
  if (auto e = no_cases_error(o, conv); !e.empty()) return fail(e);
  auto all = prepare(conv.cases, catalog);
  if (!all) return fail(all.error());
  const auto prepared = time_cases(*all);
  CalibrationReport report;
  report.excluded_sources = o.exclude;
  report.fit = fit_calibration(prepared, catalog.calibration, catalog, o.exclude);
  const std::string written_text = calibration_json(report.fit, builtin_calibration_text());
  report.written = Json::parse(written_text, nullptr, false);
  if (report.written.is_discarded()) report.written = Json::object();
  if (!o.write.empty() && !write_file(o.write, written_text))
    return fail(fmt::format("cannot write {}", o.write));

  std::vector<PreparedCase> kept;
  for (const auto& c : prepared)
    if (std::find(o.exclude.begin(), o.exclude.end(), c.data.source) == o.exclude.end())
      kept.push_back(c);
  report.in_sample = evaluate(prepared, report.fit.calibration);
  report.loso = leave_one_source_out(kept, catalog.calibration, catalog);
  report.lofo = leave_one_model_family_out(kept, catalog.calibration, catalog);
  report.at_bounds = constants_at_bounds(report.fit);
  report.skipped = conv.skipped;
  report.ranks = rank_correlations(prepared, report.in_sample);

  if (o.format == "json") {
    std::cout << to_json(report).dump(2) << "\n";
    return 0;
  }
  std::cout << to_text(report);
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
