#!/usr/bin/env bash
# On a GPU server without Node (e.g. the lent H100): run the bundle made by `vixen bundle .devcarry/bundle` on the
# examples and on R-MAT transitive closures whose edge lists were made beforehand into .devcarry/data/rmat<scale>.
# Usage (repo root, with .devcarry and .gl carried): bash scripts/device/gpu-smoke.sh [scales...]
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
rm -rf /tmp/vx && cp -r .devcarry/bundle /tmp/vx
vixen=/tmp/vx/vixen
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
"$vixen" run examples/even-odd.logic --output odd --format csv | head -4
"$vixen" run examples/transitive-closure.logic --facts examples/transitive-closure --stats --format csv | head -3
for s in "${@:-9 11 13}"; do
  echo "== tc rmat scale $s: $(wc -l < .devcarry/data/rmat$s/edge.tsv) edges"
  /usr/bin/time -f "wall %e s, max rss %M KiB" "$vixen" run examples/graphs/tc.logic --facts .devcarry/data/rmat$s --stats --output-dir /tmp/out$s
  wc -l < /tmp/out$s/path.csv
done
