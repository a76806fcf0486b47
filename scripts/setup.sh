#!/usr/bin/env bash
# Installs the Debian packages cgpt needs (only those missing), then
# configures and builds cgpt in build/. Safe to run again: it only does what
# is left to do.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build"

packages=(
  cmake ninja-build g++ python3
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
  libzstd-dev            # LLVM 19's CMake package links libzstd
  libyaml-cpp-dev libfmt-dev libgtest-dev
  python3-numpy python3-yaml python3-torch  # the PyTorch reference check (test/reference)
  python3-dev pybind11-dev                  # the Python package (python/)
  python3-pytest python3-jsonschema         # its tests, and the report's schema check
  librsvg2-bin           # rsvg-convert, for cgpt-run --plot file.png
  clang-format-19        # the C++ style check (test/format.test)
  libopenmpi-dev openmpi-bin  # the cycle-level run over MPI processes
)

"$root/scripts/install-packages.sh" "${packages[@]}"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
ninja -C "$build"

# The Python package (docs/python.md), importable as `import cgpt` by this
# machine's python3 without PYTHONPATH: a .pth file in the user's
# site-packages names build/python, as an editable install does. Remove
# that file to undo it.
if [ -d "$build/python/cgpt" ]; then
  for python in python3 /usr/bin/python3; do
    command -v "$python" > /dev/null || continue
    site=$("$python" -m site --user-site 2>/dev/null) || continue
    mkdir -p "$site" && echo "$build/python" > "$site/cgpt-build.pth"
  done
fi
