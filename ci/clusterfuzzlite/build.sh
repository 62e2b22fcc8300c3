#!/bin/bash -eu
# Builds the three cargo-fuzz targets for ClusterFuzzLite, with the contracts beside them
# (the targets read `schemas/` next to their executable) and seed corpora.
cd "$SRC/airlock/fuzz"
cargo fuzz build -O
for target in parse admit mutate answer; do
  cp "target/x86_64-unknown-linux-gnu/release/$target" "$OUT/"
done
cp -r "$SRC/airlock/schemas" "$SRC/airlock/corpora" "$OUT/"
cd "$SRC/airlock"
cargo build --release -p airlock-harness
seeds=$(mktemp -d)
./target/release/airlock fuzz --write-corpus "$seeds"
for target in parse admit; do
  (cd "$seeds" && zip -q "$OUT/${target}_seed_corpus.zip" ./*)
done
