#!/usr/bin/env bash
# Builds cgpt's libFuzzer targets with clang-19 in build-fuzz/ (installing
# clang-19 and libclang-rt-19-dev when missing), seeds them from models/,
# test/ (the Model Zoo files included), and runs each for a bounded time.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 300)
#
# Crashes land in build-fuzz/fuzz/<target>/crash-*; each one found becomes
# a test under test/BadInput (docs/robustness.md).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build-fuzz"
seconds=${1:-300}

"$root/scripts/install-packages.sh" clang-19 libclang-rt-19-dev

if [ ! -f "$build/build.ninja" ]; then
  CC=clang-19 CXX=clang++-19 cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release -DCGPT_FUZZ=ON
fi
ninja -C "$build" cgpt-run cgpt-fuzz-frontend cgpt-fuzz-pipeline \
  cgpt-fuzz-safetensors
# Debian's MLIR archives are not instrumented: LLVM's allocators must not
# poison what they hand them (docs/robustness.md).
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:detect_leaks=0}

# Seeds: every model file we have, and IR at each level.
work="$build/fuzz"
mkdir -p "$work/frontend/seeds" "$work/pipeline/seeds" \
  "$work/safetensors/seeds"
find "$root/models" "$root/test" \
  -name '*.yaml' -o -name '*.json' 2>/dev/null | while read -r file; do
  # The first byte picks the parser: odd for JSON, even for YAML.
  case "$file" in
    *.json) prefix='1' ;;
    *) prefix='0' ;;
  esac
  { printf '%s' "$prefix"; cat "$file"; } \
    > "$work/frontend/seeds/$(echo "$file" | md5sum | cut -c1-16)"
done
find "$root/test" -name '*.mlir' -exec cp {} "$work/pipeline/seeds/" \;
for level in transformer dataflow wafer; do
  "$build/bin/cgpt-run" "$root/models/tiny.yaml" --target mini \
    --emit=$level > "$work/pipeline/seeds/tiny-$level.mlir"
done

# Deep nesting, which the parsers must refuse before recursing
# (test/BadInput/deep-nesting.test), in each target's format.
python3 - "$work" <<'PY'
import struct, sys
work = sys.argv[1]
open(f"{work}/frontend/seeds/deep-json", "w").write(
    "1{\"model_type\": \"gpt2\", \"n_embd\": " + "[" * 5000 + "]" * 5000 + "}")
open(f"{work}/frontend/seeds/deep-yaml", "w").write(
    "0model: " + "[" * 5000 + "]" * 5000 + "\n")
open(f"{work}/pipeline/seeds/deep.mlir", "w").write(
    "module {" * 3000 + "}" * 3000)
header = b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}"
open(f"{work}/safetensors/seeds/deep.safetensors", "wb").write(
    struct.pack("<Q", len(header)) + header)
PY

# Weights the functional mode wrote, and the malformed files of
# test/BadInput/safetensors.test.
"$build/bin/cgpt-run" "$root/models/tiny.yaml" --functional \
  --save-weights "$work/safetensors/seeds/tiny.safetensors" > /dev/null 2>&1
python3 "$root/test/BadInput/Inputs/make-bad-safetensors.py" \
  "$work/safetensors/seeds"

found=0
for target in frontend pipeline safetensors; do
  echo "fuzz: cgpt-fuzz-$target for $seconds s (log: $work/$target/fuzz.log)"
  mkdir -p "$work/$target/corpus"
  (cd "$work/$target" &&
    "$build/bin/cgpt-fuzz-$target" corpus seeds \
      -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
      -max_len=65536 -print_final_stats=1 > fuzz.log 2>&1) || found=1
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|ERROR|SUMMARY' \
    "$work/$target/fuzz.log" || true
done
if ls "$work"/*/crash-* "$work"/*/timeout-* "$work"/*/oom-* 2>/dev/null; then
  found=1
else
  echo "fuzz: no crashes, timeouts or out-of-memory inputs"
fi
exit $found
