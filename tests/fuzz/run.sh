#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and runs each for SECONDS on its seed
# corpus (tests/fuzz/corpus/<target>/, read only: new inputs go to build-fuzz/corpus/<target>/).
# Fails on any finding (a crash, a sanitizer report, a broken promise of fuzz_common.h, an input
# slower than 10 s or a process over 2 GiB); the input that caused it is written to
# build-fuzz/findings/. Prints executions and executions per second per target.
#
#   bash tests/fuzz/run.sh [SECONDS] [TARGET...]     (default: 30 s each, every target)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-30}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(scenario batch link search resolve import nccl_tests gemm calibration)

CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSTEPCAST_FUZZ=ON >/dev/null
cmake --build build-fuzz -j2 --target "${targets[@]/#/fuzz_}"
mkdir -p build-fuzz/findings
total=0
for t in "${targets[@]}"; do
  dict=tests/fuzz/json.dict
  [[ $t == link ]] && dict=tests/fuzz/link.dict
  [[ $t == import ]] && dict=tests/fuzz/import.dict
  [[ $t == nccl_tests ]] && dict=tests/fuzz/nccl_tests.dict
  [[ $t == gemm ]] && dict=tests/fuzz/gemm.dict
  mkdir -p "build-fuzz/corpus/$t"
  log="build-fuzz/fuzz_$t.log"
  if ! "build-fuzz/tests/fuzz/fuzz_$t" "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" \
      -dict="$dict" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
      -artifact_prefix="build-fuzz/findings/$t-" -print_final_stats=1 >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz: $t found a problem (input in build-fuzz/findings/, log $log)" >&2
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  time_s=$(sed -n 's/^stat::.*//;s/.*Done \([0-9]*\) runs in \([0-9]*\) second.*/\2/p' "$log")
  echo "fuzz_$t: $runs executions in ${time_s:-$seconds} s ($((runs / ${time_s:-$seconds})) exec/s), no finding"
  total=$((total + runs))
done
echo "fuzz: $total executions, no finding"
