#!/bin/bash -eu
# Builds an adapter crate's cargo-fuzz targets for ClusterFuzzLite / OSS-Fuzz: each
# target with the contracts it fuzzes against beside it (the targets read `schemas/`
# next to their executable), its dictionary and its seed corpus, both written by the
# `airlock` binary of the airlock-harness version the targets link.
#
# REPO   the repository (default: $SRC/adapter, as the Dockerfile copies it)
# CRATE  the adapter crate inside it (default: .); its fuzz/ folder holds the targets
#        and, per target, NAME.contracts: contract folders relative to REPO, one a line
repo=${REPO:-$SRC/adapter}
crate=${CRATE:-.}
cd "$repo/$crate/fuzz"
# OSS-Fuzz's image builds on nightly with its sanitizers; on stable Rust (a local try),
# without one.
flags=()
if ! rustc --version | grep -q nightly; then flags=(--sanitizer none); fi
cargo fuzz build -O ${flags[@]+"${flags[@]}"}

# The airlock binary from the very airlock-harness the targets were built with.
harness=$(cargo metadata --format-version 1 | python3 -c '
import json, os, sys
meta = json.load(sys.stdin)
for p in meta["packages"]:
    if p["name"] == "airlock-harness":
        print(os.path.dirname(p["manifest_path"]))
        break
')
if [ -z "$harness" ]; then
  echo "build.sh: the fuzz crate in $repo/$crate/fuzz does not depend on airlock-harness" >&2
  exit 1
fi
cargo install --path "$harness" --root "$WORK/airlock" --bin airlock
airlock=$WORK/airlock/bin/airlock

shopt -s nullglob
targets=(*.contracts)
if [ ${#targets[@]} -eq 0 ]; then
  echo "build.sh: no NAME.contracts file in $repo/$crate/fuzz: list each target's contract folders" >&2
  exit 1
fi
mkdir -p "$OUT/schemas" "$OUT/corpora"
for file in "${targets[@]}"; do
  target=$(basename "$file" .contracts)
  cp "target/x86_64-unknown-linux-gnu/release/$target" "$OUT/"
  contracts=()
  while read -r dir; do
    [ -n "$dir" ] || continue
    contracts+=(--contract "$repo/$dir")
    # The contract, and its corpus (corpora/<tool> beside schemas/<tool>), as the
    # target reads them next to its executable.
    tool=$(basename "$dir")
    cp -r "$repo/$dir" "$OUT/schemas/"
    corpus=$(dirname "$(dirname "$repo/$dir")")/corpora/$tool
    if [ -d "$corpus" ]; then cp -r "$corpus" "$OUT/corpora/"; fi
  done < "$file"
  "$airlock" fuzz "${contracts[@]}" --write-dict "$OUT/$target.dict"
  seeds=$(mktemp -d)
  "$airlock" fuzz "${contracts[@]}" --write-corpus "$seeds" --for-adapter
  (cd "$seeds" && zip -q "$OUT/${target}_seed_corpus.zip" ./*)
done
