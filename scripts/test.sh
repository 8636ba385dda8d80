#!/usr/bin/env bash
# The project's test command (README, .ci/run): type-check, run every vitest suite on real WebGPU,
# then print one closing line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
# The browser test needs chromium: under CI a failed install fails the run (the test must run there).
if [[ -n "${CI:-}" ]]; then bash scripts/install-chromium.sh || exit 1; else bash scripts/install-chromium.sh || true; fi
pnpm typecheck || exit 1
results=$(mktemp)
pnpm exec vitest run --reporter=default --reporter=json --outputFile.json="$results" "$@"
rc=$?
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
' "$results" 2>/dev/null || echo "tests: 0 passed, 1 failed"
rm -f "$results"
exit $rc
