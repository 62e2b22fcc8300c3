# Sourced by the packaging scripts (wheel.sh, python-binding.sh, node-binding.sh,
# bindings-bench.sh), from the repository root.

# Where cargo puts its builds (CARGO_TARGET_DIR and config honoured).
target_dir=$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')

# maturin, pinned by ci/wheel-requirements.txt, in a venv of its own under the target
# folder; prints its path.
maturin_bin() {
  local builder="$target_dir/wheel-builder"
  if [ ! -x "$builder/bin/maturin" ]; then
    python3 -m venv "$builder"
    "$builder/bin/pip" install -q -r ci/wheel-requirements.txt
  fi
  echo "$builder/bin/maturin"
}

# A fresh venv at $1 (an earlier one removed) with the wheels or requirement files given.
fresh_venv() {
  local venv=$1
  shift
  rm -rf "$venv"
  python3 -m venv "$venv"
  for what in "$@"; do
    case $what in
      *.whl) "$venv/bin/pip" install -q --no-index "$what" ;;
      *) "$venv/bin/pip" install -q -r "$what" ;;
    esac
  done
}
