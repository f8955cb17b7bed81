"""The whole journey: a knowledge base from a PDF and a DOCX, parsed, searched, and used by a chat
assistant whose prompt has a custom variable, answered in a streamed conversation."""

from __future__ import annotations

import re

from cairn import CairnError, Message
from files import make_docx, make_pdf
from support import unique

PDF_LINES = [
    "Harbour Lights Field Guide.",
    "The Granite Point lighthouse was built in 1871 from local grey granite.",
    "Its keeper climbs ninety-two steps to trim the lamp wick every evening.",
]
DOCX_PARAGRAPHS = [
    "Bakery Handbook.",
    "Our sourdough starter is fed twice a day with rye flour and lukewarm water.",
    "Loaves proof overnight in the cold room before baking at dawn.",
]


def test_journey_from_files_to_a_streamed_answer_with_a_custom_variable(client, llm_id, fake_llm):
    kb = client.create_dataset(name=unique("journey"))
    chat = None
    try:
        # Upload a PDF and a DOCX.
        pdf, docx = kb.upload_documents([
            {"display_name": "harbour-lights.pdf", "blob": make_pdf(PDF_LINES)},
            {"display_name": "bakery-handbook.docx", "blob": make_docx(DOCX_PARAGRAPHS)},
        ])
        assert (pdf.name, docx.name) == ("harbour-lights.pdf", "bakery-handbook.docx")
        assert pdf.run == docx.run == "UNSTART"

        # Parse both and wait: each reports DONE with chunks and tokens.
        result = kb.parse_documents([pdf.id, docx.id])
        assert [r[0] for r in result] == [pdf.id, docx.id]
        for _, status, chunk_count, token_count in result:
            assert status == "DONE"
            assert chunk_count > 0 and token_count > 0
        assert "ninety-two steps" in " ".join(c.content for c in pdf.list_chunks())
        assert "rye flour" in " ".join(c.content for c in docx.list_chunks())

        # Retrieval finds each file's text for a question about it.
        lighthouse = client.retrieve(question="How many steps does the lighthouse keeper climb?", dataset_ids=[kb.id])
        assert lighthouse[0].document_id == pdf.id
        assert "ninety-two steps" in lighthouse[0].content
        assert 0 <= lighthouse[0].similarity <= 1
        bread = client.retrieve(question="What is the sourdough starter fed with?", dataset_ids=[kb.id])
        assert bread[0].document_id == docx.id

        # A chat assistant on the knowledge base, with a custom variable next to {knowledge}.
        chat = client.create_chat(
            name=unique("guide"),
            dataset_ids=[kb.id],
            llm_id=llm_id,
            prompt_config={
                "system": "You answer questions for {audience}. Use this knowledge:\n{knowledge}",
                "parameters": [{"key": "knowledge", "optional": False}, {"key": "audience", "optional": False}],
            },
        )
        assert chat.dataset_ids == [kb.id]
        session = chat.create_session(name="Visitor questions")
        assert session.name == "Visitor questions"

        # Ask, streamed, passing the variable as a keyword argument.
        question = "How many steps does the lighthouse keeper climb each evening?"
        messages = list(session.ask(question, stream=True, audience="school children"))
        assert messages and all(isinstance(m, Message) for m in messages)
        for before, after in zip(messages, messages[1:]):
            assert after.content.startswith(before.content)
        final = messages[-1]
        # quote is on by default, so citation marks like " [ID:0]" may be inserted into the answer.
        assert re.sub(r"\s*\[ID:\d+\]", "", final.content) == f"Echo: {question}"
        assert final.session_id == session.id
        # The final message carries the references: chunks of the PDF.
        assert final.reference, "the final streamed message carries the reference chunks"
        assert pdf.id in {r["document_id"] for r in final.reference}
        for ref in final.reference:
            assert ref["id"] and ref["content"]
            assert ref["dataset_id"] == kb.id
            assert 0 <= ref["similarity"] <= 1

        # The model saw the variable's value and the retrieved knowledge in its prompt.
        prompt = " ".join(str(m["content"]) for m in fake_llm.wait_for_call(question))
        assert "school children" in prompt
        assert "ninety-two steps" in prompt

        # Without the variable the call fails.
        try:
            session.ask(question, stream=False)
        except CairnError as e:
            assert e.code == 400
        else:
            raise AssertionError("asking without the mandatory variable must fail")
    finally:
        if chat is not None:
            client.delete_chats(ids=[chat.id])
        client.delete_datasets(ids=[kb.id])
