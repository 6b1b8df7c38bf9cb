"""OpenTelemetry spans of an investigation run the way ``socbot serve`` runs it
(``bot.observe.runlog.logged_run``): a root span with a child per model call and per tool call,
GenAI semantic-convention attributes, nothing of the alert or the tools' data; and no
span at all when tracing is off. Spans go to the SDK's in-memory exporter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agent.engine import Request
from alerts.parse import parse_alert
from bot.observe import tracing
from bot.observe.runlog import logged_run
from cli.runtime import open_runtime
from config.settings import Settings, TracingSettings
from core.events import NullSink
from tests.cli.test_show_trace import model_with_a_failing_tool

ALERT = Path(__file__).resolve().parents[2] / "fixtures" / "alerts" / "leveret-scc.json"


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    spans = InMemorySpanExporter()
    tracing.configure_tracing(TracingSettings(service_name="socbot-test"), exporter=spans)
    yield spans
    tracing.configure_tracing(TracingSettings())  # off again


async def investigate(tmp_path: Path) -> str:
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}")
    alert = parse_alert(json.loads(ALERT.read_text()))
    async with open_runtime(settings, backend=model_with_a_failing_tool()) as rt:
        outcome = await logged_run(
            rt.engine, Request("C1:1.2", "Investigate this alert", alert=alert), NullSink()
        )
    return outcome.status


async def test_spans_of_an_investigation(tmp_path: Path, exporter: InMemorySpanExporter) -> None:
    assert await investigate(tmp_path) == "concluded"
    spans = exporter.get_finished_spans()
    [root] = [s for s in spans if s.name == "invoke_agent socbot"]
    children = [s for s in spans if s is not root]
    assert children and all(s.parent is not None and s.parent.span_id ==
                            root.context.span_id for s in children)  # fmt: skip
    assert root.attributes is not None and root.attributes["socbot.source"] == "scc"
    assert root.resource.attributes["service.name"] == "socbot-test"
    chats = [s for s in children if s.name.startswith("chat ")]
    stages = {str(s.attributes["socbot.stage"]) for s in chats if s.attributes}
    assert {"planner", "step", "critic"} <= stages
    assert any(stage.startswith("concluder") for stage in stages)
    planner = next(s for s in chats if s.attributes and s.attributes["socbot.stage"] == "planner")
    assert planner.attributes is not None
    assert planner.attributes["gen_ai.operation.name"] == "chat"
    assert planner.attributes["gen_ai.provider.name"] == "gcp.gemini"
    assert planner.attributes["gen_ai.usage.input_tokens"] > 0
    tools = [s for s in children if s.name == "execute_tool search_past_alerts"]
    assert sorted(s.status.is_ok for s in tools) == [False, True]  # one refused, one ok
    text = json.dumps([dict(s.attributes or {}) for s in spans], default=str)
    assert "185.220.101.42" not in text and "Tor" not in text  # no alert or tool data


async def test_no_spans_when_tracing_is_off(tmp_path: Path, exporter: InMemorySpanExporter) -> None:
    assert tracing.configure_tracing(TracingSettings()) is tracing.NO_TRACING  # turned off
    assert await investigate(tmp_path) == "concluded"
    assert exporter.get_finished_spans() == ()
