#!/usr/bin/env bash
# Builds cgpt with AddressSanitizer and UBSan in build-asan/ and runs the
# whole test suite there (docs/robustness.md). Run after scripts/setup.sh.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build-asan"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCGPT_SANITIZE=ON
fi
ninja -C "$build" check-cgpt
