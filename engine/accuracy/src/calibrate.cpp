#include "stepcast/accuracy/calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <thread>
#include <atomic>

#include "stepcast/accuracy/model_family.h"
#include "stepcast/arch_calibration_keys.h"
#include "stepcast/estimate.h"

namespace stepcast::accuracy {

namespace {

const std::string& arch_of(const PreparedCase& c) { return c.scenario.cluster.groups.front().gpu.arch; }

// The member a fitted key fills (arch_calibration_keys.h), or null.
double* slot(ArchCalibration& a, const std::string& key) {
  const ArchCalibrationKey* k = find_arch_calibration_key(key);
  return k ? &(a.*k->member) : nullptr;
}

// The member's value per unit of the key's (µs keys are held in seconds).
double scale(const std::string& key) { return find_arch_calibration_key(key)->scale; }

// measured / peak for the family's GPUs that publish a measurement (the smallest ratio: the
// bound must hold for every GPU of the family).
std::optional<double> measured_ratio(const Catalog& catalog, const std::string& arch,
                                     const char* precision, std::string* where) {
  std::optional<double> best;
  const Json& gpus = catalog.documents.contains("gpus") ? catalog.documents["gpus"] : Json();
  if (!gpus.is_array()) return best;
  for (const auto& g : gpus) {
    if (!g.is_object() || !g.contains("arch") || g["arch"] != arch) continue;
    if (!g.contains("measured") || !g["measured"].is_object()) continue;
    const Json& m = g["measured"];
    const Json& peaks = g.contains("peak_tflops") ? g["peak_tflops"] : Json();
    double ratio = 0;
    if (std::string(precision) == "memory") {
      if (!m.contains("memory_bandwidth_GBps") || !m["memory_bandwidth_GBps"].is_number() ||
          !g.contains("memory_bandwidth_GBps") || !g["memory_bandwidth_GBps"].is_number())
        continue;
      ratio = m["memory_bandwidth_GBps"].get<double>() / g["memory_bandwidth_GBps"].get<double>();
    } else {
      if (!m.contains("gemm_tflops") || !m["gemm_tflops"].is_object()) continue;
      const Json& gemm = m["gemm_tflops"];
      if (!gemm.contains(precision) || !gemm[precision].is_number()) continue;
      if (!peaks.is_object() || !peaks.contains(precision) || !peaks[precision].is_number())
        continue;
      ratio = gemm[precision].get<double>() / peaks[precision].get<double>();
    }
    if (!best || ratio < *best) {
      best = ratio;
      if (where && g.contains("id") && g["id"].is_string())
        *where = fmt::format("{} measured/peak = {:.3f}", g["id"].get<std::string>(), ratio);
    }
  }
  return best;
}

double objective(const std::vector<const PreparedCase*>& rows, const Calibration& cal) {
  double sum = 0;
  for (const PreparedCase* c : rows) sum += std::fabs(predict(*c, cal).error_pct);
  return rows.empty() ? 0 : sum / static_cast<double>(rows.size());
}

ArchCalibration& family_slot(Calibration& cal, const std::string& arch) {
  for (auto& [name, c] : cal.families)
    if (name == arch) return c;
  cal.families.emplace_back(arch, cal.fallback);
  return cal.families.back().second;
}

}  // namespace

std::vector<FitParameter> fit_parameters(const std::string& arch,
                                         const std::vector<const PreparedCase*>& rows,
                                         const Catalog& catalog) {
  bool fp4 = false, fp8 = false, sixteen = false, flash = false, moe = false, synced = false;
  for (const PreparedCase* c : rows) {
    if (arch_of(*c) != arch) continue;
    const Plan& p = c->scenario.plan;
    moe = moe || c->scenario.model.moe.enabled();
    const MoeSpec& e = c->scenario.model.moe;
    synced = synced || (e.enabled() && e.capacity_factor == 0);
    if (p.precision == Precision::nvfp4) fp4 = true;
    else if (low_precision(p.precision)) fp8 = true;
    else sixteen = true;
    flash = flash || p.flash_attention;
  }
  std::vector<FitParameter> out;
  if (sixteen) {
    std::string where;
    auto r16 = measured_ratio(catalog, arch, "fp16", &where);
    if (!r16) r16 = measured_ratio(catalog, arch, "bf16", &where);
    out.push_back({"gemm_efficiency", 0.4, r16.value_or(0.85),
                   r16 ? "upper bound: " + where
                       : "upper bound 0.85 assumed (no measured 16-bit GEMM in the presets)"});
  }
  if (fp8) {
    std::string where;
    auto r8 = measured_ratio(catalog, arch, "fp8", &where);
    out.push_back({"fp8_gemm_efficiency", 0.3, r8.value_or(0.75),
                   r8 ? "upper bound: " + where
                      : "upper bound 0.75 assumed (no measured fp8 GEMM in the presets)"});
  }
  if (fp4) {
    std::string where;
    auto r4 = measured_ratio(catalog, arch, "nvfp4", &where);
    out.push_back({"fp4_gemm_efficiency", 0.2, r4.value_or(0.75),
                   r4 ? "upper bound: " + where
                      : "upper bound 0.75 assumed (no measured nvfp4 GEMM in the presets)"});
  }
  if (flash)
    out.push_back({"attention_efficiency", 0.2, 0.75,
                   "at head dimension 128 on long sequences, FlashAttention-2/3/4 and cuDNN reach "
                   "0.61-0.70 of the 16-bit peak (tests/validation/gemm/attention-bench.csv)"});
  // Only MoE rows run grouped expert GEMMs: the dense rows keep pinning the constants above.
  if (moe)
    out.push_back({"grouped_gemm_factor", 0.3, 1.0,
                   "grouped expert GEMMs, priced from their shape, reach at most the dense "
                   "GEMMs' rate"});
  // Only dropless MoE rows wait on the host after the token-count sync (stage_cost.cpp).
  if (synced)
    out.push_back({"moe_host_us", 0, 16000,
                   "upper bound: the most host-bound published run, Moonlight-16B on 8 H100 at one "
                   "micro-batch of one sequence, spends 17 ms per layer, forward and backward"});
  if (synced)
    out.push_back({"moe_host_expert_us", 0, 250,
                   "upper bound: moe_host_us's bound spread over 64 local experts, the most a "
                   "published run places on one GPU (SimuMax's DeepSeek-V3 at EP 4)"});
  // Tried and left at the prior: gemm_overhead_us and layer_overhead_us (the fit drives both to
  // ~0 with no gain; see tests/validation/README.md), memory_efficiency (measured STREAM).
  return out;
}

namespace {

// One family's fit from the prior (the fallback constants, and the measured memory efficiency)
// over its rows; rows that also run on other families' GPUs see those families as `start` has
// them. A pure function of (arch, rows, start): the families of one fit, and the folds of
// leave-one-source-out, are independent of each other.
FamilyFit fit_family(const std::string& arch, const std::vector<const PreparedCase*>& rows,
                     const Calibration& start, const Catalog& catalog) {
  // Every family starts from the same prior (the fallback constants), so a fit does not
  // depend on what an earlier fit wrote into calibration.json. memory_efficiency is not
  // fitted: it is the measured STREAM / peak bandwidth where the presets give one.
  Calibration cal = start;
  ArchCalibration& fam = family_slot(cal, arch);
  fam = start.fallback;
  if (auto mem = measured_ratio(catalog, arch, "memory", nullptr))
    fam.memory_efficiency = std::round(*mem * 1000) / 1000;  // as calibration.json stores it
  const std::vector<FitParameter> params = fit_parameters(arch, rows, catalog);
  for (const auto& p : params) {
    double* v = slot(fam, p.key);
    *v = std::clamp(*v, p.lo * scale(p.key), p.hi * scale(p.key));
  }

  double best = objective(rows, cal);
  for (int sweep = 0; sweep < 8; ++sweep) {
    const double before = best;
    for (const auto& p : params) {
      double* v = slot(fam, p.key);
      const double s = scale(p.key);
      auto f = [&](double x) {
        *v = x * s;
        return objective(rows, cal);
      };
      // Coarse scan, then golden-section refinement around the best grid point.
      const int grid = 24;
      double bx = *v / s, bf = best;
      for (int i = 0; i <= grid; ++i) {
        const double x = p.lo + (p.hi - p.lo) * i / grid;
        const double fx = f(x);
        if (fx < bf) {
          bf = fx;
          bx = x;
        }
      }
      const double step = (p.hi - p.lo) / grid;
      double a = std::max(p.lo, bx - step), b = std::min(p.hi, bx + step);
      const double g = (std::sqrt(5.0) - 1) / 2;
      double x1 = b - g * (b - a), x2 = a + g * (b - a);
      double f1 = f(x1), f2 = f(x2);
      // Down to the precision calibration.json stores (3 decimals; whole microseconds for the
      // µs keys): a finer minimum rounds to the same constant.
      const double stored = s != 1.0 ? 1.0 : 1e-3;
      for (int it = 0; it < 40 && b - a > 0.5 * stored; ++it) {
        if (f1 < f2) {
          b = x2;
          x2 = x1;
          f2 = f1;
          x1 = b - g * (b - a);
          f1 = f(x1);
        } else {
          a = x1;
          x1 = x2;
          f1 = f2;
          x2 = a + g * (b - a);
          f2 = f(x2);
        }
      }
      if (f1 < bf) {
        bf = f1;
        bx = x1;
      }
      if (f2 < bf) {
        bf = f2;
        bx = x2;
      }
      *v = bx * s;
      best = bf;
    }
    if (before - best < 1e-4) break;
  }
  // Round to what calibration.json stores (3 decimals, whole microseconds) and re-measure.
  bool fp8_fitted = false, fp4_fitted = false, grouped_fitted = false;
  for (const auto& p : params) {
    double* v = slot(fam, p.key);
    const double s = scale(p.key);
    *v = s != 1.0 ? std::round(*v / s) * s : std::round(*v * 1000) / 1000;
    fp8_fitted = fp8_fitted || p.key == "fp8_gemm_efficiency";
    fp4_fitted = fp4_fitted || p.key == "fp4_gemm_efficiency";
    grouped_fitted = grouped_fitted || p.key == "grouped_gemm_factor";
  }
  // A family without fp8 (fp4) rows: the reader's default for an absent key (the 16-bit
  // value; the fp8 value).
  if (!fp8_fitted) fam.fp8_gemm_efficiency = fam.gemm_efficiency;
  if (!fp4_fitted) fam.fp4_gemm_efficiency = fam.fp8_gemm_efficiency;
  // No MoE row in the family (or all left out): grouped GEMMs as dense ones.
  if (!grouped_fitted) fam.grouped_gemm_factor = 1.0;
  FamilyFit ff;
  ff.arch = arch;
  ff.constants = fam;
  for (const auto& p : params) ff.fitted_keys.push_back(p.key);
  ff.parameters = params;
  for (const PreparedCase* c : rows) ff.fitted_on.push_back(c->data.id);
  ff.mape_pct = objective(rows, cal);
  return ff;
}

// Runs tasks 0..n-1 on up to the machine's hardware threads (the fits are independent and pure).
template <class Task>
void run_parallel(size_t n, Task task) {
  const size_t threads =
      std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) task(i);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

std::vector<std::string> archs_of(const std::vector<const PreparedCase*>& rows) {
  std::vector<std::string> archs;
  for (const PreparedCase* c : rows)
    if (std::find(archs.begin(), archs.end(), arch_of(*c)) == archs.end())
      archs.push_back(arch_of(*c));
  return archs;
}

std::vector<const PreparedCase*> rows_of(const std::vector<const PreparedCase*>& rows,
                                         const std::string& arch) {
  std::vector<const PreparedCase*> out;
  for (const PreparedCase* c : rows)
    if (arch_of(*c) == arch) out.push_back(c);
  return out;
}

// The families' fits into one calibration, in the order given.
CalibrationFit assemble(const Calibration& start, std::vector<FamilyFit> families) {
  CalibrationFit fit;
  fit.calibration = start;
  for (const auto& f : families) family_slot(fit.calibration, f.arch) = f.constants;
  fit.families = std::move(families);
  return fit;
}

}  // namespace

CalibrationFit fit_calibration(const std::vector<PreparedCase>& cases, const Calibration& start,
                               const Catalog& catalog,
                               const std::vector<std::string>& exclude_sources) {
  std::vector<const PreparedCase*> kept;
  for (const auto& c : cases)
    if (std::find(exclude_sources.begin(), exclude_sources.end(), c.data.source) ==
        exclude_sources.end())
      kept.push_back(&c);
  const std::vector<std::string> archs = archs_of(kept);
  std::vector<FamilyFit> families(archs.size());
  run_parallel(archs.size(), [&](size_t i) {
    families[i] = fit_family(archs[i], rows_of(kept, archs[i]), start, catalog);
  });
  return assemble(start, std::move(families));
}

namespace {

// Holds out each group of rows in turn (a source, a model family: `group_of` names a case's),
// fits without it and predicts it. Leaving a group out changes only the GPU families its rows run
// on (fit_family is pure): every other family of a fold is the in-sample fit, and only the changed
// (group, GPU family) pairs are refitted, in parallel.
template <class GroupOf>
LosoResult leave_groups_out(const std::vector<PreparedCase>& cases, const Calibration& start,
                            const Catalog& catalog, GroupOf group_of) {
  LosoResult out;
  const CalibrationFit all = fit_calibration(cases, start, catalog);
  const Accuracy in_sample = evaluate(cases, all.calibration);
  std::vector<std::string> groups;
  for (const auto& c : cases)
    if (std::find(groups.begin(), groups.end(), group_of(c)) == groups.end())
      groups.push_back(group_of(c));
  struct Refit {
    size_t group;
    std::string arch;
    std::vector<const PreparedCase*> rows;  // the GPU family's rows without the group's
    FamilyFit fit;
  };
  std::vector<Refit> refits;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    std::vector<const PreparedCase*> left, own;
    for (const auto& c : cases) (group_of(c) == groups[gi] ? own : left).push_back(&c);
    for (const auto& arch : archs_of(own)) {
      auto rows = rows_of(left, arch);
      if (!rows.empty()) refits.push_back({gi, arch, std::move(rows), {}});
    }
  }
  run_parallel(refits.size(), [&](size_t i) {
    refits[i].fit = fit_family(refits[i].arch, refits[i].rows, start, catalog);
  });
  std::map<std::string, Prediction> held_out_by_id;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const std::string& g = groups[gi];
    // The fold's families: the in-sample fits, those the group's rows run on refitted
    // without them; a family left with no rows keeps the prior (fallback).
    std::vector<const PreparedCase*> own;
    for (const auto& c : cases)
      if (group_of(c) == g) own.push_back(&c);
    const std::vector<std::string> touched = archs_of(own);
    std::vector<FamilyFit> families;
    for (const auto& f : all.families) {
      if (std::find(touched.begin(), touched.end(), f.arch) == touched.end()) {
        families.push_back(f);
        continue;
      }
      for (const auto& r : refits)
        if (r.group == gi && r.arch == f.arch) families.push_back(r.fit);
    }
    const CalibrationFit without = assemble(start, std::move(families));
    Calibration cal = without.calibration;
    std::set<std::string> fitted;
    for (const auto& f : without.families) fitted.insert(f.arch);
    for (auto& [arch, c] : cal.families)
      if (!fitted.count(arch)) c = start.fallback;
    std::vector<Prediction> preds;
    std::vector<Prediction> in_sample_rows;
    for (const PreparedCase* c : own) {
      Calibration use = cal;
      const std::string& arch = arch_of(*c);
      if (!fitted.count(arch)) {
        ArchCalibration& fam = family_slot(use, arch);
        fam = start.fallback;
        if (auto mem = measured_ratio(catalog, arch, "memory", nullptr))
          fam.memory_efficiency = std::round(*mem * 1000) / 1000;
      }
      preds.push_back(predict(*c, use));
      for (const auto& p : in_sample.rows)
        if (p.id == c->data.id) in_sample_rows.push_back(p);
    }
    const Accuracy acc = summarise(preds);
    LosoRow row;
    row.source = g;
    row.rows = acc.overall.rows;
    row.loso_mape_pct = acc.overall.mape_pct;
    row.loso_worst_pct = acc.overall.worst_pct;
    row.loso_worst_id = acc.overall.worst_id;
    row.in_sample_mape_pct = summarise(std::move(in_sample_rows)).overall.mape_pct;
    out.sources.push_back(row);
    for (const auto& p : preds) held_out_by_id[p.id] = p;
  }
  std::vector<Prediction> ordered;
  for (const auto& c : cases) ordered.push_back(held_out_by_id[c.data.id]);
  out.predictions = summarise(std::move(ordered));
  return out;
}

}  // namespace

LosoResult leave_one_source_out(const std::vector<PreparedCase>& cases, const Calibration& start,
                                const Catalog& catalog) {
  return leave_groups_out(cases, start, catalog,
                          [](const PreparedCase& c) -> const std::string& { return c.data.source; });
}

LosoResult leave_one_model_family_out(const std::vector<PreparedCase>& cases,
                                      const Calibration& start, const Catalog& catalog) {
  return leave_groups_out(cases, start, catalog, [](const PreparedCase& c) {
    return std::string(name_of(model_family_of(c.scenario.model)));
  });
}

std::vector<ConstantAtBound> constants_at_bounds(const CalibrationFit& fit) {
  std::vector<ConstantAtBound> out;
  for (const auto& f : fit.families)
    for (const auto& p : f.parameters) {
      ArchCalibration c = f.constants;
      const double value = *slot(c, p.key) / scale(p.key);
      const double near = kAtBoundShare * (p.hi - p.lo);
      if (value <= p.lo + near) out.push_back({f.arch, p.key, value, p.lo, false});
      else if (value >= p.hi - near) out.push_back({f.arch, p.key, value, p.hi, true});
    }
  return out;
}

std::string calibration_json(const CalibrationFit& fit, std::string_view original) {
  using Ordered = nlohmann::ordered_json;
  Ordered out = Ordered::parse(original, nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded() || !out.is_object()) out = Ordered::object();
  if (!out.contains("families") || !out["families"].is_object()) out["families"] = Ordered::object();
  for (const auto& f : fit.families) {
    Ordered& fam = out["families"][f.arch];
    if (!fam.is_object()) fam = Ordered::object();
    const ArchCalibration& c = f.constants;
    auto r3 = [](double x) { return std::round(x * 1000) / 1000; };
    auto us = [](double s) { return static_cast<int64_t>(std::llround(s * 1e6)); };
    fam["gemm_efficiency"] = r3(c.gemm_efficiency);
    const bool fp8 = std::find(f.fitted_keys.begin(), f.fitted_keys.end(),
                               "fp8_gemm_efficiency") != f.fitted_keys.end();
    if (fp8 || fam.contains("fp8_gemm_efficiency"))
      fam["fp8_gemm_efficiency"] = r3(c.fp8_gemm_efficiency);
    const bool fp4 = std::find(f.fitted_keys.begin(), f.fitted_keys.end(),
                               "fp4_gemm_efficiency") != f.fitted_keys.end();
    if (fp4 || fam.contains("fp4_gemm_efficiency"))
      fam["fp4_gemm_efficiency"] = r3(c.fp4_gemm_efficiency);
    fam["gemm_overhead_us"] = us(c.gemm_overhead_s);
    fam["attention_efficiency"] = r3(c.attention_efficiency);
    fam["memory_efficiency"] = r3(c.memory_efficiency);
    fam["layer_overhead_us"] = us(c.layer_overhead_s);
    const bool grouped = std::find(f.fitted_keys.begin(), f.fitted_keys.end(),
                                   "grouped_gemm_factor") != f.fitted_keys.end();
    if (grouped || fam.contains("grouped_gemm_factor"))
      fam["grouped_gemm_factor"] = r3(c.grouped_gemm_factor);
    const bool host = std::find(f.fitted_keys.begin(), f.fitted_keys.end(), "moe_host_us") !=
                      f.fitted_keys.end();
    if (host || fam.contains("moe_host_us")) fam["moe_host_us"] = us(host ? c.moe_host_s : 0);
    const bool per_expert = std::find(f.fitted_keys.begin(), f.fitted_keys.end(),
                                      "moe_host_expert_us") != f.fitted_keys.end();
    if (per_expert || fam.contains("moe_host_expert_us"))
      fam["moe_host_expert_us"] = us(per_expert ? c.moe_host_expert_s : 0);
    std::string keys;
    for (const auto& p : f.parameters)
      keys += fmt::format("{}{} (bounds {}-{:.3f}: {})", keys.empty() ? "" : "; ", p.key, p.lo,
                          p.hi, p.bound_source);
    fam["notes"] = fmt::format(
        "Fitted by `stepcast calibrate` on the {} rows in fitted_on, in-sample MAPE {:.1f} %. "
        "Fitted: {}. memory_efficiency = measured STREAM / peak of the family's gpu presets "
        "(not fitted); other keys keep the fallback prior.",
        f.fitted_on.size(), f.mape_pct, keys);
    fam["fitted_on"] = f.fitted_on;
  }
  // Arrays of row ids on one line each; the rest indented as usual.
  std::string text = out.dump(2);
  std::string compact;
  bool in_array = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (!in_array && ch == '[') {
      in_array = true;
      compact += ch;
      continue;
    }
    if (in_array) {
      if (ch == ']') {
        in_array = false;
        while (!compact.empty() && compact.back() == ' ') compact.pop_back();
        compact += ']';
      } else if (ch == '\n') {
        while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
        if (compact.back() == ',') compact += ' ';
      } else {
        compact += ch;
      }
      continue;
    }
    compact += ch;
  }
  return compact + "\n";
}

}  // namespace stepcast::accuracy
