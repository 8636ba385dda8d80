#!/usr/bin/env bash
# Installs Debian's chromium where it is missing: the browser test (tests/web-browser.test.ts) runs the playground
# in it, headless, with WebGPU on its SwiftShader. Called by the test command and CI, not by the quick start.
set -euo pipefail
if command -v chromium >/dev/null || [[ -n "${CHROMIUM_PATH:-}" && -x "${CHROMIUM_PATH}" ]]; then exit 0; fi
if [[ $(id -u) -eq 0 ]]; then sudo=(); elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo=(sudo); else
  echo "warning: chromium is missing and installing it needs root: the browser test will be skipped (apt-get install chromium)" >&2
  exit 0
fi
echo "installing chromium (for the browser test)" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
