// stepcast: the command-line front end. Thin: parse arguments, read files, call the engine,
// print. Exit status 0 on success, 2 on bad input (one line on stderr naming field, value, rule).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_io.h"
#include "stepcast/calibrate.h"
#include "stepcast/deadline.h"
#include "stepcast/estimate.h"
#include "stepcast/report.h"
#include "stepcast/limits.h"
#include "stepcast/resolve.h"
#include "stepcast/scaling.h"
#include "stepcast/schema.h"
#include "stepcast/search.h"
#include "stepcast/share_link.h"
#include "stepcast/stepcast.h"
#include "stepcast/traffic.h"

using namespace stepcast;
using stepcast::cli::dump;
using stepcast::cli::fail;
using stepcast::cli::kMaxBatchBytes;
using stepcast::cli::read_input;

namespace {

constexpr const char* kUsage = R"(usage:
  stepcast estimate SCENARIO.json [--format json|text] [--timeline] [--report full|summary]
                  [--calibration CAL.json]               estimate one scenario ('-' = stdin);
                                                         --timeline adds every schedule block;
                                                         --report summary leaves each stage's
                                                         census operations out of the JSON;
                                                         --calibration sets its `calibration`
                                                         (measured runs, fitted links, scales)
  stepcast estimate --batch FILE.jsonl [--timeline] [--report full|summary]
                                                         one scenario per line -> one report per line
  stepcast estimate --link 'URL' [--format json|text] [--report full|summary]
                                                         estimate the plan a Stepcast link holds
  stepcast search SCENARIO.json [--top N] [--format text|json] [--calibration CAL.json]
                                                         rank the plans the cluster admits for the
                                                         scenario's model and global batch
  stepcast scaling SCENARIO.json [--nodes N,N,...] [--tp N,N,...] [--format text|json]
                   [--calibration CAL.json]              the scenario at other node counts (DP
                                                         follows, the global batch stays) and
                                                         TP degrees (same nodes); default 1,
                                                         n/8 ... 8n nodes and TP 1-16
  stepcast deadline SCENARIO.json --days D [--tokens N] [--nodes N,N,...] [--format text|json]
                    [--calibration CAL.json]             the cheapest node count (GPU-hours) whose
                                                         fastest plan trains N tokens (15T, 2.5e12;
                                                         default: the scenario's page.tokens) in D
                                                         days; default: powers of two from the
                                                         fewest nodes the GPUs' peak allows
  stepcast link SCENARIO.json [--base URL] [--tokens N] [--price USD_PER_GPU_HOUR]
                [--calibration CAL.json]                 print the page's link for a scenario
                                                         (a calibration as its fitted scales)
  stepcast resolve SCENARIO.json [--format text|json]    the scenario with every default and derived
                                                         value filled in (JSON), or every problem
                                                         (one line each; --format json: as
                                                         {"errors": [...]}, exit status 2)
  stepcast schema [--format json|markdown] [--write-docs DOC.md]
                                                         every scenario key: type, range, default,
                                                         link name; --write-docs refreshes the
                                                         key tables of docs/scenario.md
  stepcast traffic SCENARIO.json [--level gpu|node] [--by kind|tier] [--format json|csv]
                                                         bytes each GPU (or node) sends each
                                                         other per iteration, by group kind or
                                                         link tier; group placement; effective
                                                         bandwidth of every census operation and
                                                         its path's curve; the MoE all-to-all's
                                                         range; link load over the iteration
  stepcast import hf-config CONFIG.json [--format model|scenario]
                                                         a Hugging Face config.json as the
                                                         scenario's custom model (or a scenario
                                                         around it: one DGX H100, data parallel)
  stepcast import megatron-args ARGS.sh [--format json|scenario] [--node NODE]
                                                         a Megatron-LM command line ('-' = stdin;
                                                         torchrun prefix, continuations, quotes)
                                                         as a scenario; flags not modelled are
                                                         listed under "ignored"; torchrun's
                                                         --nnodes/--nproc-per-node give the
                                                         cluster, of NODE (default dgx-h100)
  stepcast export megatron-args|bridge-recipe|torchrun SCENARIO.json
  stepcast export megatron-args|bridge-recipe|torchrun --link 'URL'
                                                         the plan as Megatron-LM arguments, a
                                                         Megatron-Bridge recipe override or a
                                                         torchrun line; what they cannot say is
                                                         a '#' comment
  stepcast presets [gpus|links|nodes|models] [--format text|json]
  stepcast version
  stepcast validate RUNS.csv|CASES.jsonl [--format text|json] [--write-cases OUT.jsonl]
                   [--anchored]                          predict published runs: error per row,
                                                         MAPE and worst error per source;
                                                         --anchored: calibrated on one or two
                                                         runs of each cluster, the rest predicted
  stepcast calibrate RUNS.csv|CASES.jsonl [--exclude-source S]... [--write CALIBRATION.json]
                                                         fit the per-family efficiency constants,
                                                         with a leave-one-source-out table
  stepcast calibrate --nccl-tests FILE... [--nics-per-node N] [--write LINK.json] [--format json|text]
                                                         fit a link (bus bandwidth, half-peak
                                                         size, latency) to nccl-tests output, for
                                                         cluster.intra_node_link / inter_node_link
  stepcast calibrate --gemm GEMMS.csv --gpu ID [--format json|text]
                                                         fit GEMM efficiencies and overhead to a
                                                         benchmark table (m,n,k,dtype,tflops), for
                                                         calibration.gemm
Scenario keys: docs/scenario.md. Exit status: 0 ok, 2 bad input.
)";

struct Args {
  std::vector<std::string> positional;
  std::string format;
  std::string batch;
  std::string link;
  std::string base = "http://localhost:8080/";
  std::string tokens, price;
  std::string top;
  std::string write_docs;
  std::string level, by;
  std::string report;
  std::string calibration;  // CAL.json: the scenario's `calibration` key
  std::string nodes, tp;    // scaling: comma-separated lists
  std::string days;         // deadline
  bool timeline = false;
  std::string error;
};

Args parse_args(int argc, char** argv, int first) {
  Args a;
  a.error = stepcast::cli::read_options(
      argc, argv, first,
      {{"--format", &a.format}, {"--batch", &a.batch}, {"--timeline", nullptr, &a.timeline},
       {"--report", &a.report}, {"--link", &a.link}, {"--base", &a.base},
       {"--tokens", &a.tokens}, {"--price", &a.price}, {"--top", &a.top},
       {"--write-docs", &a.write_docs}, {"--level", &a.level}, {"--by", &a.by},
       {"--calibration", &a.calibration}, {"--nodes", &a.nodes}, {"--tp", &a.tp},
       {"--days", &a.days}},
      a.positional);
  return a;
}

// --calibration CAL.json: its object (or its `calibration` key) becomes the scenario's
// `calibration`, replacing one the file has. Empty on success, else the error.
std::string with_calibration(std::string& text, const std::string& path) {
  if (path.empty()) return "";
  std::string cal_text;
  if (auto e = read_input(path, cal_text); !e.empty()) return e;
  auto cal = parse_json(cal_text, path);
  if (!cal) return fmt::format("{}: {}", path, cal.error().message);
  auto parsed = parse_json(text);
  if (!parsed) return parsed.error().message;
  Json doc = *parsed;
  if (!doc.is_object()) return "the scenario must be a JSON object";
  const Json& c = *cal;
  const bool wrapped = c.is_object() && c.size() == 1 && c.contains("calibration");
  doc["calibration"] = wrapped ? c["calibration"] : c;
  text = dump(doc);
  return "";
}

// One report or error per line, whatever the line holds (each is bounded: limits.h).
int run_batch(const std::string& path, const Catalog& catalog, const EstimateOptions& options,
              ReportKind kind) {
  std::string text;
  if (auto e = read_input(path, text, kMaxBatchBytes); !e.empty()) return fail(e);
  std::istringstream lines(text);
  std::string line;
  bool any_error = false;
  // Reports leave in 64 KB writes, not one system call per line (a summary line is ~3.5 KB;
  // stdout's own buffer is 4 KB).
  constexpr size_t kChunk = 64 * 1024;
  std::string out;
  out.reserve(2 * kChunk);
  while (std::getline(lines, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto scenario = parse_scenario(line, catalog);
    Result<std::string> report = scenario ? report_text(estimate(*scenario, options), -1, kind)
                                          : Result<std::string>(scenario.error());
    if (report) {
      out += *report;  // (not through `?:`, whose one type would copy the report first)
    } else {
      any_error = true;
      out += dump(to_json(report.error()));
    }
    out += '\n';
    if (out.size() >= kChunk) {
      std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
      out.clear();
    }
  }
  std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
  return any_error ? 2 : 0;
}

int run_estimate(const Args& args, const Catalog& catalog) {
  EstimateOptions options;
  options.timeline = args.timeline;
  const auto kind = enum_from<ReportKind>(args.report.empty() ? "full" : args.report);
  if (!kind) return fail(fmt::format("--report={} must be full or summary", args.report));
  if (!args.batch.empty()) return run_batch(args.batch, catalog, options, *kind);
  options.fit_fixes = &fit_fixes_of;  // one plan: out of memory, say what makes it fit
  if (args.positional.size() != (args.link.empty() ? 1u : 0u))
    return fail("estimate takes one scenario file (or '-'), or --link URL");
  const std::string format = args.format.empty() ? "json" : args.format;
  if (format != "json" && format != "text")
    return fail(fmt::format("--format={} must be json or text", format));
  std::string text;
  if (!args.link.empty()) {  // a link and a JSON file are interchangeable
    auto doc = scenario_from_link(args.link);
    if (!doc) return fail(doc.error());
    text = dump(doc->scenario);
  } else if (auto e = read_input(args.positional[0], text); !e.empty()) {
    return fail(e);
  }
  if (auto e = with_calibration(text, args.calibration); !e.empty()) return fail(e);
  auto scenario = parse_scenario(text, catalog);
  if (!scenario) return fail(scenario.error());
  const Report report = estimate(*scenario, options);
  auto json = report_text(report, 2, *kind);  // checked: every number finite
  if (!json) return fail(json.error());
  if (format == "text") {
    std::cout << to_text(report, *scenario);
    if (!report.fits && report.fit_fixes.empty())
      std::cout << "no single change makes it fit (recompute, activation offloading, bf16 "
                   "moments, the distributed optimizer, TP, PP or CP up)\n";
  } else {
    std::cout << *json << "\n";
  }
  return 0;
}

// Optional positive number flags of `link` (the page's own settings).
bool number_flag(const std::string& text, const char* name, Json& into, const char* key) {
  if (text.empty()) return true;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !(v > 0) || !std::isfinite(v)) {
    fail(fmt::format("{}={} must be a positive number", name, text));
    return false;
  }
  into[key] = v;
  return true;
}

int run_link(const Args& args, const Catalog& catalog) {
  if (args.positional.size() != 1) return fail("link takes one scenario file (or '-')");
  std::string text;
  if (auto e = read_input(args.positional[0], text); !e.empty()) return fail(e);
  if (auto e = with_calibration(text, args.calibration); !e.empty()) return fail(e);
  // Only a valid scenario gets a link: the page would refuse anything else anyway.
  auto scenario = parse_scenario(text, catalog);
  if (!scenario) return fail(scenario.error());
  LinkDocument doc{*parse_json(text), Json::object()};  // parsed above
  // A link carries what was fitted, never the runs behind it (calibrate.h).
  if (scenario->fit)
    doc.scenario["calibration"] = compact_calibration(doc.scenario["calibration"], *scenario->fit);
  if (!number_flag(args.tokens, "--tokens", doc.page, "tokens") ||
      !number_flag(args.price, "--price", doc.page, "price_per_gpu_hour"))
    return 2;
  auto link = scenario_to_link(doc, args.base);
  if (!link) return fail(link.error());
  // What the link leaves out, said beside it (stderr: stdout stays the link alone).
  if (const auto out = link_leaves_out(doc.scenario); !out.empty()) {
    std::string paths;
    for (const auto& p : out) paths += (paths.empty() ? "" : ", ") + p;
    std::cerr << fmt::format("note: the link leaves out {} (text for people; no estimate reads "
                             "it)\n",
                             paths);
  }
  std::cout << *link << "\n";
  return 0;
}

// What search and scaling read: one scenario file (or '-') with --calibration set in it, and
// --format text (the default) or json. False after saying what is wrong.
bool scenario_and_format(const Args& args, const char* command, std::string& text,
                         std::string& format) {
  format = args.format.empty() ? "text" : args.format;
  if (args.positional.size() != 1)
    fail(fmt::format("{} takes one scenario file (or '-')", command));
  else if (format != "json" && format != "text")
    fail(fmt::format("--format={} must be json or text", format));
  else if (auto e = read_input(args.positional[0], text); !e.empty())
    fail(e);
  else if (auto e = with_calibration(text, args.calibration); !e.empty())
    fail(e);
  else
    return true;
  return false;
}

int run_search(const Args& args, const Catalog& catalog) {
  std::string text, format;
  SearchOptions options;
  if (!args.top.empty()) {
    char* end = nullptr;
    const long top = std::strtol(args.top.c_str(), &end, 10);
    if (*end != '\0' || top < 1 || top > 10000)
      return fail(fmt::format("--top={} must be a whole number from 1 to 10000", args.top));
    options.top = static_cast<size_t>(top);
  }
  if (!scenario_and_format(args, "search", text, format)) return 2;
  // The plan itself may break a rule the search varies: read its keys, let the search judge.
  const auto doc = parse_json(text);
  if (!doc) return fail(doc.error());
  auto scenario = read_scenario(*doc, catalog);
  if (!scenario) return fail(scenario.error());
  auto searched = search_plans(*scenario, options);
  if (!searched) return fail(searched.error());
  const SearchResult& r = *searched;
  if (format == "json") {
    std::cout << dump(to_json(r), 2) << "\n";
    return 0;
  }
  // Every plan the rules admit is memory-checked; only those that fit are timed.
  fmt::print("{} plans checked: {} fit and were timed ({} of them with fixes), {} out of memory, "
             "{} refused by the rules; ",
             r.evaluated, r.evaluated - r.out_of_memory, r.fixed, r.out_of_memory, r.rejected);
  if (r.baseline_error)
    fmt::print("your plan is not one: {}\n\n", r.baseline_error->message);
  else
    fmt::print("your plan: {:.3f} s\n\n", r.baseline_s);
  // MoE models: the expert layout and dispatcher too. `overlap`: the communication the plan
  // overlaps with compute (TP collectives, EP exchanges, the gradient reduce with DP > 1).
  const bool moe = scenario->model.moe.enabled();
  fmt::print("{:>4} {:>3} {:>3} {:>4} {:>3} {:>4} {:>11} {:>3} {:>10} {:>8}", "rank", "tp", "pp",
             "dp", "cp", "vpp", "schedule", "mb", "recompute", "overlap");
  if (moe) fmt::print(" {:>4} {:>4} {:>9}", "ep", "etp", "dispatch");
  fmt::print(" {:>10} {:>7} {:>9}  {}\n", "time s", "MFU %", "mem GiB", "layers/stage");
  int rank = 0;
  for (const auto& c : r.best) {
    const Plan& p = c.plan;
    std::vector<std::string> overlaps;
    if (p.tp_comm_overlap && p.tp > 1) overlaps.push_back("tp");
    if (p.moe_overlap && moe) overlaps.push_back("ep");
    if (p.overlap_grad_reduce && p.dp > 1) overlaps.push_back("dp");
    fmt::print("{:>4} {:>3} {:>3} {:>4} {:>3} {:>4} {:>11} {:>3} {:>10} {:>8}", ++rank, p.tp, p.pp,
               p.dp, p.cp, p.vpp, name_of(p.effective_schedule()), p.micro_batch,
               to_string(p.recompute),
               overlaps.empty() ? std::string("none") : fmt::format("{}", fmt::join(overlaps, "+")));
    if (moe) fmt::print(" {:>4} {:>4} {:>9}", p.ep, p.etp, to_string(p.moe_dispatcher));
    // The split: "16" on every stage, else first/between/last ("15/16/15"; "30/31" for pp 2).
    const auto [first, between, last] = c.stage_layers;
    const std::string layers =
        first == between && between == last ? fmt::format("{}", first)
        : p.pp == 2                          ? fmt::format("{}/{}", first, last)
                                             : fmt::format("{}/{}/{}", first, between, last);
    fmt::print(" {:>10.3f} {:>7.1f} {:>9.1f}  {}{}\n", c.iteration_time_s, 100 * c.mfu,
               c.peak_memory_bytes / (1024.0 * 1024 * 1024), layers,
               c.needs.empty() ? std::string() : "  fits with " + c.needs);
  }
  return 0;
}

// "1,2,4" -> {1, 2, 4}: a whole number from 1 to 2^22 each (scaling.h checks the count).
bool int_list(const std::string& text, const char* name, std::vector<int>& out) {
  std::istringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > kMaxGpus) {
      fail(fmt::format("{}={} must be whole numbers from 1 to {}, comma-separated", name, text,
                       kMaxGpus));
      return false;
    }
    out.push_back(static_cast<int>(v));
  }
  return true;
}

// The scaling sweep (scaling.h): JSON, or a table per axis.
int run_scaling(const Args& args, const Catalog& catalog) {
  std::string text, format;
  ScalingOptions options;
  if (!int_list(args.nodes, "--nodes", options.nodes) || !int_list(args.tp, "--tp", options.tp) ||
      !scenario_and_format(args, "scaling", text, format))
    return 2;
  const auto doc = parse_json(text);
  if (!doc) return fail(doc.error());
  auto swept = scaling_sweep(*doc, catalog, options);
  if (!swept) return fail(swept.error());
  const ScalingResult& r = *swept;
  if (format == "json") {
    const Json j = to_json(r);
    if (auto bad = non_finite_path(j)) return fail(fmt::format("scaling: {} is not finite", *bad));
    std::cout << dump(j, 2) << "\n";
    return 0;
  }
  fmt::print("The plan at other sizes ({} node(s), TP {} on show, marked *): DP follows the "
             "GPUs, the global batch stays.\n\n",
             r.base_nodes, r.base_tp);
  auto row = [](std::string label, const ScalingPoint& p, std::string last) {
    if (p.error)
      fmt::print("{:>8} {:>7}  refused: {}\n", label, "", p.error->message);
    else  // (the TP table has no last column)
      fmt::print("{:>8} {:>7} {:>10.3f} {:>12.0f} {:>6.1f} {:>5}{}\n", label, p.gpus,
                 p.iteration_time_s, p.tokens_per_s, 100 * p.mfu, p.fits ? "yes" : "no",
                 last.empty() ? "" : fmt::format(" {:>10}", last));
  };
  fmt::print("{:>8} {:>7} {:>10} {:>12} {:>6} {:>5} {:>10}\n", "nodes", "GPUs", "time s",
             "tokens/s", "MFU %", "fits", "scaling %");
  for (const auto& p : r.nodes)
    row(fmt::format("{}{}", p.nodes, p.nodes == r.base_nodes ? "*" : ""), p,
        p.scaling_efficiency ? fmt::format("{:.0f}", 100 * *p.scaling_efficiency) : "-");
  fmt::print("\n{:>8} {:>7} {:>10} {:>12} {:>6} {:>5}\n", "tp", "GPUs", "time s", "tokens/s",
             "MFU %", "fits");
  for (const auto& p : r.tp) row(fmt::format("{}{}", p.tp, p.tp == r.base_tp ? "*" : ""), p, "");
  return 0;
}

// A count as people write it: "15T", "2.5e12", "400B", "7k" (a suffix K, M, B or T, either
// case, multiplies by 1e3 ... 1e12). Empty on success, else the error.
std::string count_with_suffix(const std::string& text, const char* name, double& out) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  const std::string rest(end);
  static constexpr std::pair<char, double> kSuffixes[] = {{'k', 1e3}, {'m', 1e6}, {'b', 1e9},
                                                          {'t', 1e12}};
  bool suffix = rest.empty();
  for (const auto& [c, scale] : kSuffixes)
    if (rest.size() == 1 && std::tolower(static_cast<unsigned char>(rest[0])) == c) {
      v *= scale;
      suffix = true;
    }
  if (text.empty() || end == text.c_str() || !suffix || !(v > 0) || !std::isfinite(v))
    return fmt::format("{}={} must be a number above 0 (15T, 2.5e12 and 400B read as numbers)",
                       name, printable(text, 40));
  out = v;
  return "";
}

// How many GPUs for a deadline (deadline.h): JSON, or a table of node counts.
int run_deadline(const Args& args, const Catalog& catalog) {
  std::string text, format;
  DeadlineOptions options;
  if (args.days.empty()) return fail("deadline needs --days D (the deadline in days)");
  if (auto e = count_with_suffix(args.days, "--days", options.days); !e.empty()) return fail(e);
  if (!int_list(args.nodes, "--nodes", options.nodes) ||
      !scenario_and_format(args, "deadline", text, format))
    return 2;
  const auto doc = parse_json(text);
  if (!doc) return fail(doc.error());
  if (!args.tokens.empty()) {
    if (auto e = count_with_suffix(args.tokens, "--tokens", options.tokens); !e.empty())
      return fail(e);
  } else if (const Json* t = doc->is_object() && doc->contains("page") ? &(*doc)["page"] : nullptr;
             t && t->is_object() && t->contains("tokens") && (*t)["tokens"].is_number()) {
    options.tokens = (*t)["tokens"].get<double>();
  } else {
    return fail("deadline needs --tokens N (or the scenario's page.tokens): the tokens to train");
  }
  auto planned = deadline_plan(*doc, catalog, options);
  if (!planned) return fail(planned.error());
  const DeadlineResult& r = *planned;
  if (format == "json") {
    const Json j = to_json(r);
    if (auto bad = non_finite_path(j)) return fail(fmt::format("deadline: {} is not finite", *bad));
    std::cout << dump(j, 2) << "\n";
    return 0;
  }
  // 1.5e13 -> "15 T": as the count was typed.
  const auto [scale, unit] = r.tokens >= 1e12  ? std::pair{1e12, " T"}
                             : r.tokens >= 1e9 ? std::pair{1e9, " B"}
                             : r.tokens >= 1e6 ? std::pair{1e6, " M"}
                                               : std::pair{1.0, ""};
  fmt::print("{:.4g}{} tokens within {:.4g} days: the fastest plan the search finds on each node "
             "count (fewer than {} node{} cannot, even at the GPUs' peak).\n\n",
             r.tokens / scale, unit, r.days, r.fewest_nodes_at_peak,
             r.fewest_nodes_at_peak == 1 ? "" : "s");
  fmt::print("{:>7} {:>7} {:>10} {:>6} {:>9} {:>12}  {}\n", "nodes", "GPUs", "time s", "MFU %",
             "days", "GPU-hours", "plan");
  for (size_t i = 0; i < r.points.size(); ++i) {
    const DeadlinePoint& p = r.points[i];
    const std::string nodes = fmt::format("{}{}", p.nodes, r.cheapest == i ? "*" : "");
    if (p.error) {
      fmt::print("{:>7} {:>7}  no plan: {}\n", nodes, p.gpus, p.error->message);
    } else if (!p.best) {
      fmt::print("{:>7} {:>7}  no plan fits in memory\n", nodes, p.gpus);
    } else {
      const Plan& q = p.best->plan;
      fmt::print("{:>7} {:>7} {:>10.3f} {:>6.1f} {:>9.1f} {:>12.0f}  TP {} PP {} DP {}{}{}\n",
                 nodes, p.gpus, p.best->iteration_time_s, 100 * p.best->mfu, p.train_days,
                 p.gpu_hours, q.tp, q.pp, q.dp, q.vpp > 1 ? fmt::format(" VPP {}", q.vpp) : "",
                 q.ep > 1 ? fmt::format(" EP {}", q.ep) : "");
    }
  }
  if (r.cheapest)
    fmt::print("\nCheapest that meets it (*): {} nodes, {:.1f} days, {:.0f} GPU-hours.\n",
               r.points[*r.cheapest].nodes, r.points[*r.cheapest].train_days,
               r.points[*r.cheapest].gpu_hours);
  else
    fmt::print("\nNo node count tried meets the deadline.\n");
  return 0;
}

// The traffic matrix (traffic.h): JSON with placement and effective bandwidth, or the nonzero
// cells as CSV.
int run_traffic(const Args& args, const Catalog& catalog) {
  if (args.positional.size() != 1) return fail("traffic takes one scenario file (or '-')");
  const std::string format = args.format.empty() ? "json" : args.format;
  if (format != "json" && format != "csv")
    return fail(fmt::format("--format={} must be json or csv", format));
  TrafficOptions options;
  if (args.level == "gpu") options.level = TrafficLevel::gpu;
  else if (args.level == "node") options.level = TrafficLevel::node;
  else if (!args.level.empty())
    return fail(fmt::format("--level={} must be gpu or node", args.level));
  if (!args.by.empty() && args.by != "kind" && args.by != "tier")
    return fail(fmt::format("--by={} must be kind or tier", args.by));
  const bool by_kind = args.by != "tier";
  std::string text;
  if (auto e = read_input(args.positional[0], text); !e.empty()) return fail(e);
  auto scenario = parse_scenario(text, catalog);
  if (!scenario) return fail(scenario.error());
  auto t = traffic(*scenario, options);
  if (!t) return fail(t.error());
  if (format == "csv") {
    std::cout << to_csv(*t, by_kind);
    return 0;
  }
  auto json = traffic_json(*t);
  if (!json) return fail("traffic: a number is not finite");
  Json j = std::move(json).value();
  if (!by_kind)  // cells by tier: each cell lies on one tier, so its total is that tier's
    for (auto& cell : j["cells"]) {
      double total = 0;
      for (const auto& b : cell["bytes"]) total += b.get<double>();
      cell["bytes"] = {{cell["tier"].get<std::string>(), total}};
    }
  std::cout << dump(j, 2) << "\n";
  return 0;
}

// Every problem of a scenario (exit 2, one line each, the first the usual one; with --format
// json, {"errors": [...]} on standard output, each as to_json(Error) writes it, its rule and
// values included) or its resolved form.
int run_resolve(const Args& args, const Catalog& catalog) {
  if (args.positional.size() != 1) return fail("resolve takes one scenario file (or '-')");
  if (!args.format.empty() && args.format != "json" && args.format != "text")
    return fail(fmt::format("--format={} must be text or json", args.format));
  std::string text;
  if (auto e = read_input(args.positional[0], text); !e.empty()) return fail(e);
  const auto doc = parse_json(text);
  if (!doc) return fail(doc.error());
  const Json resolved = resolve_json(*doc, catalog);
  if (resolved.contains("errors")) {
    if (args.format == "json") {
      std::cout << dump(resolved, 2) << "\n";
      return 2;
    }
    for (const auto& e : resolved["errors"])
      fail(e["message"].get<std::string>(), e.value("hint", std::string()));
    return 2;
  }
  std::cout << dump(resolved, 2) << "\n";
  return 0;
}

int run_schema(const Args& args) {
  if (!args.write_docs.empty()) {
    std::string doc;
    if (auto e = read_input(args.write_docs, doc, kMaxBatchBytes); !e.empty()) return fail(e);
    std::ofstream out(args.write_docs, std::ios::binary);
    out << fill_report_tables(fill_report_tables(fill_schema_tables(doc)), traffic_schema());
    return out ? 0 : fail(fmt::format("cannot write {}", args.write_docs));
  }
  const std::string format = args.format.empty() ? "json" : args.format;
  if (format == "json") {
    std::cout << schema_document().dump(2) << "\n";
  } else if (format == "markdown") {
    for (auto object : schema_objects())
      std::cout << "## `" << object << "`\n\n" << schema_markdown(object) << "\n";
  } else {
    return fail(fmt::format("--format={} must be json or markdown", format));
  }
  return 0;
}

std::string peak_text(const std::optional<double>& v) {
  return v ? fmt::format("{:.0f}", *v / 1e12) : "-";
}

int run_presets(const Args& args, const Catalog& catalog) {
  const std::string kind = args.positional.empty() ? "" : args.positional[0];
  if (!kind.empty() && kind != "gpus" && kind != "links" && kind != "nodes" && kind != "models")
    return fail(fmt::format("presets {}: the kinds are gpus, links, nodes, models", kind));
  if (args.format == "json") {
    std::cout << (kind.empty() ? catalog.documents : catalog.documents[kind]).dump(2) << "\n";
    return 0;
  }
  if (!args.format.empty() && args.format != "text")
    return fail(fmt::format("--format={} must be json or text", args.format));
  auto want = [&](const char* k) { return kind.empty() || kind == k; };
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  if (want("gpus")) {
    fmt::print("{:<16} {:<34} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "gpu", "name", "GiB",
               "HBM GB/s", "bf16 TF", "fp8 TF", "mxfp8 TF", "nvfp4 TF");
    for (const auto& g : catalog.gpus)
      fmt::print("{:<16} {:<34} {:>7.0f} {:>9.0f} {:>9} {:>9} {:>9} {:>9}\n", g.id, g.name,
                 g.memory_bytes / GiB, g.memory_bandwidth_Bps / 1e9,
                 peak_text(g.peak_flops(Precision::bf16)), peak_text(g.peak_flops(Precision::fp8)),
                 peak_text(g.peak_flops(Precision::mxfp8)),
                 peak_text(g.peak_flops(Precision::nvfp4)));
    std::cout << "\n";
  }
  if (want("links")) {
    fmt::print("{:<15} {:<11} {:>12} {:>10} {:>12} {:>11} {:>8}\n", "link", "scope", "GB/s/dir",
               "busbw", "AR busbw", "half MiB", "lat us");
    for (const auto& l : catalog.links)
      fmt::print("{:<15} {:<11} {:>12.1f} {:>10.1f} {:>12.1f} {:>11.2f} {:>8.1f}\n", l.id,
                 l.scope == LinkScope::intra_node ? "intra_node" : "inter_node",
                 l.bandwidth_Bps_per_dir / 1e9, l.busbw_Bps / 1e9, l.allreduce_busbw_Bps / 1e9,
                 l.half_peak_bytes / 1048576.0, l.latency_s * 1e6);
    std::cout << "\n";
  }
  if (want("nodes")) {
    fmt::print("{:<16} {:<16} {:>5} {:<15} {:<15} {:>5}\n", "node", "gpu", "gpus", "intra",
               "inter", "nics");
    for (const auto& n : catalog.nodes)
      fmt::print("{:<16} {:<16} {:>5} {:<15} {:<15} {:>5}\n", n.id, n.gpu, n.gpus_per_node,
                 n.intra_node_link, n.inter_node_link, n.nics_per_node);
    std::cout << "\n";
  }
  if (want("models")) {
    fmt::print("{:<15} {:>9} {:>6} {:>6} {:>8} {:>7} {:>7} {:>6} {:<12}\n", "model", "params B",
               "layers", "hidden", "heads/kv", "ffn", "vocab", "seq", "ffn type");
    for (const auto& m : catalog.models)
      fmt::print("{:<15} {:>9.2f} {:>6} {:>6} {:>8} {:>7} {:>7} {:>6} {:<12}\n", m.id,
                 count_parameters(m, m.vocab, m.seq_len).total / 1e9, m.layers, m.hidden,
                 fmt::format("{}/{}", m.heads, m.kv_heads), m.ffn_hidden, m.vocab, m.seq_len,
                 to_string(m.ffn_type));
  }
  return 0;
}

}  // namespace

// validate / calibrate (engine/cli/validate_cli.cpp): accuracy against published runs.
int run_validation_command(const std::string& command, int argc, char** argv);
// import / export (engine/cli/io_cli.cpp): other tools' model and plan descriptions.
int run_io_command(const std::string& command, int argc, char** argv);
// calibrate --nccl-tests (engine/cli/nccl_cli.cpp): a link fitted to nccl-tests output.
int run_nccl_calibration(int argc, char** argv);
// calibrate --gemm (engine/cli/gemm_cli.cpp): GEMM efficiencies fitted to a benchmark table.
int run_gemm_calibration(int argc, char** argv);

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "version" || command == "--version") {
    std::cout << "stepcast " << STEPCAST_VERSION << "\n";
    return 0;
  }
  if (command == "calibrate")
    for (int i = 2; i < argc; ++i) {
      if (std::string(argv[i]) == "--nccl-tests") return run_nccl_calibration(argc, argv);
      if (std::string(argv[i]) == "--gemm") return run_gemm_calibration(argc, argv);
    }
  if (command == "validate" || command == "calibrate")  // own options: engine/cli/validate_cli.cpp
    return run_validation_command(command, argc, argv);
  if (command == "import" || command == "export") return run_io_command(command, argc, argv);
  const Args args = parse_args(argc, argv, 2);
  if (!args.error.empty()) return fail(args.error);
  auto loaded = load_catalog(builtin_preset_files());
  if (!loaded) return fail("built-in presets: " + loaded.error().message);
  const Catalog& catalog = *loaded;
  if (command == "estimate") return run_estimate(args, catalog);
  if (command == "presets") return run_presets(args, catalog);
  if (command == "link") return run_link(args, catalog);
  if (command == "search") return run_search(args, catalog);
  if (command == "scaling") return run_scaling(args, catalog);
  if (command == "deadline") return run_deadline(args, catalog);
  if (command == "resolve") return run_resolve(args, catalog);
  if (command == "traffic") return run_traffic(args, catalog);
  if (command == "schema") return run_schema(args);
  std::cerr << "error: unknown command " << printable(command) << "\n" << kUsage;
  return 2;
}
