#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build and run Vixen: Mesa's EGL/GLES (WebGPU falls back to
# Dawn's OpenGL ES backend on llvmpipe where there is no GPU), pnpm, and the workspace's dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

need_node_major=20; need_node_minor=19
if ! command -v node >/dev/null; then echo "error: Node.js >= 20.19 is required (none found)" >&2; exit 1; fi
IFS=. read -r major minor _ <<<"$(node -p 'process.versions.node')"
if (( major < need_node_major || (major == need_node_major && minor < need_node_minor) )); then
  echo "error: Node.js >= 20.19 is required (found $(node --version))" >&2; exit 1
fi

packages=(libegl1 libegl-mesa0 libgles2 libgl1-mesa-dri)
missing=()
if command -v dpkg-query >/dev/null; then
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
fi
if (( ${#missing[@]} > 0 )); then
  echo "installing ${missing[*]}" >&2
  if [[ $(id -u) -eq 0 ]]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
    echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v pnpm >/dev/null; then
  echo "installing pnpm" >&2
  npm install -g pnpm@10.34.8 >/dev/null 2>&1 || { echo "error: could not install pnpm (npm install -g pnpm)" >&2; exit 1; }
fi
pnpm install --frozen-lockfile --reporter=silent
