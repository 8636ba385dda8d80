#!/usr/bin/env bash
# First command of the README quick start: install what is missing, then run Red Fox's even/odd example on WebGPU.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/install.sh
pnpm --silent vixen run examples/even-odd.logic
