"""Grounded answers (temperature 0) from a memory packet, citing the unit ids they use."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..llm.base import LLM
from ..models import CallRecord
from ..llm.prompts import load_prompt

NOT_MENTIONED = "Not mentioned"


class AnswerReply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str = Field(min_length=1, max_length=600)
    cited_unit_ids: list[str] = Field(max_length=20)


def reply_model(unit_keys: list[str], max_citations: int = 20) -> type[AnswerReply]:
    """Citations may only name units in the packet, at most ``max_citations`` of them (setting
    ``answer_max_citations``): the answer is written before its citations, so the bound shortens
    only the list, which the 1.5B fills with most of the packet (11 ids, ~45 tokens, for "3 years")."""
    if not unit_keys:
        return create_model(
            "AnswerReply", __base__=AnswerReply, cited_unit_ids=(list[Literal["none"]], Field(..., max_length=1))
        )
    return create_model(
        "AnswerReply",
        __base__=AnswerReply,
        cited_unit_ids=(list[Literal[tuple(unit_keys)]], Field(..., max_length=max_citations)),
    )  # type: ignore[valid-type]


def answer(
    llm: LLM,
    question: str,
    packet_text: str,
    unit_ids: list[int],
    temperature: float,
    max_tokens: int,
    max_citations: int = 20,
) -> tuple[str, list[int], CallRecord]:
    messages = load_prompt("answer").messages(packet=packet_text, question=question)
    reply, call = llm.structured(
        "answer",
        messages,
        reply_model([f"m{i}" for i in unit_ids], max_citations),
        temperature=temperature,
        max_tokens=max_tokens,
    )
    cited = [int(k[1:]) for k in dict.fromkeys(reply.cited_unit_ids) if k != "none"]
    return reply.answer.strip(), cited, call
