#include "stepcast/nccl_tests.h"

#include "stepcast/limits.h"
#include "stepcast/schema.h"

#include "json/plain_number.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <span>

namespace stepcast {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr size_t kMaxPoints = 100000;  // a sweep has ~30 sizes; anything near this is not one

// nccl-tests prints algbw = size / time and busbw = algbw x the test's factor (its
// doc/PERFORMANCE.md), in GB/s with two decimals and the time in microseconds with two. A row
// whose columns disagree by more than this was edited, shifted or converted (times off by 10^6,
// a busbw of 1e-308): the fit would be of numbers no link produced. Checked where the printed
// bandwidth is >= 1 GB/s, so the two decimals' rounding stays within 0.5 %.
constexpr double kColumnTolerance = 0.05;
constexpr double kCheckedFromGBps = 1.0;

// A row's numbers as printed, for the checks above.
struct PrintedRow {
  size_t line = 0;
  double algbw_GBps = 0;
};

Error bad(const std::string& message) { return Error{ErrorCode::parse_error, "", message}; }

std::vector<std::string_view> tokens_of(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool number(std::string_view s, double& v) { return detail::plain_number(s, v); }

bool integer(std::string_view s, long long& v) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size();
}

// mpirun --tag-output writes "[0] " or "[1,0]<stdout>:" before each line.
std::string_view strip_tag(std::string_view line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  if (line.empty() || line.front() != '[') return line;
  const size_t close = line.find(']');
  if (close == std::string_view::npos || close > 24) return line;
  const auto inside = line.substr(1, close - 1);
  if (inside.find_first_not_of("0123456789,") != std::string_view::npos) return line;
  line.remove_prefix(close + 1);
  if (line.substr(0, 9) == "<stdout>:") line.remove_prefix(9);
  return line;
}

struct NameHint {
  std::string_view text;
  CollectiveKind kind;
};
constexpr NameHint kNames[] = {{"all_reduce", CollectiveKind::all_reduce},
                               {"allreduce", CollectiveKind::all_reduce},
                               {"all_gather", CollectiveKind::all_gather},
                               {"allgather", CollectiveKind::all_gather},
                               {"reduce_scatter", CollectiveKind::reduce_scatter},
                               {"reducescatter", CollectiveKind::reduce_scatter},
                               {"alltoall", CollectiveKind::all_to_all},
                               {"all_to_all", CollectiveKind::all_to_all},
                               {"sendrecv", CollectiveKind::send_recv},
                               {"send_recv", CollectiveKind::send_recv}};

bool kind_from_name(std::string_view name, CollectiveKind& kind) {
  for (const auto& n : kNames)
    if (name.find(n.text) != std::string_view::npos) {
      kind = n.kind;
      return true;
    }
  return false;
}

// nccl-tests' busbw/algbw factor per test (doc/PERFORMANCE.md).
double busbw_factor(CollectiveKind kind, int n) {
  const double frac = n > 1 ? static_cast<double>(n - 1) / n : 0.0;
  switch (kind) {
    case CollectiveKind::all_reduce: return 2 * frac;
    case CollectiveKind::send_recv:
    case CollectiveKind::broadcast: return 1;
    default: return frac;
  }
}

// One half of a row (time, algbw, busbw, #wrong): a point, or nothing where it reads "N/A".
bool half_row(std::span<const std::string_view> t, double size, NcclTestPoint& p,
              double& algbw) {
  double time_us = 0, busbw = 0;
  if (!number(t[0], time_us) || !number(t[1], algbw) || !number(t[2], busbw)) return false;
  if (!(time_us > 0) || busbw < 0 || algbw < 0) return false;
  p = {size, time_us * 1e-6, busbw * 1e9};
  return true;
}

bool disagree(double printed, double expected) {
  return !(std::fabs(printed / expected - 1) <= kColumnTolerance);
}

// The columns of every half-row agree (kColumnTolerance): algbw is size / time, busbw is algbw
// times the test's factor. One line naming the row, the column, its value and the rule.
std::optional<Error> columns_error(const NcclTestRun& run, std::span<const PrintedRow> rows) {
  const double factor = busbw_factor(run.collective, run.ranks);
  for (size_t i = 0; i < rows.size(); ++i) {
    const NcclTestPoint& p = run.points[i];
    const double algbw = rows[i].algbw_GBps;
    if (algbw < kCheckedFromGBps) continue;
    const double from_time = p.size_bytes / p.time_s / 1e9;
    if (disagree(algbw, from_time))
      return bad(fmt::format("line {}: algbw={:g} GB/s must be size/time = {:.4g} GB/s "
                             "(nccl-tests prints the time in us): the time column was changed "
                             "or converted",
                             rows[i].line, algbw, from_time));
    if (disagree(p.busbw_Bps / 1e9, algbw * factor))
      return bad(fmt::format("line {}: busbw={:g} GB/s must be algbw x {:.4g} = {:.4g} GB/s "
                             "({} on {} ranks): the busbw column was changed",
                             rows[i].line, p.busbw_Bps / 1e9, factor, algbw * factor,
                             to_string(run.collective), run.ranks));
  }
  return std::nullopt;
}

}  // namespace

Result<NcclTestRun> parse_nccl_tests(std::string_view text, std::string_view name_hint) {
  NcclTestRun run;
  std::set<long long> ranks;
  std::set<std::string> hosts;
  bool header = false, named = kind_from_name(name_hint, run.collective), reduction = false;
  double ratio_sum = 0;
  int ratio_n = 0;
  std::vector<PrintedRow> printed;  // one per point
  size_t line_no = 0, start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = strip_tag(text.substr(start, end - start));
    start = end + 1;
    ++line_no;
    const auto t = tokens_of(line);
    if (t.empty()) continue;
    if (t[0] == "#" || t[0].front() == '#') {
      // "# nThread 1 nGpus 8 minBytes ..." and "#  Rank  3 Group  0 Pid 12 on host device  3 ..."
      const size_t at = t[0] == "#" ? 1 : 0;
      if (t.size() > at && (t[at] == "nThread" || t[at] == "#nThread")) header = true;
      if (t.size() > at + 1 && t[at] == "Rank") {
        long long r = 0;
        auto on = std::find(t.begin(), t.end(), std::string_view("on"));
        if (!integer(t[at + 1], r) || r < 0 || on == t.end() || on + 1 == t.end())
          return bad(fmt::format("line {}: a '# Rank' line needs 'Rank N ... on HOST'", line_no));
        ranks.insert(r);
        hosts.insert(std::string(on[1]));
        auto dev = std::find(on, t.end(), std::string_view("device"));
        if (run.gpu_name.empty() && dev != t.end() && t.end() - dev > 3) {
          for (auto it = dev + 3; it != t.end(); ++it) {
            if (!run.gpu_name.empty()) run.gpu_name += ' ';
            run.gpu_name += *it;
          }
        }
      }
      continue;
    }
    long long size = 0, count = 0;
    if (!integer(t[0], size)) continue;  // NCCL INFO and other interleaved lines
    // size count type redop [root] time algbw busbw #wrong time algbw busbw #wrong
    if ((t.size() != 12 && t.size() != 13) || !integer(t[1], count) || size < 0 || count < 0)
      return bad(fmt::format("line {}: a table row needs size, count, type, redop, root and "
                             "eight timings ({} columns found)", line_no, t.size()));
    const size_t first = t.size() == 13 ? 5 : 4;
    if (t[3] != "none") reduction = true;
    if (size == 0) continue;
    for (size_t half = 0; half < 2; ++half) {
      NcclTestPoint p;
      double algbw = 0;
      const auto cols = std::span<const std::string_view>(t).subspan(first + 4 * half, 4);
      if (!half_row(cols, static_cast<double>(size), p, algbw)) {
        if (cols[0] == "N/A") continue;  // in-place not run (alltoall)
        return bad(fmt::format("line {}: time, algbw and busbw must be numbers, time > 0",
                               line_no));
      }
      if (run.points.size() >= kMaxPoints) return bad("more table rows than any nccl-tests sweep");
      run.points.push_back(p);
      printed.push_back({line_no, algbw});
      if (algbw >= 0.1) {
        ratio_sum += p.busbw_Bps / (algbw * 1e9);
        ++ratio_n;
      }
    }
  }
  if (!header && ranks.empty())
    return bad("not nccl-tests output: no '# nThread ... nGpus ...' header and no '# Rank' lines");
  if (ranks.empty())
    return bad("no '#  Rank N ... on HOST device D' lines: ranks and hosts are unknown");
  if (run.points.empty()) return bad("no measurements: the table of sizes and times is missing");
  run.ranks = static_cast<int>(ranks.size());
  run.hosts = static_cast<int>(hosts.size());
  if (run.ranks < 2) return bad("one rank: a collective needs two or more");
  if (!named) {
    // Untold: the bus bandwidth factor tells all-reduce (2(n-1)/n) and send/recv (1) from the
    // rest ((n-1)/n); the reduction column tells reduce-scatter from all-gather and all-to-all.
    const int n = run.ranks;
    const double r = ratio_n ? ratio_sum / ratio_n : 0;
    auto near = [&](double f) { return std::fabs(r - f) < 0.02 * f; };
    if (n == 2 || !ratio_n)
      return bad("cannot tell which test this is: name the file after it (all_reduce_perf, ...)");
    if (near(busbw_factor(CollectiveKind::all_reduce, n))) run.collective = CollectiveKind::all_reduce;
    else if (near(1)) run.collective = CollectiveKind::send_recv;
    else if (near(busbw_factor(CollectiveKind::all_gather, n)) && reduction)
      run.collective = CollectiveKind::reduce_scatter;
    else
      return bad("cannot tell all_gather from alltoall: name the file after the test "
                 "(all_gather_perf, alltoall_perf)");
  }
  if (auto e = columns_error(run, printed)) return *e;
  return run;
}

namespace {

// The engine's time for one run's collective on a candidate link (collectives.h).
double model_time_s(const NcclTestRun& run, const LinkSpec& link, int nics, double bytes) {
  ClusterGroup g;
  g.gpus_per_node = run.ranks / run.hosts;
  g.nodes = run.hosts;
  g.nics_per_node = nics;
  if (run.hosts == 1) {
    g.intra_node_link = link;
  } else {
    g.intra_node_link.busbw_Bps = g.intra_node_link.allreduce_busbw_Bps = 1e18;  // never limits
    g.inter_node_link = link;
  }
  const GroupPlacement place{run.ranks, g.gpus_per_node};
  if (run.collective == CollectiveKind::all_to_all)
    return all_to_all_time_s(bytes, all_to_all_path(g, place), 1.0);
  return collective_time_s(run.collective, bytes, run.ranks, comm_path(g, place));
}

// The link field a run measures: all-reduce inside a node has its own bus bandwidth (NVLS).
bool measures_allreduce(const NcclTestRun& run) {
  return run.hosts == 1 && run.collective == CollectiveKind::all_reduce;
}

LinkSpec with_bandwidth(LinkSpec l, double bw) {
  l.busbw_Bps = l.allreduce_busbw_Bps = l.bandwidth_Bps_per_dir = bw;
  return l;
}

struct RunFit {
  double bandwidth_Bps = 0, latency_s = 0, half_peak_bytes = 0;
  double slope_s_per_byte = 0;      // the fitted a of t = a*S + c
  double latency_steps = 0;         // the engine's latency count for this collective
  double s_per_half_peak_byte = 0;  // what one byte of half-peak size adds to the time
  double hops_s = 0;  // the engine's latency of the ring's hops inside the nodes (not the link's)
};

Result<RunFit> fit_run(const NcclTestRun& run, int nics) {
  // Least squares on relative error of t = a*S + c over sizes >= 1 MiB: minimise
  // sum (a*S/t + c/t - 1)^2, a 2x2 linear system.
  double sxx = 0, sxy = 0, syy = 0, sx = 0, sy = 0, floor_s = INFINITY;
  int n = 0;
  for (const auto& p : run.points) {
    floor_s = std::min(floor_s, p.time_s);
    if (p.size_bytes < kMiB) continue;
    const double x = p.size_bytes / p.time_s, y = 1 / p.time_s;
    sxx += x * x, sxy += x * y, syy += y * y, sx += x, sy += y;
    ++n;
  }
  if (n < 2)
    return bad("fewer than two sizes of 1 MiB or more: run the test with -e 1G (or larger)");
  const double det = sxx * syy - sxy * sxy;
  double a = det > 0 ? (sx * syy - sy * sxy) / det : 0;
  double c = det > 0 ? (sxx * sy - sxy * sx) / det : 0;
  if (c < 0 || det <= 0) {  // a negative fixed cost is unphysical: slope only
    c = 0;
    a = sx / sxx;
  }
  if (!(a > 0) || !std::isfinite(a))
    return bad("the times do not grow with the size: not a bandwidth sweep");
  // The engine's slope at 1 GB/s, then the bandwidth giving the fitted slope.
  LinkSpec probe = with_bandwidth({}, 1e9);
  probe.scope = run.hosts == 1 ? LinkScope::intra_node : LinkScope::inter_node;
  const double big = 1 << 30;
  const double slope_1GBps = model_time_s(run, probe, nics, big) / big;
  RunFit f;
  f.bandwidth_Bps = 1e9 * slope_1GBps / a;
  probe = with_bandwidth(probe, f.bandwidth_Bps);
  const double base = model_time_s(run, probe, nics, 1);
  // What the engine charges whatever the link's latency and half-peak size (a ring's hops inside
  // the nodes, collective_latency_s): the link's figures fit what is left.
  const double hops = std::max(0.0, base - 1 / f.bandwidth_Bps);
  probe.latency_s = 1e-6;
  const double steps = (model_time_s(run, probe, nics, 1) - base) / 1e-6;
  probe.latency_s = 0;
  probe.half_peak_bytes = 1e6;
  const double per_half_peak_byte = (model_time_s(run, probe, nics, 1) - base) / 1e6;
  f.slope_s_per_byte = a;
  f.latency_steps = steps;
  f.s_per_half_peak_byte = per_half_peak_byte;
  f.hops_s = hops;
  c = std::max(0.0, c - hops);
  const double fixed = std::max(0.0, std::min(floor_s - hops, c));
  f.latency_s = steps > 0 ? fixed / steps : 0;
  f.half_peak_bytes = per_half_peak_byte > 0 ? (c - f.latency_s * steps) / per_half_peak_byte : 0;
  return f;
}

// A fit whose mean busbw error passes this is refused (fit_nccl_link): the fixtures of published
// sweeps fit within 5 % (tests/engine/nccl_tests_test.cpp, FixturesFitWithinFivePercent).
constexpr double kMaxMeanFitError = 0.5;

// The fitted figures within the ranges a scenario reads them in (the link keys of the input
// table): a fit the engine would refuse when it reads the link is refused when it is made,
// naming the figure, its value and the range.
std::optional<Error> fitted_range_error(const LinkSpec& l) {
  const std::pair<const char*, double> figures[] = {
      {"busbw_GBps", l.busbw_Bps},
      {"allreduce_busbw_GBps", l.allreduce_busbw_Bps},
      {"half_peak_bytes", l.half_peak_bytes},
      {"latency_us", l.latency_s}};
  for (const auto& [name, value] : figures) {
    const KeyInfo& k = *find_key("link", name);
    const double v = value / k.scale;
    if (!(v >= k.min && v <= k.max))
      return Error{ErrorCode::out_of_range, fmt::format("link.{}", name),
                   fmt::format("the fitted link.{}={:.4g} must be {} {:g} and <= {:g}: the "
                               "nccl-tests times are not of a link",
                               name, v, k.min_exclusive ? ">" : ">=", k.min, k.max)};
  }
  return std::nullopt;
}

std::string run_label(const NcclTestRun& r) {
  return fmt::format("{}, {} ranks on {} host{}", to_string(r.collective), r.ranks, r.hosts,
                     r.hosts == 1 ? "" : "s");
}

}  // namespace

Result<NcclLinkFit> fit_nccl_link(const std::vector<NcclTestRun>& runs, int nics_per_node) {
  if (runs.empty()) return bad("no nccl-tests runs to fit");
  NcclLinkFit out;
  out.hosts = runs.front().hosts;
  const bool intra = out.hosts == 1;
  for (const auto& r : runs) {
    if ((r.hosts == 1) != intra)
      return bad("runs inside one node and across nodes fit different links: give them "
                 "separately");
    if (r.ranks % r.hosts != 0)
      return bad(fmt::format("{}: ranks are not spread evenly over the hosts", run_label(r)));
    if (!intra && r.ranks / r.hosts != runs.front().ranks / runs.front().hosts)
      return bad("runs across nodes with different GPUs per node: give them separately");
  }
  out.ranks_per_host = runs.front().ranks / runs.front().hosts;
  out.nics_per_node = intra ? 0 : (nics_per_node > 0 ? nics_per_node : out.ranks_per_host);
  double ring = 0, allreduce = 0, latency = 0;
  int n_ring = 0, n_allreduce = 0;
  std::vector<RunFit> fits;
  for (const auto& r : runs) {
    auto f = fit_run(r, out.nics_per_node);
    if (!f) return Error{f.error().code, "", run_label(r) + ": " + f.error().message};
    if (measures_allreduce(r)) allreduce += f->bandwidth_Bps, ++n_allreduce;
    else ring += f->bandwidth_Bps, ++n_ring;
    latency += f->latency_s;
    fits.push_back(*f);
  }
  latency /= runs.size();
  // The link has one half-peak size for every collective: with each run's slope and the common
  // latency fixed, the size that fits all runs' times >= 1 MiB best (least squares on relative
  // error; for one run, the run's own).
  double num = 0, den = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunFit& f = fits[i];
    for (const auto& p : runs[i].points) {
      if (p.size_bytes < kMiB) continue;
      const double rest =
          p.time_s - f.slope_s_per_byte * p.size_bytes - f.latency_steps * latency - f.hops_s;
      const double k = f.s_per_half_peak_byte;
      num += rest * k / (p.time_s * p.time_s);
      den += k * k / (p.time_s * p.time_s);
    }
  }
  const double half_peak = den > 0 ? std::max(0.0, num / den) : 0;
  LinkSpec& l = out.link;
  l.scope = intra ? LinkScope::intra_node : LinkScope::inter_node;
  l.busbw_Bps = n_ring ? ring / n_ring : allreduce / n_allreduce;
  l.allreduce_busbw_Bps = n_allreduce ? allreduce / n_allreduce : l.busbw_Bps;
  // nccl-tests cannot see the line rate; the best bus bandwidth measured stands in for it.
  l.bandwidth_Bps_per_dir = std::max(l.busbw_Bps, l.allreduce_busbw_Bps);
  l.latency_s = latency;
  l.half_peak_bytes = half_peak;
  // The GPU's name comes from the output: any bytes. Echoed as valid UTF-8 (limits.h), so the
  // link's JSON can always be written.
  l.name = fmt::format("fitted from nccl-tests ({})", runs.front().gpu_name.empty()
                                                          ? std::string("unknown GPU")
                                                          : printable(runs.front().gpu_name, 80));
  for (const auto& r : runs) {
    NcclRunCheck check{run_label(r), 0, 0, 0};
    const double factor = busbw_factor(r.collective, r.ranks);
    for (const auto& p : r.points) {
      if (p.size_bytes < kMiB || !(p.busbw_Bps > 0)) continue;
      const double model = factor * p.size_bytes / model_time_s(r, l, out.nics_per_node, p.size_bytes);
      const double err = std::fabs(model / p.busbw_Bps - 1);
      check.max_busbw_error = std::max(check.max_busbw_error, err);
      check.mean_busbw_error += err;
      ++check.points;
    }
    if (check.points) check.mean_busbw_error /= check.points;
    // One link's line through every run: a run it misses by more than half on average was not
    // measured on the link the others were (or not at the sizes it says).
    if (check.mean_busbw_error > kMaxMeanFitError)
      return Error{ErrorCode::out_of_range, "",
                   fmt::format("{}: the fitted link misses the measured busbw by {:.0f} % on "
                               "average, more than the {:.0f} % one link can: fit each link's "
                               "runs on their own",
                               check.label, 100 * check.mean_busbw_error,
                               100 * kMaxMeanFitError)};
    out.checks.push_back(check);
  }
  if (auto e = fitted_range_error(l)) return *e;
  return out;
}

namespace {

// Words of a device name or a preset id, lower case: split at spaces, '-' and '_'.
std::vector<std::string> name_words(std::string_view s) {
  std::vector<std::string> words(1);
  for (const char c : s) {
    if (c == ' ' || c == '-' || c == '_') {
      if (!words.back().empty()) words.emplace_back();
    } else {
      words.back() += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

}  // namespace

std::optional<Error> nccl_gpu_error(const NcclTestRun& run, const GpuSpec& gpu) {
  std::string model;
  for (const auto& w : name_words(run.gpu_name))
    if (w.find_first_of("0123456789") != std::string::npos) {
      model = w;
      break;
    }
  if (model.empty()) return std::nullopt;
  for (const std::string_view own : {std::string_view(gpu.id), std::string_view(gpu.name)})
    for (const auto& w : name_words(own))
      if (w == model) return std::nullopt;
  return Error{ErrorCode::invalid_cluster, "",
               fmt::format("nccl-tests ran on {} ({}), and this cluster's GPU is {}: a link "
                           "measured on other GPUs does not calibrate these",
                           printable(run.gpu_name, kNameInMessageBytes), model,
                           printable(gpu.id.empty() ? gpu.name : gpu.id, kNameInMessageBytes))};
}

Json nccl_link_json(const NcclLinkFit& fit, const std::vector<std::string>& files) {
  const LinkSpec& l = fit.link;
  auto round3 = [](double v) { return std::round(v * 1000) / 1000; };
  std::string source = "stepcast calibrate --nccl-tests";
  for (const auto& f : files) {  // (appended in two steps: GCC 12's -Wrestrict misreads " " + s)
    source += ' ';
    source += printable(f, 200);  // file names: any bytes too
  }
  source += ": busbw(S) = peak*S/(S + half_peak) plus latency fitted to sizes >= 1 MiB (";
  for (size_t i = 0; i < fit.checks.size(); ++i)
    source += fmt::format("{}{}: max busbw error {:.1f} % over {} sizes", i ? "; " : "",
                          fit.checks[i].label, 100 * fit.checks[i].max_busbw_error,
                          fit.checks[i].points);
  source += ")";
  if (l.scope == LinkScope::inter_node)
    source += fmt::format(". Per port: the group's bandwidth divided by {} NICs per node",
                          fit.nics_per_node);
  return Json{{"name", l.name},
              {"scope", to_string(l.scope)},
              {"bandwidth_GBps_per_dir", round3(l.bandwidth_Bps_per_dir / 1e9)},
              {"busbw_GBps", round3(l.busbw_Bps / 1e9)},
              {"allreduce_busbw_GBps", round3(l.allreduce_busbw_Bps / 1e9)},
              {"half_peak_bytes", std::round(l.half_peak_bytes)},
              {"latency_us", round3(l.latency_s * 1e6)},
              {"source", source},
              {"confidence", "high"}};
}

}  // namespace stepcast
