# Sourced by the bench scripts: what each needs installed, and the release binary they run.

# Exits with a one-line reason when a tool is missing: needs SCRIPT TOOL...
needs() {
  local script="$1"
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$script: needs $tool (apt-get install ${tool##*/})" >&2; exit 2; }
  done
}

# Builds the release binary; sets $bin to it and $cpu to this machine's CPU model.
build_release() {
  cargo build --release --quiet
  bin="${CARGO_TARGET_DIR:-target}/release/skilleval"
  cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
}
