#!/usr/bin/env bash
# Make the pinned conformance suites (testsuites/PINNED) available to `cargo test`.
#
#   ci/testsuites.sh            find them, or fetch them into target/testsuites
#   ci/testsuites.sh --check    only find them (no network); exit 1 when absent
#
# Where the tests look, in order: $AIRLOCK_TESTSUITES (which must then hold them),
# ../shared/testsuites beside this repository, target/testsuites (where this script
# fetches them). A folder counts when it holds both suites and, if it has a VERSIONS
# file, that file names the pinned commits. Fetching needs git and network access.
set -euo pipefail
cd "$(dirname "$0")/.."

pinned() { grep -v '^#' testsuites/PINNED | awk 'NF == 3 { print $1, $2, $3 }'; }

holds_pinned() {
  local dir=$1
  [ -d "$dir/JSON-Schema-Test-Suite/tests/draft2020-12" ] && [ -d "$dir/JSONTestSuite/test_parsing" ] || return 1
  if [ -f "$dir/VERSIONS" ]; then
    while read -r _name _repo commit; do
      grep -q "$commit" "$dir/VERSIONS" || { echo "$dir: VERSIONS does not name commit $commit" >&2; return 1; }
    done < <(pinned)
  fi
}

if [ -n "${AIRLOCK_TESTSUITES:-}" ]; then
  holds_pinned "$AIRLOCK_TESTSUITES" || { echo "AIRLOCK_TESTSUITES=$AIRLOCK_TESTSUITES does not hold the pinned suites" >&2; exit 1; }
  echo "conformance suites: $AIRLOCK_TESTSUITES"; exit 0
fi
for dir in ../shared/testsuites target/testsuites; do
  if holds_pinned "$dir"; then echo "conformance suites: $dir"; exit 0; fi
done
if [ "${1:-}" = "--check" ]; then
  echo "conformance suites not found (tried ../shared/testsuites, target/testsuites); run ci/testsuites.sh to fetch them" >&2
  exit 1
fi

mkdir -p target/testsuites
rm -f target/testsuites/VERSIONS.tmp
while read -r name repo commit; do
  dest="target/testsuites/$name"
  rm -rf "$dest.tmp"
  git init -q "$dest.tmp"
  git -C "$dest.tmp" fetch -q --depth 1 "$repo" "$commit"
  git -C "$dest.tmp" checkout -q FETCH_HEAD
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
  echo "$name $repo commit $commit" >> target/testsuites/VERSIONS.tmp
done < <(pinned)
mv target/testsuites/VERSIONS.tmp target/testsuites/VERSIONS
echo "conformance suites: target/testsuites"
