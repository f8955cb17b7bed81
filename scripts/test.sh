#!/usr/bin/env bash
# Runs the TypeScript suite (mocha) and the Python client's suite (pytest), then prints one
# closing line "N passed, N failed" over both. Exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
counts=$(mktemp -d)
trap 'rm -rf "$counts"' EXIT

[ $# -eq 0 ] && set -- 'test/unit/**/*.test.ts' 'test/integration/**/*.test.ts'
CAIRN_TEST_COUNTS="$counts/mocha.json" npx mocha --reporter test/reporter.cjs "$@"
mocha_rc=$?

py_rc=0
if [ -d clients/python/tests ] && [ -z "${CAIRN_SKIP_PYTEST:-}" ]; then
  .venv/bin/python -m pytest clients/python/tests -q -p no:cacheprovider --junitxml="$counts/pytest.xml"
  py_rc=$?
fi

.venv/bin/python - "$counts" "$mocha_rc" "$py_rc" <<'PY'
import json, os, sys
import xml.etree.ElementTree as ET
d, mocha_rc, py_rc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
passed = failed = skipped = 0
m = os.path.join(d, "mocha.json")
if os.path.exists(m):
    c = json.load(open(m))
    passed += c["passes"]; failed += c["failures"]; skipped += c["pending"]
elif mocha_rc != 0:
    failed += 1  # mocha died before reporting
x = os.path.join(d, "pytest.xml")
if os.path.exists(x):
    for s in ET.parse(x).getroot().iter("testsuite"):
        t, f, e, sk = (int(s.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
        passed += t - f - e - sk; failed += f + e; skipped += sk
elif py_rc not in (0, 5):
    failed += 1  # pytest died before reporting
print()
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
PY
