#!/usr/bin/env bash
# Golden string/limit cases through the bundled CLI on the device, diffed against expected CSVs, then a 2M-row timing.
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
rm -rf /tmp/vx && cp -r .devcarry/bundle /tmp/vx
vixen=/tmp/vx/vixen
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for c in strings strings-like strings-prefix-suffix strings-substring-length strings-tpch-patterns order-limit-read order-limit agg-sum-count arith-head-negation; do
  d=tests/cases/$c; facts=(); [ -d $d/facts ] && facts=(--facts $d/facts)
  rm -rf /tmp/o; "$vixen" run $d/program.logic "${facts[@]}" --output-dir /tmp/o > /tmp/log 2>&1 || { echo "$c: run failed"; tail -5 /tmp/log; }
  bad=0; for e in $d/expected/*.csv; do cmp -s $e /tmp/o/$(basename $e) || { bad=1; echo "$c: $(basename $e) differs"; diff $e /tmp/o/$(basename $e) | head -5; }; done
  echo "$c: $([ $bad = 0 ] && echo OK || echo MISMATCH)"
done
mkdir -p /tmp/big
awk 'BEGIN{srand(7); split("special requests furiously carefully final deposits pending blithely ironic accounts green",w," ");
  for(i=1;i<=2000000;i++){n=3+int(rand()*8); s=""; for(j=0;j<n;j++) s=s w[1+int(rand()*11)] " "; printf "%d|%s%d|%d-%03d-%03d|\n", i, s, i, 10+int(rand()*25), int(rand()*1000), int(rand()*1000)}}' > /tmp/big/cust.tbl
cat > /tmp/big.logic <<'L'
cust(k, c, ph) -> int32(k), string(c), string(ph).
q13[] = n <- agg<<n = count()>> cust(k, c, _), !string:like(c, "%special%requests%").
green[] = n <- agg<<n = count()>> cust(k, c, _), string:like(c, "%green%").
perCode[cc] = n <- agg<<n = count()>> cust(_, _, ph), string:substring[ph, 1, 2] = cc.
longest[] = m <- agg<<m = max(n)>> cust(_, c, _), string:length[c] = n.
L
/usr/bin/time -f "wall %e s, max rss %M KiB" "$vixen" run /tmp/big.logic --facts /tmp/big --stats 2>&1 | tail -40
