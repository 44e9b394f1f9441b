"""The structured-call contract, driven by a scripted backend."""

from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

from ftamem_core.config import LLMConfig
from ftamem_core.llm import LLMError, LLMUnavailable, OpenAICompatLLM, ScriptedLLM, json_schema, make_llm
from ftamem_core.models import Segment


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    trigger: Literal["topic_change", "unknown"]


class Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[Inner]
    count: int


MESSAGES = [{"role": "user", "content": "segment this please"}]


def test_schema_inlines_refs_and_keeps_enums():
    schema = json_schema(Reply)
    assert "$defs" not in schema and "$ref" not in str(schema)
    assert schema["properties"]["items"]["items"]["properties"]["trigger"]["enum"] == ["topic_change", "unknown"]
    assert schema["additionalProperties"] is False
    segment = json_schema(Segment)
    assert "risk_signal" in segment["properties"]["trigger"]["enum"]


def test_valid_reply_is_parsed_and_recorded():
    calls = []
    llm = ScriptedLLM([{"items": [{"trigger": "topic_change"}], "count": 1}], recorder=calls.append)
    value, record = llm.structured("segmentation", MESSAGES, Reply, case_id="c1")
    assert value.items[0].trigger == "topic_change"
    assert calls == [record] and record.stage == "segmentation" and record.case_id == "c1"
    assert record.ok and record.attempts == 1 and record.prompt_tokens > 0


def test_invalid_then_truncated_then_valid_is_retried():
    llm = ScriptedLLM(
        ["not json at all", ("length", '{"items": [{"trig'), {"items": [], "count": 0}],
        config=LLMConfig(backend="scripted", max_retries=2),
    )
    value, record = llm.structured("extraction", MESSAGES, Reply)
    assert value.count == 0 and record.attempts == 3 and record.ok


def test_unknown_enum_value_is_invalid():
    llm = ScriptedLLM([{"items": [{"trigger": "vibes"}], "count": 1}] * 3)
    with pytest.raises(LLMError, match=r"^linking: no valid output after 3 attempt\(s\); last: output does not match"):
        llm.structured("linking", MESSAGES, Reply)


def test_failure_names_the_stage_and_is_recorded():
    calls = []
    llm = ScriptedLLM([("length", "{")] * 3, recorder=calls.append)
    with pytest.raises(LLMError, match="^extraction: .*truncated at 1024 tokens"):
        llm.structured("extraction", MESSAGES, Reply)
    assert len(calls) == 1 and not calls[0].ok and calls[0].attempts == 3
    assert "truncated" in calls[0].error


def test_text_call():
    llm = ScriptedLLM(["It was in July."])
    text, record = llm.text("answer", MESSAGES, temperature=0.0)
    assert text == "It was in July." and record.stage == "answer"


def test_openai_backend_needs_url_and_reports_unreachable_server():
    with pytest.raises(LLMError, match="needs a base_url"):
        make_llm(LLMConfig(backend="openai"), ".")
    # Port 9 on loopback: nothing listens, the connection is refused at once.
    llm = OpenAICompatLLM(LLMConfig(backend="openai", base_url="http://127.0.0.1:9/v1", model="m",
                                    dialect="json_object", connect_retries=2, timeout=5))
    with pytest.raises(LLMUnavailable, match="^check: cannot reach http://127.0.0.1:9/v1"):
        llm.structured("check", MESSAGES, Reply)
