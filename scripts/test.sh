#!/usr/bin/env bash
# Runs the TypeScript suite (mocha) on the embedded profile, its unit tests beside its integration tests,
# then the scale-out profile's conformance run (PostgreSQL + Milvus + S3, docs/scale-out.md "Testing") with
# the Python client's suite (pytest) beside it, and the static checks (tsc, knip) beside all of it; prints one
# closing line "N passed, N failed" over everything (failed static checks count as one failure), each failure named on a
# "FAILED" line above it (CI keeps only the output's tail). Exits non-zero when
# anything failed. The parts that run side by side each start their own servers. The integration tests wait
# on servers more than they compute (~40% of 2 cores idle alone), so the unit tests (~4 minutes of one core)
# fit beside them, as pytest fits beside the scale-out run.
# With arguments, runs only mocha on those files (on the profile CAIRN_TEST_PROFILE names) and pytest.
set -uo pipefail
cd "$(dirname "$0")/.."
counts=$(mktemp -d)
trap 'rm -rf "$counts"' EXIT

# The integration files run a second time on the scale-out profile: together they reach every storage
# path; chosen and timed in docs/scale-out.md ("Testing"). Keep the two lists in step.
SCALE_OUT_CONFORMANCE=(
  test/integration/datasets.test.ts
  test/integration/documents.test.ts
  test/integration/chunks.test.ts
  test/integration/retrieval.test.ts
  test/integration/chats.test.ts
  test/integration/chat-completions.test.ts
  test/integration/agents.test.ts
  test/integration/memories.test.ts
  test/integration/ragflow-metadata.test.ts
  test/integration/auth.test.ts
  test/integration/agents-memory.test.ts
)

full=true
if [ $# -gt 0 ]; then
  full=false
else
  set -- 'test/integration/**/*.test.ts'
fi

tsc_pid=
unit_pid=
if $full; then
  # The static checks: the typecheck (with noUnusedLocals/Parameters), the console's, and knip (unused
  # files, exports and dependencies: knip.jsonc). Any finding fails the run.
  (rc=0
   npx tsc --noEmit > "$counts/tsc.log" 2>&1 || rc=1
   npx tsc -p web --noEmit >> "$counts/tsc.log" 2>&1 || rc=1
   npx knip --no-progress >> "$counts/tsc.log" 2>&1 || rc=1
   echo $rc > "$counts/tsc.rc") &
  tsc_pid=$!
  CAIRN_TEST_COUNTS="$counts/mocha-unit.json" npx mocha --reporter test/reporter.cjs 'test/unit/**/*.test.ts' > "$counts/unit.log" 2>&1 &
  unit_pid=$!
fi

CAIRN_TEST_COUNTS="$counts/mocha.json" npx mocha --reporter test/reporter.cjs "$@"
mocha_rc=$?

unit_rc=0
if [ -n "$unit_pid" ]; then
  wait "$unit_pid"
  unit_rc=$?
  echo
  echo "== unit tests (mocha: test/unit, run beside the integration tests) =="
  cat "$counts/unit.log"
fi

py_pid=
if [ -d clients/python/tests ] && [ -z "${CAIRN_TEST_SKIP_PYTEST:-}" ]; then
  .venv/bin/python -m pytest clients/python/tests -q -p no:cacheprovider --junitxml="$counts/pytest.xml" > "$counts/pytest.log" 2>&1 &
  py_pid=$!
fi

scale_rc=0
if $full && [ -z "${CAIRN_TEST_SKIP_SCALE_OUT:-}" ]; then
  echo
  echo "== scale-out conformance run: CAIRN_TEST_PROFILE=scale-out, ${#SCALE_OUT_CONFORMANCE[@]} files (pytest runs beside it) =="
  CAIRN_TEST_PROFILE=scale-out CAIRN_TEST_COUNTS="$counts/mocha-scale-out.json" npx mocha --reporter test/reporter.cjs "${SCALE_OUT_CONFORMANCE[@]}"
  scale_rc=$?
fi

py_rc=0
if [ -n "$py_pid" ]; then
  wait "$py_pid"
  py_rc=$?
  echo
  echo "== pytest: clients/python/tests =="
  cat "$counts/pytest.log"
fi

tsc_rc=0
if [ -n "$tsc_pid" ]; then
  wait "$tsc_pid"
  tsc_rc=$(cat "$counts/tsc.rc" 2>/dev/null || echo 1)
  echo
  if [ "$tsc_rc" = 0 ]; then echo "== static checks (tsc, tsc -p web, knip): passed =="; else echo "== static checks (tsc, tsc -p web, knip): FAILED =="; cat "$counts/tsc.log"; fi
fi

.venv/bin/python - "$counts" "$mocha_rc" "$unit_rc" "$scale_rc" "$py_rc" "$tsc_rc" <<'PY'
import json, os, sys
import xml.etree.ElementTree as ET
d, mocha_rc, unit_rc, scale_rc, py_rc, tsc_rc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
passed = failed = skipped = 0
named = []  # what failed, printed above the closing line
if tsc_rc != 0:
    failed += 1  # the static checks
    named.append("static checks (tsc, tsc -p web, knip): see their output above")
# Each mocha run writes its own counts.
for name, rc in (("mocha.json", mocha_rc), ("mocha-unit.json", unit_rc), ("mocha-scale-out.json", scale_rc)):
    m = os.path.join(d, name)
    if os.path.exists(m):
        c = json.load(open(m))
        passed += c["passes"]; failed += c["failures"]; skipped += c["pending"]
        named += [f"{name[:-5]}: {f['file']}: {f['title']}: {f['message']}" for f in c.get("failed", [])]
    elif rc != 0:
        failed += 1  # mocha died before reporting
        named.append(f"{name[:-5]}: mocha exited {rc} before reporting")
x = os.path.join(d, "pytest.xml")
if os.path.exists(x):
    report = ET.parse(x).getroot()
    for s in report.iter("testsuite"):
        t, f, e, sk = (int(s.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
        passed += t - f - e - sk; failed += f + e; skipped += sk
    for case in report.iter("testcase"):
        for bad in list(case.findall("failure")) + list(case.findall("error")):
            first = (bad.get("message") or "").strip().split("\n")[0][:300]
            named.append(f"pytest: {case.get('classname')}::{case.get('name')}: {first}")
elif py_rc not in (0, 5):
    failed += 1  # pytest died before reporting
    named.append(f"pytest exited {py_rc} before reporting")
print()
for line in named:
    print(f"FAILED {line}")
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
PY
