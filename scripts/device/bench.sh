#!/usr/bin/env bash
# On the lent GPU (no Node): run the bundled CLI's benches, JSON reports and logs under $OUT (or /tmp/vx-out).
# Usage (repo root, .devcarry/bundle and .gl carried): bash scripts/device/bench.sh SUITE [bench options...]
#   SUITE: operators | graphs | tpch | ssb | load | smoke
#   VX_CPU_PROF=1: CPU profiles of the main thread and workers under $OUT/prof (a `bundle --no-minify` names functions)
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
rm -rf /tmp/vx && cp -r .devcarry/bundle /tmp/vx
out=${OUT:-/tmp/vx-out}; mkdir -p "$out"
suite=$1; shift
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null
case $suite in
  smoke) /tmp/vx/vixen run examples/even-odd.logic --output odd --format csv | head -3 ;;
  *)
    if [ -n "${VX_CPU_PROF:-}" ]; then export VIXEN_NODE_FLAGS="--cpu-prof --cpu-prof-interval 5000 --cpu-prof-dir=$out/prof"; fi
    /tmp/vx/vixen bench "$suite" --json "$out/$suite-$(date +%H%M%S).json" "$@" 2>&1 | tee -a "$out/$suite.log" ;;
esac
