#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` and `llama-batched-bench` once, into a cache outside the
# checkout, and prints the folder that holds them; a second run only prints it.
#
#   bash scripts/build_llama_tools.sh          build when missing, print the bin folder
#   bash scripts/build_llama_tools.sh --plan   print the source and the bin folder, build nothing
#
# The source is the llama.cpp that the llama-cpp-sys-2 crate vendors (found with
# `cargo metadata`), so the server runs the engine the embedded backend runs. The crate's package
# leaves tools/server and tools/batched-bench out, though; when they are missing the script builds
# the complete llama.cpp bundled in the source package of llama-cpp-python (pinned below), fetched
# by package name with `pip download`. The bin folder is named after the source actually built:
# $SKILLEVAL_CACHE_DIR/llama-tools/<source>-<version>/bin (default cache
# $XDG_CACHE_HOME/skilleval, else ~/.cache/skilleval), with a SOURCE file beside it.
#
# Release, CPU only, no curl, no OpenSSL, no web UI assets (the UI's prebuilt download is off), no
# tests or examples, and only the two targets. On x86-64 it builds without llama.cpp's AMX kernels,
# which crash on the first decode on Xeons with AMX, as .cargo/config.toml does for the embedded
# engine; a cached build made with other flags is built again (its FLAGS file tells). Everything
# runs under `nice -n 19`; progress goes to stderr, the bin folder alone to stdout.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FALLBACK_PACKAGE="llama-cpp-python"
FALLBACK_VERSION="0.3.36"
TARGETS=(llama-server llama-batched-bench)

say() { printf 'build_llama_tools: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

plan_only=0
case "${1:-}" in
  "") ;;
  --plan) plan_only=1 ;;
  -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
  *) die "unknown argument $1 (use --plan)" ;;
esac

CACHE_DIR="${SKILLEVAL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skilleval}"

# The vendored crate's folder and version, from the lock file the build uses.
read -r sys_version sys_dir < <(
  nice -n 19 cargo metadata --format-version 1 --manifest-path "$repo/Cargo.toml" 2>/dev/null |
    python3 -c '
import json, os, sys
meta = json.load(sys.stdin)
for package in meta["packages"]:
    if package["name"] == "llama-cpp-sys-2":
        print(package["version"], os.path.dirname(package["manifest_path"]))
        break
'
) || die "cargo metadata found no llama-cpp-sys-2 (is cargo installed and Cargo.lock readable?)"
[ -n "${sys_dir:-}" ] || die "cargo metadata found no llama-cpp-sys-2"
vendored="$sys_dir/llama.cpp"

has_tools() { [ -f "$1/tools/server/CMakeLists.txt" ] && [ -f "$1/tools/batched-bench/CMakeLists.txt" ]; }

if has_tools "$vendored"; then
  source_name="llama-cpp-sys-2-$sys_version"
else
  source_name="$FALLBACK_PACKAGE-$FALLBACK_VERSION"
fi
tools_dir="$CACHE_DIR/llama-tools/$source_name"
bin_dir="$tools_dir/bin"

build_flags=""
if [ "$(uname -m)" = "x86_64" ]; then build_flags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"; fi

all_built() {
  local target
  for target in "${TARGETS[@]}"; do [ -x "$bin_dir/$target" ] || return 1; done
  [ "$(cat "$tools_dir/FLAGS" 2>/dev/null || echo none)" = "$build_flags" ]
}

if all_built; then
  say "already built from $source_name"
  printf '%s\n' "$bin_dir"
  exit 0
fi
if [ "$plan_only" -eq 1 ]; then
  if has_tools "$vendored"; then say "would build from $vendored"
  else say "llama-cpp-sys-2 $sys_version ships no tools/server: would build from $FALLBACK_PACKAGE $FALLBACK_VERSION's llama.cpp"; fi
  printf '%s\n' "$bin_dir"
  exit 0
fi

command -v cmake >/dev/null 2>&1 || die "cmake is missing (bash scripts/setup.sh installs it)"
mkdir -p "$tools_dir"
work="$(mktemp -d "$tools_dir/work.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if has_tools "$vendored"; then
  src="$vendored"
  say "building from the vendored llama.cpp ($vendored)"
else
  say "llama-cpp-sys-2 $sys_version ships no tools/server; fetching $FALLBACK_PACKAGE $FALLBACK_VERSION's source with pip"
  # Source for this package only: with `--no-binary :all:` pip would also build the sdist's own
  # build requirements from source just to read its metadata, which takes many minutes.
  nice -n 19 python3 -m pip download --quiet --no-deps --no-binary "$FALLBACK_PACKAGE" --disable-pip-version-check \
    -d "$work/sdist" "$FALLBACK_PACKAGE==$FALLBACK_VERSION" >&2
  archive="$(find "$work/sdist" -name '*.tar.gz' | head -n 1)"
  [ -n "$archive" ] || die "pip brought no source archive of $FALLBACK_PACKAGE $FALLBACK_VERSION"
  tar -xzf "$archive" -C "$work"
  src="$(find "$work" -maxdepth 3 -type d -path '*/vendor/llama.cpp' | head -n 1)"
  [ -n "$src" ] && has_tools "$src" || die "$FALLBACK_PACKAGE $FALLBACK_VERSION bundles no llama.cpp tools/server"
fi

jobs="$(nproc 2>/dev/null || echo 2)"
say "configuring (Release, CPU only, no curl, no UI)"
nice -n 19 cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DGGML_BLAS=OFF \
  -DBUILD_SHARED_LIBS=OFF -DCMAKE_C_FLAGS="$build_flags" -DCMAKE_CXX_FLAGS="$build_flags" \
  >"$work/configure.log" 2>&1 ||
  { tail -n 30 "$work/configure.log" >&2; die "cmake configure failed"; }
say "building ${TARGETS[*]} on $jobs jobs (several minutes on a small machine)"
nice -n 19 cmake --build "$work/build" --config Release -j "$jobs" --target "${TARGETS[@]}" \
  >"$work/build.log" 2>&1 ||
  { tail -n 30 "$work/build.log" >&2; die "build failed"; }

mkdir -p "$bin_dir.partial"
for target in "${TARGETS[@]}"; do cp "$work/build/bin/$target" "$bin_dir.partial/"; done
printf '%s\n' "$source_name" >"$tools_dir/SOURCE"
printf '%s\n' "$build_flags" >"$tools_dir/FLAGS"
rm -rf "$bin_dir"
mv "$bin_dir.partial" "$bin_dir"
say "built ${TARGETS[*]} from $source_name"
printf '%s\n' "$bin_dir"
