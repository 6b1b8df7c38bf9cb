"""The ack path and the event loop: nothing slow or one-off on the way to HTTP 200.

Target 5 of the benchmarks (``bench/bench_slack.py``): the ack must not wait for the
database, and the first investigations after start-up must not pay one-off costs
(template compilation, schema generation) on the shared event loop.
"""

from __future__ import annotations

import asyncio
import gc
import shutil
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from google.genai import types
from pydantic import BaseModel

from agent.model.fence import Fence, user_turn
from agent.model.gateway import CallContext, LLMGateway
from agent.model.genai_types import GENAI_TYPES
from agent.prompts import PROMPTS_DIR, Prompts
from bot.events.middleware import Deduper
from config.settings import GeminiSettings
from core.events import FanOut
from store.db.engine import Database
from store.slack import SlackStore
from tests.fakes.model import ScriptedModel, json_response
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import RecordingInvestigate, SlackHarness, load, make_settings
from tools.base import RunContext, Tool, ToolRegistry


@pytest.fixture
async def harness(investigate: RecordingInvestigate, tmp_path: Path) -> AsyncIterator[SlackHarness]:
    async with (
        FakeSlackAPI() as fake,
        SlackHarness(fake, make_settings(tmp_path, fake.base_url), investigate) as h,
    ):
        yield h


async def test_the_ack_does_not_wait_for_a_busy_database(
    harness: SlackHarness, investigate: RecordingInvestigate, tmp_path: Path
) -> None:
    # Another writer holds SQLite's write lock: no claim can be committed meanwhile.
    blocker = sqlite3.connect(tmp_path / "socbot.db", isolation_level=None, check_same_thread=False)
    try:  # taken from another thread: the app's own short writes (beats, sweeps) finish
        await asyncio.to_thread(blocker.execute, "BEGIN IMMEDIATE")
        retry = load("app_mention_retry.json")
        started = time.monotonic()
        assert (await harness.event(load("app_mention.json")))[0] == 200
        assert (await harness.event(retry["body"], retry["headers"]))[0] == 200
        # acked without waiting for the lock, which the acks would wait for until the
        # blocker's COMMIT below (busy_timeout is 30 s): 10 s is only a loose bound
        assert time.monotonic() - started < 10.0
        assert investigate.calls == []  # the listener is still waiting for its claim
        blocker.execute("COMMIT")
    finally:
        blocker.close()
    await harness.settle()
    assert len(investigate.calls) == 1  # the retry was dropped from memory


async def test_recent_event_ids_are_remembered_in_memory_and_bounded(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 's.db'}")
    await db.create()
    deduper = Deduper(SlackStore(db), recent=2)
    assert [deduper.claim_recent(e) for e in ("Ev1", "Ev1", "Ev2", "Ev3")] == [
        True,
        False,
        True,
        True,
    ]
    assert deduper.claim_recent("Ev1")  # forgotten: the oldest of more than two
    assert not deduper.claim_recent("Ev3")
    assert await deduper.claim_event("Ev1")  # memory is not the persistent claim
    assert not await deduper.claim_event("Ev1")
    await db.close()


def test_prompt_templates_are_compiled_when_prompts_is_built(tmp_path: Path) -> None:
    root = tmp_path / "prompts"
    shutil.copytree(PROMPTS_DIR, root)
    (root / "guardduty").mkdir()
    (root / "guardduty" / "planner.j2").write_text('{% extends "planner.j2" %}')
    prompts = Prompts(root)
    assert {"_stage.j2", "classifier.j2", "step.j2", "guardduty/planner.j2"} <= set(
        prompts.templates
    )
    shutil.rmtree(root)  # rendering reads and compiles nothing any more
    rendered = prompts.render("classifier", data=Fence(), request="hi", history="")
    assert rendered.system.splitlines()[0] == "socbot stage: classifier"
    assert prompts.template_name("planner", "guardduty") == "guardduty/planner.j2"
    assert prompts.template_name("planner", "scc") == "planner.j2"


class Counted(BaseModel):
    """An output schema that counts how often its JSON schema is generated."""

    verdict: str
    generated: ClassVar[int] = 0

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        Counted.generated += 1
        return super().model_json_schema(*args, **kwargs)


async def test_structured_output_schema_is_generated_once_per_class() -> None:
    model = ScriptedModel({"planner": [json_response({"verdict": "a"})] * 3})
    gateway = LLMGateway(model, GeminiSettings())
    ctx = CallContext("inv-1", FanOut(), 100_000, time.monotonic() + 30)
    before = Counted.generated
    for _ in range(3):
        answer = await gateway.generate_structured(
            ctx,
            stage="planner",
            system="socbot stage: planner",
            contents=user_turn("go"),
            schema=Counted,
        )
        assert answer.verdict == "a"
    assert Counted.generated - before <= 1  # 0 when an earlier test generated it
    schemas = [r.config.response_json_schema for r in model.requests]
    assert schemas[0] == schemas[2] == Counted.model_json_schema()
    assert schemas[0] is not schemas[1]  # each call gets its own copy to keep


def test_the_gateway_builds_the_genai_types_it_uses() -> None:
    LLMGateway(ScriptedModel({}), GeminiSettings())
    for name in GENAI_TYPES:  # a renamed type in google-genai would silently stay lazy
        model = getattr(types, name)
        assert issubclass(model, BaseModel) and model.__pydantic_complete__, name


async def lookup_ip(ctx: RunContext[None], ip: str, days: int = 30) -> dict[str, Any]:
    """Reputation of an IP address."""
    return {"ip": ip, "days": days}


def test_tool_declarations_are_generated_at_registration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registry = ToolRegistry()
    registry.add(Tool(lookup_ip))
    params = registry.tools["lookup_ip"].params
    generated: list[type[BaseModel]] = []
    original = params.model_json_schema

    def counting(*args: Any, **kwargs: Any) -> dict[str, Any]:
        generated.append(params)
        return original(*args, **kwargs)

    monkeypatch.setattr(params, "model_json_schema", counting)
    [first] = registry.declarations(["lookup_ip"])
    [second] = registry.declarations(["lookup_ip"])
    assert generated == []  # generated when the tool was built, not per step turn
    assert first.parameters_json_schema == second.parameters_json_schema
    assert first.parameters_json_schema is not second.parameters_json_schema
    schema = first.parameters_json_schema
    assert isinstance(schema, dict)
    assert schema["required"] == ["ip"]
    assert set(schema["properties"]) == {"ip", "days"}
    assert "title" not in schema


async def test_the_heap_is_frozen_while_serving_and_released_on_the_way_out(
    tmp_path: Path,
) -> None:
    assert gc.get_freeze_count() == 0
    async with (
        FakeSlackAPI() as fake,
        SlackHarness(fake, make_settings(tmp_path, fake.base_url), RecordingInvestigate()) as h,
    ):
        assert h.app.heap_frozen
        assert gc.get_freeze_count() > 0  # start-up objects: out of later collections
    assert gc.get_freeze_count() == 0
