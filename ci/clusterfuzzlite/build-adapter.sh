#!/bin/bash -eu
# Builds an adapter crate's cargo-fuzz targets for ClusterFuzzLite (the example:
# examples/ci-connector/fuzz): each target with the contracts beside it (the targets read
# `schemas/` next to their executable), its dictionary and its seed corpus. Use it as
# .clusterfuzzlite/build.sh in the adapter's repository, with CRATE set to the crate.
crate=${CRATE:-examples/ci-connector}
cd "$SRC/airlock"
cargo build --release -p airlock-harness
airlock=$PWD/target/release/airlock
cd "$crate/fuzz"
cargo fuzz build -O
cp -r "$SRC/airlock/schemas" "$SRC/airlock/corpora" "$OUT/"
for file in *.contracts; do
  target=$(basename "$file" .contracts)
  cp "target/x86_64-unknown-linux-gnu/release/$target" "$OUT/"
  contracts=()
  while read -r dir; do [ -n "$dir" ] && contracts+=(--contract "$SRC/airlock/$dir"); done < "$file"
  "$airlock" fuzz "${contracts[@]}" --write-dict "$OUT/$target.dict"
  seeds=$(mktemp -d)
  "$airlock" fuzz "${contracts[@]}" --write-corpus "$seeds" --for-adapter
  (cd "$seeds" && zip -q "$OUT/${target}_seed_corpus.zip" ./*)
done
