// `stepcast calibrate --nccl-tests FILE...`: a link description fitted to nccl-tests output
// (engine/include/stepcast/nccl_tests.h), for cluster.intra_node_link / inter_node_link.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli_io.h"
#include "stepcast/limits.h"
#include "stepcast/nccl_tests.h"
#include "stepcast/scenario.h"

using namespace stepcast;
using stepcast::cli::dump;
using stepcast::cli::fail;

int run_nccl_calibration(int argc, char** argv) {
  std::vector<std::string> files;
  std::string format = "json", write, nics_text, gpu_id;
  bool nccl_tests = false;  // the flag that chose this command
  const std::string error = stepcast::cli::read_options(
      argc, argv, 2,
      {{"--nccl-tests", nullptr, &nccl_tests}, {"--format", &format}, {"--write", &write},
       {"--nics-per-node", &nics_text}, {"--gpu", &gpu_id}},
      files, "with --nccl-tests: --nics-per-node, --gpu, --write, --format");
  if (!error.empty()) return fail(error);
  if (files.empty()) return fail("--nccl-tests needs one or more nccl-tests output files");
  if (format != "json" && format != "text")
    return fail(fmt::format("--format={} must be json or text", format));
  int nics = 0;
  if (!nics_text.empty()) {
    char* end = nullptr;
    const long v = std::strtol(nics_text.c_str(), &end, 10);
    if (*end != '\0' || v < 1 || v > 4096)
      return fail(fmt::format("--nics-per-node={} must be a whole number from 1 to 4096",
                              nics_text));
    nics = static_cast<int>(v);
  }
  // --gpu: the cluster's GPU preset; output measured on another GPU is refused.
  const GpuSpec* gpu = nullptr;
  if (!gpu_id.empty() && !(gpu = builtin_catalog().find_gpu(gpu_id)))
    return fail(fmt::format("--gpu={} is not a GPU preset (see `stepcast presets gpus`)",
                            printable(gpu_id, kNameInMessageBytes)));
  std::vector<NcclTestRun> runs;
  for (const auto& file : files) {
    std::string text;
    if (auto e = stepcast::cli::read_input(file, text); !e.empty()) return fail(e);
    auto run = parse_nccl_tests(text, file);
    if (!run) return fail(fmt::format("{}: {}", file, run.error().message));
    if (gpu)
      if (auto e = nccl_gpu_error(*run, *gpu))
        return fail(fmt::format("{}: {}", file, e->message));
    runs.push_back(std::move(run).value());
  }
  auto fit = fit_nccl_link(runs, nics);
  if (!fit) return fail(fit.error());
  const Json link = nccl_link_json(*fit, files);
  if (!write.empty()) {
    std::ofstream out(write, std::ios::binary);
    if (!(out << dump(link, 2) << "\n")) return fail(fmt::format("cannot write {}", write));
  }
  if (format == "json") {
    std::cout << dump(link, 2) << "\n";
    return 0;
  }
  const LinkSpec& l = fit->link;
  std::cout << fmt::format(
      "{} link ({} GPUs per node{}): busbw {:.1f} GB/s, all-reduce busbw {:.1f} GB/s, half-peak "
      "{:.0f} bytes, latency {:.1f} us\n",
      l.scope == LinkScope::intra_node ? "intra-node" : "inter-node", fit->ranks_per_host,
      l.scope == LinkScope::inter_node ? fmt::format(", {} NICs; per port", fit->nics_per_node)
                                       : "",
      l.busbw_Bps / 1e9, l.allreduce_busbw_Bps / 1e9, l.half_peak_bytes, l.latency_s * 1e6);
  for (const auto& c : fit->checks)
    std::cout << fmt::format("  {}: busbw error over {} sizes >= 1 MiB: mean {:.1f} %, max {:.1f} %\n",
                             c.label, c.points, 100 * c.mean_busbw_error, 100 * c.max_busbw_error);
  if (!write.empty()) std::cout << "wrote " << write << "\n";
  return 0;
}
