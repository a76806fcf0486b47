#!/usr/bin/env bash
# Builds cgpt with AddressSanitizer and UBSan in build-asan/, runs the whole
# test suite there, then cgpt-run on every option's values and on random
# command lines (docs/robustness.md). Run after scripts/setup.sh.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build-asan"

# Without MPI: Open MPI's own allocations, alive at exit, read as leaks to
# LeakSanitizer. The MPI path is tested in the main build (mesh-mpi.test),
# and the bands it runs are the threads' code, which runs here.
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCGPT_SANITIZE=ON -DCGPT_ENABLE_MPI=OFF
fi
ninja -C "$build" check-cgpt
python3 "$root/scripts/fuzz-command-lines.py" --cgpt-run "$build/bin/cgpt-run" \
  --runs 300
