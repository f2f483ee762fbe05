#!/usr/bin/env bash
# Builds and runs every suite: the C++ engine tests and CLI contract (CTest), the same under
# AddressSanitizer and UBSan without exceptions, the fuzzers (30 s each), the accuracy suite, the
# benchmarks (figures printed, never asserted), the WebAssembly module against the native CLI in
# Node, and the page in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup-deps
export NODE_PATH=/usr/share/nodejs  # Debian's emscripten needs acorn from here

echo "== native build and tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSTEPCAST_BUILD_TESTS=ON >/dev/null
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2

echo "== checked build: no exceptions, AddressSanitizer + UndefinedBehaviorSanitizer"
# The engine must not need exceptions (a throw aborts the WebAssembly module): prove it natively,
# and run the engine's tests and the CLI contract under the sanitizers (the accuracy suites,
# validation and anchored, run natively above).
cmake -S . -B build-checked -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEPCAST_NO_EXCEPTIONS=ON \
  -DSTEPCAST_SANITIZE=ON -DSTEPCAST_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-checked -j2 --target stepcast stepcast_tests
ctest --test-dir build-checked --output-on-failure -j2 -E 'validation|anchored'

echo "== fuzzing: every entry point for ${STEPCAST_FUZZ_SECONDS:-30} s (clang, libFuzzer + ASan + UBSan)"
# Fails on any finding; a longer run and the figures: tests/fuzz/README.md.
bash tests/fuzz/run.sh "${STEPCAST_FUZZ_SECONDS:-30}"

echo "== benchmarks (figures, not pass/fail)"
./build/tests/stepcast_bench --benchmark_min_time=0.1

echo "== WebAssembly build"
emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-wasm -j2

echo "== web page build and Node + browser tests"
npm --prefix web ci --no-audit --no-fund
npm --prefix web run build
npm --prefix web test

echo "== WebAssembly benchmark (figures, not pass/fail)"
node tests/wasm/bench.mjs
