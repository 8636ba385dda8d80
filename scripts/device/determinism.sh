#!/usr/bin/env bash
# Same bytes on llvmpipe and on the GPU: runs tests/determinism/program.logic twice with the bundle on a GPU server
# and compares every output with llvmpipe's. Beforehand, here:
#   pnpm exec tsx tests/determinism/make-facts.ts .devcarry/det/facts
#   for f in csv json; do pnpm --silent vixen run tests/determinism/program.logic --facts .devcarry/det/facts --format $f > .devcarry/det/llvmpipe/out.$f; done
#   pnpm --silent vixen run tests/determinism/program.logic --facts .devcarry/det/facts --output-dir .devcarry/det/llvmpipe
#   pnpm vixen bundle .devcarry/bundle
# Usage (repo root, with .devcarry and .gl carried): bash scripts/device/determinism.sh
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
rm -rf /tmp/vx && cp -r .devcarry/bundle /tmp/vx
vixen=/tmp/vx/vixen
det=.devcarry/det
out=${OUT:-/tmp/det-out}
for run in 1 2; do
  mkdir -p "$out/gpu$run"
  for f in csv json; do "$vixen" run tests/determinism/program.logic --facts $det/facts --format $f > "$out/gpu$run/out.$f"; done
  "$vixen" run tests/determinism/program.logic --facts $det/facts --output-dir "$out/gpu$run" 2>&1 | grep adapter
done
status=0
for f in out.csv out.json path.csv named.csv reach.csv total.csv; do
  cmp -s "$out/gpu1/$f" "$out/gpu2/$f" && a=same || { a=DIFFERENT; status=1; }
  cmp -s "$out/gpu1/$f" "$det/llvmpipe/$f" && b=same || { b=DIFFERENT; status=1; }
  echo "$f ($(wc -c < "$out/gpu1/$f") bytes): GPU run 1 vs run 2 $a, GPU vs llvmpipe $b"
done
exit $status
