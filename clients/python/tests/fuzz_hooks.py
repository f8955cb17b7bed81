"""Schemathesis hooks for test_fuzz.py: a check that no answer carries a stack trace.

Loaded by the `st` process through SCHEMATHESIS_HOOKS=fuzz_hooks (with this directory on PYTHONPATH).
"""

from __future__ import annotations

import re

import schemathesis

# Node ("    at fn (file.ts:1:2)", "node:internal/..."), Python tracebacks and source paths with line numbers.
STACK_TRACE = re.compile(
    r"\n\s+at \S.*\(?[^\s()]+:\d+:\d+\)?|node:internal/|Traceback \(most recent call last\)|/src/\S+\.[jt]s:\d+"
)


@schemathesis.check
def no_stack_trace(ctx, response, case):
    """Fails when a response body (or an SSE frame) shows a stack trace or a source location."""
    text = response.text if isinstance(response.text, str) else ""
    match = STACK_TRACE.search(text)
    if match:
        raise AssertionError(f"The response carries a stack trace: {text[max(0, match.start() - 200):match.end() + 200]!r}")
    return None
