#!/usr/bin/env bash
# On the lent GPU (no Node): one `vixen bench tpch` command on several bundles, one after another on one data set,
# with the GPU's clocks logged beside them, then a table of each query's ms and SM clock per variant.
# Why (issue #43): the final SF 10 run of session 7 was 2-4x slower than session 6's on nine queries with the same
# kernel IR and dispatch counts; only an A/B on one machine, clocks logged, tells a tree from the warm-up.
# Usage (repo root; .gl, .devcarry/bundle and the variants carried):
#   bash scripts/device/tpch-ab.sh VARIANT[@OPTIONS] ... -- BENCH-TPCH-OPTIONS
#   VARIANT: base (.devcarry/bundle) or NAME (.devcarry/NAME.tgz or .devcarry/NAME/: the *.mjs and vixen of a
#   `vixen bundle`, as .devcarry/build-variant.sh makes them); @OPTIONS: more bench options for that run alone,
#   commas for spaces (new@--warm-ms,2000). The first variant generates the data into $DATA (a bundle whose --data
#   generates into an empty folder: this tree's or later), the others read it.
#   Example: bash scripts/device/tpch-ab.sh new old new@--warm-ms,2000 -- --sf 10 --queries 3,5,7,9,18,19,21 --runs 5 --warm-ms 300
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
[ -f .devcarry/nvcache.tgz ] && tar -xzf .devcarry/nvcache.tgz -C ~
out=${OUT:-/tmp/vx-out}; mkdir -p "$out"
variants=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do variants+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
sf=$(echo "$@" | sed -n 's/.*--sf[ =]\([0-9.]*\).*/\1/p')
data=${DATA:-/tmp/tpch-sf${sf:-x}}
rm -rf /tmp/vx && cp -r .devcarry/bundle /tmp/vx && /tmp/vx/vixen --version >/dev/null 2>&1
prep() {
  local n=$1 d=/tmp/vx-$1
  [ -d "$d" ] && return
  mkdir -p "$d"
  if [ "$n" = base ]; then cp -r /tmp/vx/. "$d/"; return; fi
  cp /tmp/vx/node /tmp/vx/dawn.node /tmp/vx/libduckdb.so /tmp/vx/duckdb.node "$d/"
  if [ -f ".devcarry/$n.tgz" ]; then tar -xzf ".devcarry/$n.tgz" -C "$d"; else cp ".devcarry/$n"/* "$d/"; fi
}
# Clocks every 100 ms, and each run's start and end on the same clock (nvidia-smi's timestamps are local time).
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu --format=csv,noheader -lms 100 > "$out/clocks.csv" 2>/dev/null &
smi=$!
k=0
for v in "${variants[@]}"; do
  k=$((k + 1))
  name=${v%%@*}
  extra=()
  [ "$v" != "$name" ] && IFS=, read -r -a extra <<< "${v#*@}"
  label="$k-$name"
  prep "$name"
  echo "### [$label] bench tpch $* ${extra[*]+${extra[*]}} --data $data"
  echo "$label start $(date '+%Y/%m/%d %H:%M:%S.%3N')" >> "$out/marks.txt"
  timeout "${T:-300}" "/tmp/vx-$name/vixen" bench tpch "$@" ${extra[@]+"${extra[@]}"} --data "$data" --json "$out/$label.json" 2>&1 | grep -v "^Warning: maxDyn" | tee "$out/$label.txt" | tail -"${TAILN:-30}"
  echo "$label end $(date '+%Y/%m/%d %H:%M:%S.%3N')" >> "$out/marks.txt"
done
kill "$smi" 2>/dev/null
# Per query, each variant's ms; per variant, its SM clocks (MHz: min / median / max) between its marks.
/tmp/vx/node - "$out" <<'EOF'
const fs = require('fs');
const out = process.argv[2];
const marks = fs.readFileSync(`${out}/marks.txt`, 'utf8').trim().split('\n').map((l) => l.split(' '));
const time = (d, t) => Date.parse(`${d.replace(/\//g, '-')}T${t}`);
const clocks = fs.existsSync(`${out}/clocks.csv`)
  ? fs.readFileSync(`${out}/clocks.csv`, 'utf8').trim().split('\n').map((l) => l.split(', ')).map(([ts, , sm]) => ({ t: time(...ts.split(' ')), sm: parseFloat(sm) }))
  : [];
const labels = [...new Set(marks.map((m) => m[0]))];
const reports = labels.map((l) => (fs.existsSync(`${out}/${l}.json`) ? JSON.parse(fs.readFileSync(`${out}/${l}.json`, 'utf8')) : { queries: [] }));
const queries = [...new Set(reports.flatMap((r) => r.queries.map((q) => q.query)))];
console.log(['query', ...labels].map((s) => String(s).padStart(14)).join(''));
for (const q of queries) console.log([`Q${q}`, ...reports.map((r) => r.queries.find((x) => x.query === q)?.vixenMs?.toFixed(2) ?? '-')].map((s) => String(s).padStart(14)).join(''));
for (const l of labels) {
  const [s, e] = ['start', 'end'].map((w) => marks.find((m) => m[0] === l && m[1] === w)).map((m) => (m ? time(m[2], m[3]) : NaN));
  const sm = clocks.filter((c) => c.t >= s && c.t <= e && Number.isFinite(c.sm)).map((c) => c.sm).sort((a, b) => a - b);
  console.log(`${l}: SM clock MHz ${sm.length ? `${sm[0]} / ${sm[sm.length >> 1]} / ${sm[sm.length - 1]} over ${sm.length} samples` : 'not logged'}`);
}
EOF
