#include "stepcast/gemm_fit.h"

#include "json/plain_number.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/compute.h"
#include "stepcast/json.h"
#include "stepcast/limits.h"
#include "stepcast/scenario.h"

namespace stepcast {

namespace {

// Bounds on a fit, past which the table was not a GEMM benchmark of this GPU (rows in the wrong
// unit, sizes off by 10^3, another GPU's numbers): refused when fitted, not written as a
// calibration that estimates nonsense. The published families fit efficiencies of 0.43 to 0.74
// and an overhead of 10 us (presets/calibration.json: Volta to Blackwell Ultra); the bounds are
// ten times below the lowest efficiency and a hundred times above the overhead, and a fit whose
// line misses its own rows by more than half on average.
constexpr double kMinFittedEfficiency = 0.04;
constexpr double kMaxFittedOverheadS = 1000e-6;
constexpr double kMaxMeanTimeError = 0.5;

std::optional<Error> fit_bounds_error(const GemmFit& f) {
  const std::pair<const char*, const std::optional<double>*> effs[] = {
      {"gemm_efficiency", &f.gemm_efficiency},
      {"fp8_gemm_efficiency", &f.fp8_gemm_efficiency},
      {"fp4_gemm_efficiency", &f.fp4_gemm_efficiency}};
  for (const auto& [name, eff] : effs)
    if (eff->has_value() && !(**eff >= kMinFittedEfficiency))
      return Error{ErrorCode::out_of_range, name,
                   fmt::format("the fitted {}={:.3g} must be >= {:g}: the table's TFLOP/s are "
                               "not this GPU's GEMMs (another unit or GPU?)",
                               name, **eff, kMinFittedEfficiency)};
  if (!(f.gemm_overhead_s <= kMaxFittedOverheadS))
    return Error{ErrorCode::out_of_range, "gemm_overhead_us",
                 fmt::format("the fitted gemm_overhead_us={:.4g} must be <= {:g}: a GEMM's fixed "
                             "cost is its launch, microseconds (sizes in the wrong unit?)",
                             f.gemm_overhead_s * 1e6, kMaxFittedOverheadS * 1e6)};
  if (!(f.mean_time_error <= kMaxMeanTimeError))
    return Error{ErrorCode::out_of_range, "",
                 fmt::format("the fit misses the table's times by {:.0f} % on average, more "
                             "than {:.0f} %: the rows are not of one GPU's GEMMs",
                             100 * f.mean_time_error, 100 * kMaxMeanTimeError)};
  return std::nullopt;
}

// A GPU's name as a message quotes it: a custom GPU's name is the user's text (limits.h).
std::string shown_name(const GpuSpec& gpu) { return printable(gpu.name, kNameInMessageBytes); }

Error bad(const std::string& message) { return Error{ErrorCode::parse_error, "", message}; }

std::vector<std::string_view> cells_of(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    std::string_view cell = line.substr(start, comma == std::string_view::npos ? line.npos : comma - start);
    while (!cell.empty() && (cell.front() == ' ' || cell.front() == '\t')) cell.remove_prefix(1);
    while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\t' || cell.back() == '\r'))
      cell.remove_suffix(1);
    out.push_back(cell);
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

bool number(std::string_view s, double& v) { return detail::plain_number(s, v); }

// The precision group of a dtype as people (and PyTorch) write it: 0 16-bit, 1 fp8, 2 fp4.
int group_of(std::string_view d, Precision& p) {
  if (d.substr(0, 6) == "torch.") d.remove_prefix(6);
  if (d == "bf16" || d == "bfloat16") return p = Precision::bf16, 0;
  if (d == "fp16" || d == "float16" || d == "half") return p = Precision::fp16, 0;
  if (d == "fp8" || d == "e4m3" || d == "float8_e4m3fn" || d == "e5m2" || d == "float8_e5m2")
    return p = Precision::fp8, 1;
  if (d == "mxfp8") return p = Precision::mxfp8, 1;
  if (d == "nvfp4" || d == "fp4") return p = Precision::nvfp4, 2;
  return -1;
}

struct Row {
  double flops, time_s, peak;
  int group;
  Precision precision;
  double m, n, k;
};

// Solves the small symmetric system a x = b (Gaussian elimination); false when singular.
template <size_t N>
bool solve(std::array<std::array<double, N>, N> a, std::array<double, N> b, size_t n,
           std::array<double, N>& x) {
  for (size_t c = 0; c < n; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    if (!(std::fabs(a[pivot][c]) > 1e-300)) return false;
    std::swap(a[c], a[pivot]);
    std::swap(b[c], b[pivot]);
    for (size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  for (size_t c = 0; c < n; ++c) x[c] = b[c] / a[c][c];
  return true;
}

}  // namespace

Result<GemmFit> fit_gemm_table(std::string_view csv, const GpuSpec& gpu, const ArchCalibration& base) {
  std::vector<Row> rows;
  int col_m = -1, col_n = -1, col_k = -1, col_dtype = -1, col_tflops = -1;
  size_t line_no = 0, start = 0;
  bool header = false;
  while (start < csv.size()) {
    size_t end = csv.find('\n', start);
    if (end == std::string_view::npos) end = csv.size();
    const std::string_view line = csv.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos || line.front() == '#') continue;
    const auto cells = cells_of(line);
    if (!header) {
      for (size_t i = 0; i < cells.size(); ++i) {
        const int at = static_cast<int>(i);
        if (cells[i] == "m") col_m = at;
        else if (cells[i] == "n") col_n = at;
        else if (cells[i] == "k") col_k = at;
        else if (cells[i] == "dtype") col_dtype = at;
        else if (cells[i] == "tflops") col_tflops = at;
      }
      if (col_m < 0 || col_n < 0 || col_k < 0 || col_dtype < 0 || col_tflops < 0)
        return bad("line " + std::to_string(line_no) +
                   ": the header must name the columns m, n, k, dtype and tflops");
      header = true;
      continue;
    }
    const int need = std::max({col_m, col_n, col_k, col_dtype, col_tflops});
    if (static_cast<int>(cells.size()) <= need)
      return bad(fmt::format("line {}: {} cells, the header has {} or more", line_no, cells.size(),
                             need + 1));
    Row r{};
    double tflops = 0;
    if (!number(cells[col_m], r.m) || !number(cells[col_n], r.n) || !number(cells[col_k], r.k) ||
        !number(cells[col_tflops], tflops) || !(r.m >= 1) || !(r.n >= 1) || !(r.k >= 1) ||
        !(tflops > 0) || r.m * r.n * r.k > 1e18)
      return bad(fmt::format("line {}: m, n, k must be sizes of 1 or more and tflops a positive "
                             "number", line_no));
    r.group = group_of(cells[col_dtype], r.precision);
    if (r.group < 0)
      return bad(fmt::format("line {}: dtype '{}' is not bf16, fp16, fp8, mxfp8 or nvfp4", line_no,
                             printable(cells[col_dtype], 40)));
    const auto peak = gpu.peak_flops(r.precision);
    if (!peak || !(*peak > 0))
      return bad(fmt::format("line {}: {} has no {} peak", line_no, shown_name(gpu),
                             to_string(r.precision)));
    if (tflops * 1e12 > *peak * 1.05)
      return bad(fmt::format("line {}: {} TFLOP/s is above {}'s {} peak of {:.0f}", line_no, tflops,
                             shown_name(gpu), to_string(r.precision), *peak / 1e12));
    r.flops = 2 * r.m * r.n * r.k;
    r.time_s = r.flops / (tflops * 1e12);
    r.peak = *peak;
    if (rows.size() >= 100000) return bad("more than 100,000 rows");
    rows.push_back(r);
  }
  if (!header) return bad("no header line (m,n,k,dtype,tflops)");
  if (rows.size() < 2) return bad("fewer than two GEMMs: nothing to fit");

  // Unknowns: 1/efficiency per group present, then the overhead; t = flops/peak * u_g + o.
  std::array<int, 3> index = {-1, -1, -1};
  size_t n = 0;
  for (const auto& r : rows)
    if (index[r.group] < 0) index[r.group] = static_cast<int>(n++);
  std::array<double, 4> x{};
  auto fit = [&](bool with_overhead) {
    const size_t dim = n + (with_overhead ? 1 : 0);
    std::array<std::array<double, 4>, 4> a{};
    std::array<double, 4> b{};
    for (const auto& r : rows) {
      std::array<double, 4> f{};
      f[index[r.group]] = r.flops / r.peak / r.time_s;  // relative error: divide by t
      if (with_overhead) f[n] = 1 / r.time_s;
      for (size_t i = 0; i < dim; ++i) {
        b[i] += f[i];
        for (size_t j = 0; j < dim; ++j) a[i][j] += f[i] * f[j];
      }
    }
    x = {};
    return solve<4>(a, b, dim, x);
  };
  bool ok = fit(true);
  if (!ok || x[n] < 0) ok = fit(false);  // a negative fixed cost is unphysical: none
  for (size_t g = 0; g < n; ++g) ok = ok && x[g] > 0 && std::isfinite(x[g]);
  if (!ok) return bad("the table does not pin the efficiencies (sizes all alike?)");

  GemmFit out;
  out.rows = static_cast<int>(rows.size());
  out.gemm_overhead_s = x[n] > 0 && rows.size() > n ? x[n] : 0;
  auto eff = [&](int g) -> std::optional<double> {
    if (index[g] < 0) return std::nullopt;
    return std::min(1.0, 1 / x[index[g]]);
  };
  out.gemm_efficiency = eff(0);
  out.fp8_gemm_efficiency = eff(1);
  out.fp4_gemm_efficiency = eff(2);
  // The check: each row through the engine's own GEMM time (memory side included).
  Calibration cal;
  cal.fallback = base;
  if (out.gemm_efficiency) cal.fallback.gemm_efficiency = *out.gemm_efficiency;
  if (out.fp8_gemm_efficiency) cal.fallback.fp8_gemm_efficiency = *out.fp8_gemm_efficiency;
  if (out.fp4_gemm_efficiency) cal.fallback.fp4_gemm_efficiency = *out.fp4_gemm_efficiency;
  cal.fallback.gemm_overhead_s = out.gemm_overhead_s;
  GpuSpec g = gpu;
  g.arch = "fitted";  // for_arch falls back to cal.fallback
  for (const auto& r : rows) {
    const Device d = make_device(g, r.precision, cal);
    const double model = gemm_time_s(r.m, r.n, r.k, gemm_element_bytes(r.precision), d);
    const double err = std::fabs(model / r.time_s - 1);
    out.max_time_error = std::max(out.max_time_error, err);
    out.mean_time_error += err / rows.size();
  }
  if (auto e = fit_bounds_error(out)) return *e;
  return out;
}

Json gemm_fit_json(const GemmFit& f) {
  auto round4 = [](double v) { return std::round(v * 1e4) / 1e4; };
  Json out = Json::object();
  if (f.gemm_efficiency) out["gemm_efficiency"] = round4(*f.gemm_efficiency);
  if (f.fp8_gemm_efficiency) out["fp8_gemm_efficiency"] = round4(*f.fp8_gemm_efficiency);
  if (f.fp4_gemm_efficiency) out["fp4_gemm_efficiency"] = round4(*f.fp4_gemm_efficiency);
  out["gemm_overhead_us"] = round4(f.gemm_overhead_s * 1e6);
  return out;
}

const ClusterGroup* other_gpu_type(const ClusterSpec& cluster) {
  for (const auto& g : cluster.groups)
    if (g.gpu.arch != cluster.groups.front().gpu.arch) return &g;
  return nullptr;
}

Result<Json> fit_gemm_table_on(std::string_view csv, const Scenario& scenario,
                               const Catalog& catalog) {
  const GpuSpec& gpu = scenario.cluster.groups.front().gpu;
  if (const ClusterGroup* other = other_gpu_type(scenario.cluster))
    return Error{ErrorCode::unsupported, "",
                 fmt::format("a GEMM table fits one GPU type, and this cluster mixes {} and {}",
                             shown_name(gpu), shown_name(other->gpu))};
  const ArchCalibration& preset = catalog.calibration.for_arch(gpu.arch);
  auto fit = fit_gemm_table(csv, gpu, preset);
  if (!fit) {
    Error e = fit.error();
    e.path = "text";
    return e;
  }
  Json out = Json::object();
  out["gemm"] = gemm_fit_json(*fit);
  out["gpu"] = gpu.name;
  out["rows"] = fit->rows;
  out["max_time_error"] = fit->max_time_error;
  out["mean_time_error"] = fit->mean_time_error;
  GemmFit was;
  was.gemm_efficiency = preset.gemm_efficiency;
  was.fp8_gemm_efficiency = preset.fp8_gemm_efficiency;
  was.fp4_gemm_efficiency = preset.fp4_gemm_efficiency;
  was.gemm_overhead_s = preset.gemm_overhead_s;
  out["preset"] = gemm_fit_json(was);
  return out;
}

}  // namespace stepcast
