#!/usr/bin/env bash
# Overnight fuzzing of the guard: every cargo-fuzz target in fuzz/ (libFuzzer, coverage
# guided), then the in-process `airlock fuzz` with a fresh seed.
#
#   ci/fuzz-overnight.sh [SECONDS_PER_TARGET]        default 9000 (2.5 h each)
#
# Environment:
#   FUZZ_SANITIZER   none (default, stable Rust) or address (needs FUZZ_TOOLCHAIN=nightly)
#   FUZZ_TOOLCHAIN   a rustup toolchain for cargo-fuzz, e.g. nightly; default: the current
#   FUZZ_JOBS        parallel libFuzzer jobs per target (default 1)
#   AIRLOCK_FUZZ_DURATION  length of the in-process run (default 10m)
#
# The parse and admit corpora start from every fixture and deterministic variant
# (`airlock fuzz --write-corpus`); mutate inputs are edit chains and start empty. Crashes
# land in fuzz/artifacts/<target>/; reproduce one with
#   cd fuzz && cargo fuzz run --sanitizer none <target> artifacts/<target>/<file>
# Exit: 0 nothing found, 1 a crash or finding, 2 setup failure.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

seconds=${1:-9000}
sanitizer=${FUZZ_SANITIZER:-none}
jobs=${FUZZ_JOBS:-1}
toolchain=()
if [ -n "${FUZZ_TOOLCHAIN:-}" ]; then toolchain=("+$FUZZ_TOOLCHAIN"); fi

if ! cargo "${toolchain[@]}" fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked || exit 2
fi
cargo build --release -p airlock-harness || exit 2

status=0
for target in parse admit mutate answer; do
  corpus="fuzz/corpus/$target"
  mkdir -p "$corpus"
  if [ "$target" != mutate ]; then
    ./target/release/airlock fuzz --write-corpus "$corpus" >/dev/null || exit 2
  fi
  echo "== $target: ${seconds}s, sanitizer $sanitizer"
  (cd fuzz && cargo "${toolchain[@]}" fuzz run --sanitizer "$sanitizer" --jobs "$jobs" \
      "$target" "corpus/$target" -- \
      -max_total_time="$seconds" -max_len=8192 -timeout=10 -print_final_stats=1) || status=1
done

echo "== in process, seed $(date +%s)"
./target/release/airlock fuzz --duration "${AIRLOCK_FUZZ_DURATION:-10m}" \
  --seed "$(date +%s)" --artifacts fuzz/artifacts/in-process || status=1
exit $status
