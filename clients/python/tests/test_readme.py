"""The README's examples run as written against a live Cairn, offline (no provider configured)."""

from __future__ import annotations

import contextlib
import io
import re
import time
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"


def python_block(containing: str) -> str:
    """The README's ```python block that contains `containing`."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    found = [b for b in blocks if containing in b]
    assert len(found) == 1, f"one README python block with {containing!r}, found {len(found)}"
    return found[0]


def test_the_readme_memories_example_runs_offline_on_the_built_in_models(fresh_client):
    """A new user with no provider: the memory is created, the turn found by search, and extracted."""
    out = io.StringIO()
    scope = {"client": fresh_client}
    with contextlib.redirect_stdout(out):
        exec(python_block("create_memory"), scope)  # noqa: S102 - the README's own code
    printed = out.getvalue()
    assert "I am walking the Cairngorms in May." in printed, printed
    memory = scope["memory"]
    deadline = time.time() + 300
    while time.time() < deadline:
        message = memory.list_memory_messages()["messages"]["message_list"][0]
        if message["task"]["progress"] in (1, -1):
            break
        time.sleep(1)
    assert message["task"]["progress"] == 1, message["task"]
    assert message["task"]["progress_msg"].startswith("Done:"), message["task"]
