#!/usr/bin/env bash
# Multi-GPU feasibility on a two-GPU machine (measure only): which GPU a Dawn process opens, how to put a process on
# GPU 1, host<->device copy rates per GPU, and the operator bench on both GPUs at once against both on GPU 0.
# Usage (repo root, .devcarry/bundle and .gl carried, as root): bash scripts/device/multi-gpu.sh
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
rm -rf /tmp/vx && cp -r .devcarry/bundle /tmp/vx && /tmp/vx/vixen --version
export DAWN_NODE=/tmp/vx/dawn.node; probe="/tmp/vx/node scripts/device/multi-gpu-probe.mjs"
nvidia-smi -L
# dawn.node opens the first adapter whose name matches; identical cards share a name, so hide GPU 0's device node.
gpu1() { unshare -m bash -c 'mount --bind /dev/null /dev/nvidia0 && exec "$@"' _ "$@"; }
smi() { for _ in 1 2 3 4 5; do sleep 0.6; echo "   memory per GPU: $(nvidia-smi --query-gpu=index,memory.used --format=csv,noheader | tr '\n' ';')"; done; }
echo "== adapters Dawn lists"; $probe list
for e in "" CUDA_VISIBLE_DEVICES=1 NVIDIA_VISIBLE_DEVICES=1; do
  echo "== a process holding 4 GiB, environment [$e]"; (env $e PROBE_ENV="$e" timeout 60 $probe hold 4) & smi; wait
done
echo "== two Dawn instances in one process, the second after CUDA_VISIBLE_DEVICES=1"
(SECOND_ENV=CUDA_VISIBLE_DEVICES=1 timeout 60 $probe two-instances) & smi; wait
echo "== a process holding 4 GiB with /dev/nvidia0 hidden"; (gpu1 timeout 60 $probe hold 4) & smi; wait
echo "== host<->device copies: GPU 0, GPU 1, both at once"
timeout 60 $probe copies; PROBE_ENV=gpu1 gpu1 timeout 60 $probe copies
(timeout 60 $probe copies) & (PROBE_ENV=gpu1 gpu1 timeout 60 $probe copies) & wait
bench=(/tmp/vx/vixen bench operators --sizes 26 --operators sort,mergeJoin,hashProbe)
echo "== operator bench alone on GPU 0"; "${bench[@]}" 2>&1 | tail -8
echo "== operator bench on GPU 0 and GPU 1 at once"
("${bench[@]}" > /tmp/g0.txt 2>&1) & (gpu1 "${bench[@]}" > /tmp/g1.txt 2>&1) & wait; tail -8 /tmp/g0.txt; tail -8 /tmp/g1.txt
echo "== operator bench twice at once on GPU 0"
("${bench[@]}" > /tmp/c0.txt 2>&1) & ("${bench[@]}" > /tmp/c1.txt 2>&1) & wait; tail -8 /tmp/c0.txt; tail -8 /tmp/c1.txt
