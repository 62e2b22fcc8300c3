#!/usr/bin/env bash
# Overnight differential fuzzing of an adapter crate's adapters against their contracts'
# guards: every cargo-fuzz target of the crate's fuzz/ folder (libFuzzer, coverage
# guided, the contracts' dictionary, a seed corpus of every fixture and deterministic
# variant), then, when ADAPTER_CMD is set, the black-box exec-protocol run.
#
#   ci/adapter-fuzz-overnight.sh CRATE_DIR [SECONDS_PER_TARGET]     default 9000 (2.5 h)
#
# CRATE_DIR/fuzz holds the targets (see examples/ci-connector/fuzz/); each target NAME
# fuzzes the contracts listed in CRATE_DIR/fuzz/NAME.contracts (one contract folder per
# line, relative to the repository) and reads CRATE_DIR/fuzz/NAME.dict.
#
# Environment:
#   FUZZ_SANITIZER   none (default, stable Rust) or address (needs FUZZ_TOOLCHAIN=nightly)
#   FUZZ_TOOLCHAIN   a rustup toolchain for cargo-fuzz; default: the current one
#   ADAPTER_CMD      a command speaking the exec protocol: also fuzzed as a black box
#   AIRLOCK_FUZZ_DURATION  length of the black-box run (default 2h)
#
# A finding's reproducer (`.case.json`) lands in CRATE_DIR/fuzz/reproducers/ and replays
# with `airlock check --replay FILE --adapter-cmd …`.
# Exit: 0 nothing found, 1 a finding, 2 setup failure.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

crate=${1:?usage: ci/adapter-fuzz-overnight.sh CRATE_DIR [SECONDS_PER_TARGET]}
seconds=${2:-9000}
sanitizer=${FUZZ_SANITIZER:-none}
toolchain=()
if [ -n "${FUZZ_TOOLCHAIN:-}" ]; then toolchain=("+$FUZZ_TOOLCHAIN"); fi
[ -d "$crate/fuzz/fuzz_targets" ] || { echo "no $crate/fuzz/fuzz_targets" >&2; exit 2; }

if ! cargo "${toolchain[@]}" fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked || exit 2
fi
cargo build --release -p airlock-harness || exit 2
airlock=$PWD/target/release/airlock
reproducers=$PWD/$crate/fuzz/reproducers
mkdir -p "$reproducers"

status=0
for file in "$crate"/fuzz/*.contracts; do
  target=$(basename "$file" .contracts)
  contracts=()
  while read -r dir; do [ -n "$dir" ] && contracts+=(--contract "$dir"); done < "$file"
  corpus="$crate/fuzz/corpus/$target"
  "$airlock" fuzz "${contracts[@]}" --write-corpus "$corpus" --for-adapter >/dev/null || exit 2
  "$airlock" fuzz "${contracts[@]}" --write-dict "$crate/fuzz/$target.dict" >/dev/null || exit 2
  echo "== $target: ${seconds}s, sanitizer $sanitizer"
  (cd "$crate/fuzz" && AIRLOCK_FUZZ_REPRODUCERS="$reproducers" \
    cargo "${toolchain[@]}" fuzz run --sanitizer "$sanitizer" "$target" "corpus/$target" -- \
      -dict="$target.dict" -max_total_time="$seconds" -max_len=256 -timeout=10 \
      -print_final_stats=1) || status=1
done

if [ -n "${ADAPTER_CMD:-}" ]; then
  contracts=()
  for file in "$crate"/fuzz/*.contracts; do
    while read -r dir; do [ -n "$dir" ] && contracts+=(--contract "$dir"); done < "$file"
  done
  echo "== black box: $ADAPTER_CMD"
  "$airlock" fuzz "${contracts[@]}" --adapter-cmd "$ADAPTER_CMD" \
    --duration "${AIRLOCK_FUZZ_DURATION:-2h}" --seed "$(date +%s)" \
    --corpus "$crate/fuzz/corpus/black-box" --artifacts "$reproducers" || status=1
fi
exit $status
