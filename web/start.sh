#!/usr/bin/env bash
# Installs what is missing, builds the engine for WebAssembly and the page, and serves it on
# http://localhost:8080/ until interrupted.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup-deps
export NODE_PATH=/usr/share/nodejs  # Debian's emscripten needs acorn from here
emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-wasm -j2
npm --prefix web ci --no-audit --no-fund
npm --prefix web run build
echo "Stepcast: http://localhost:8080/"
exec npm --prefix web run serve
