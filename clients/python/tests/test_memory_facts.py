"""Facts stay current through the client (issue 42 part 3): correct and retract an extracted item; search and
recent leave items no longer current out unless ``include_invalid``; nothing is deleted."""

from __future__ import annotations

import json

import pytest

from cairn import CairnError
from support import unique
from test_memories import account, add, make_memory, models, rag, wait_task  # noqa: F401  (fixtures)


def test_correct_then_retract_keeps_the_history_and_search_returns_only_current_items(rag, make_memory, fake_llm):
    m = make_memory(["raw", "semantic"])
    word = unique("boat").replace("-", "")
    fake_llm.script(word, json.dumps({"semantic": [{"content": f"The user's boat {word} is red."}], "episodic": [], "procedural": []}))
    try:
        raw = add(rag, m, f"My boat {word} is red.")
        done = wait_task(m, raw)
    finally:
        fake_llm.unscript(word)
    [item] = done["extract"]

    fixed = m.correct_message(item["message_id"], f"The user's boat {word} is blue.")
    assert fixed["replaces"] == item["message_id"] and fixed["content"].endswith("is blue.")
    old = m.get_message_content(item["message_id"])
    assert old["replaced_by"] == fixed["message_id"] and old["invalid_at"] is not None

    found = [x["content"] for x in rag.search_message(f"boat {word}", [m.id], similarity_threshold=0) if x["message_type"] == "semantic"]
    assert found == [f"The user's boat {word} is blue."]
    history = {x["message_id"] for x in rag.search_message(f"boat {word}", [m.id], similarity_threshold=0, include_invalid=True)}
    assert {item["message_id"], fixed["message_id"]} <= history

    retracted = m.retract_message(fixed["message_id"])
    assert retracted["replaced_by"] is None and retracted["invalid_at"] is not None
    recent = {x["message_id"] for x in rag.get_recent_messages([m.id], limit=100)}
    assert fixed["message_id"] not in recent and raw in recent
    assert fixed["message_id"] in {x["message_id"] for x in rag.get_recent_messages([m.id], limit=100, include_invalid=True)}

    with pytest.raises(CairnError) as err:
        m.retract_message(fixed["message_id"])
    assert err.value.code == 400 and "no longer current" in str(err.value)
    with pytest.raises(CairnError) as err:
        m.correct_message(raw, "The user said something else.")
    assert err.value.code == 400 and "raw message" in str(err.value)
