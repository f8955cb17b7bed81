"""The README's examples run as written against a live Cairn, offline (no provider configured)."""

from __future__ import annotations

import contextlib
import io
import re
import time
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"
CONNECT = 'client = Client(api_key=open("data/admin-api-key").read().strip(), base_url="http://127.0.0.1:9380")\n'


def section(title: str) -> str:
    """The README's section under `## {title}`, up to the next `## ` heading."""
    text = README.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def wait_extracted(memory, seconds: float = 300) -> dict:
    """The memory's newest message once its extraction task has ended."""
    deadline = time.time() + seconds
    while True:
        message = memory.list_memory_messages()["messages"]["message_list"][0]
        if message["task"]["progress"] in (1, -1) or time.time() > deadline:
            return message
        time.sleep(1)


def test_the_first_hour_runs_start_to_end_offline_on_the_built_in_models(fresh_client):
    """A new user with no provider follows "First hour": every Python block runs, in order, as written
    (only the connection is the test's own workspace), and each step gives what it says."""
    blocks = python_blocks(section("First hour (Python, offline)"))
    assert len(blocks) == 4, f"{len(blocks)} python blocks"
    assert CONNECT in blocks[0], "the first block connects with the admin key, as a user does"
    blocks[0] = blocks[0].replace(CONNECT, "")
    scope = {"client": fresh_client}
    printed = []
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(block, scope)  # noqa: S102 - the README's own code
        printed.append(out.getvalue())

    connect, chat, agent, memory = printed
    assert "'DONE'" in connect and "Hikers use cairns to mark trails." in connect, connect
    assert chat.strip(), "the chat answered"
    assert scope["session"].ask("What marks a trail?", stream=False).reference, "answers cite the dataset"
    assert agent.strip(), "the agent answered"
    assert scope["answer"].reference, "the template retrieved from the dataset"
    assert "I am walking the Cairngorms in May." in memory, memory
    message = wait_extracted(scope["memory"])
    assert message["task"]["progress"] == 1, message["task"]
    assert message["task"]["progress_msg"].startswith("Done:"), message["task"]
