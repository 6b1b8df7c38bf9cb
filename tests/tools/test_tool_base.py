"""The tool layer: declarations from signatures, dispatch, errors as data, truncation."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Annotated, Any

import pytest
from google.genai import types
from pydantic import Field

from agent.executor import ToolRunner
from agent.model.fence import Fence
from core.events import STORED_RESULT_CHARS, NullSink, ToolCalled
from tests.fakes.sink import EventSink
from tools.base import Budget, RunContext, Tool, ToolError, ToolRegistry, ToolResult
from tools.results import truncate


class Greeter:
    def __init__(self, greeting: str) -> None:
        self.greeting = greeting


async def greet(
    ctx: RunContext[Greeter],
    name: Annotated[str, Field(description="who to greet")],
    times: int = 1,
) -> dict[str, Any]:
    """Greet someone.

    This second paragraph is for developers, not the model.
    """
    return {"text": " ".join([f"{ctx.deps.greeting} {name}"] * times), "inv": ctx.investigation_id}


async def not_found(ctx: RunContext[None], key: str) -> dict[str, Any]:
    """Always fails the way a lookup does."""
    raise ToolError(f"no record for {key!r}")


async def crash(ctx: RunContext[None]) -> dict[str, Any]:
    """A tool with a bug."""
    raise ZeroDivisionError


async def big(ctx: RunContext[None], n: int) -> dict[str, Any]:
    """Returns many rows."""
    return {"rows": [{"i": i, "text": "x" * 50} for i in range(n)]}


@pytest.fixture
def registry() -> ToolRegistry:
    reg = ToolRegistry(result_chars=1000)
    reg.add(Tool(greet, Greeter("hello")))
    reg.add(Tool(not_found))
    reg.add(Tool(crash))
    reg.add(Tool(big))
    return reg


async def dispatch(
    reg: ToolRegistry, name: str, args: dict[str, Any], allowed: Any = None
) -> ToolResult:
    return await reg.dispatch(
        name, args, allowed=allowed or reg.names(), investigation_id="inv1", budget=Budget()
    )


def test_declaration_comes_from_signature_without_injected_context() -> None:
    decl = Tool(greet, Greeter("hi")).declaration()
    assert decl.name == "greet"
    assert decl.description == "Greet someone."
    assert decl.parameters_json_schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "who to greet"},
            "times": {"type": "integer", "default": 1},
        },
        "required": ["name"],
    }


def test_tool_definition_errors_are_programmer_errors() -> None:
    async def undocumented(ctx: RunContext[None]) -> None:
        return None

    async def no_ctx(x: int) -> None:
        """Doc."""

    def sync(ctx: RunContext[None]) -> None:
        """Doc."""

    for fn in (undocumented, no_ctx, sync):
        with pytest.raises(TypeError):
            Tool(fn)  # type: ignore[arg-type]


async def test_dispatch_injects_deps_and_validates(registry: ToolRegistry) -> None:
    ok = await dispatch(registry, "greet", {"name": "ana", "times": 2})
    assert ok.ok and ok.data == {"text": "hello ana hello ana", "inv": "inv1"}
    bad = await dispatch(registry, "greet", {"name": "ana", "sql": "x"})
    assert not bad.ok and bad.data["error"].startswith("invalid arguments: sql")


@pytest.mark.parametrize(
    ("name", "allowed", "error"),
    [
        ("not_found", None, "no record for 'k'"),
        ("crash", None, "tool failed unexpectedly (ZeroDivisionError)"),
        ("greet", ["big"], "tool 'greet' is not available in this step"),
        ("missing", None, "tool 'missing' is not available in this step"),
    ],
)
async def test_failures_return_as_data(
    registry: ToolRegistry, name: str, allowed: list[str] | None, error: str
) -> None:
    args = {"key": "k"} if name == "not_found" else ({"name": "a"} if name == "greet" else {})
    result = await dispatch(registry, name, args, allowed)
    assert not result.ok and result.data == {"error": error}


async def test_cancellation_propagates() -> None:
    async def slow(ctx: RunContext[None]) -> dict[str, Any]:
        """Sleeps."""
        await asyncio.sleep(10)
        return {}

    reg = ToolRegistry()
    reg.add(Tool(slow))
    task = asyncio.create_task(dispatch(reg, "slow", {}))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_tool_past_the_step_deadline_is_stopped_and_answered_as_data() -> None:
    seen: list[float] = []

    async def slow(ctx: RunContext[None]) -> dict[str, Any]:
        """Sleeps past any deadline (an intel lookup that hangs)."""
        seen.append(ctx.time_left(60.0))
        await asyncio.sleep(60)
        return {}

    reg = ToolRegistry()
    reg.add(Tool(slow))
    started = time.monotonic()
    result = await reg.dispatch(
        "slow", {}, allowed=["slow"], investigation_id="i", budget=Budget(),
        deadline=started + 0.5,  # the tool starts well before it, even on a loaded machine
    )  # fmt: skip
    assert time.monotonic() - started < 10.0  # cut at the deadline, not the tool's 60 s
    assert not result.ok and "did not finish within the step's remaining" in result.data["error"]
    assert 0 < seen[0] <= 0.5  # the tool saw how long it had
    late = await reg.dispatch(
        "slow", {}, allowed=["slow"], investigation_id="i", budget=Budget(),
        deadline=time.monotonic() - 1,
    )  # fmt: skip
    assert late.data == {"error": "tool 'slow' was not run: the step's deadline has passed"}
    assert len(seen) == 1


async def test_the_step_runner_passes_its_deadline_to_every_call() -> None:
    async def hang(ctx: RunContext[None], host: str) -> dict[str, Any]:
        """Never answers (a past-alert search on a locked database)."""
        await asyncio.sleep(60)
        return {}

    reg = ToolRegistry()
    reg.add(Tool(hang))
    runner = ToolRunner(reg, investigation_id="i", sink=NullSink(), fence=Fence("t0k3n"))
    calls = [types.FunctionCall(id=f"c{i}", name="hang", args={"host": "web-1"}) for i in (1, 2)]
    started = time.monotonic()
    parts = await runner.run(
        calls, allowed=["hang"], step_id="s1", budget_left=5, deadline=started + 0.5
    )  # the calls start well before it, even on a loaded machine
    assert time.monotonic() - started < 10.0  # cut at the deadline, not the tool's 60 s
    for part in parts:
        response = part.function_response.response if part.function_response else None
        assert response is not None and "did not finish" in response["error"]


async def test_large_results_are_truncated_with_flag(registry: ToolRegistry) -> None:
    result = await dispatch(registry, "big", {"n": 500})
    assert result.truncated and result.data["truncated"] is True
    assert len(result.as_json()) <= 1000 and result.chars > 20_000
    assert result.data["rows"][0] == {"i": 0, "text": "x" * 50}
    assert "more items omitted" in result.data["rows"][-1]


async def test_the_trace_keeps_the_result_whole_up_to_its_cap(registry: ToolRegistry) -> None:
    """The model reads 1,000 characters; the trace keeps the JSON as the tool returned it,
    up to STORED_RESULT_CHARS, and counts the whole."""
    sink = EventSink()
    runner = ToolRunner(registry, investigation_id="i", sink=sink, fence=Fence("t0k3n"))
    for n, size in ((500, None), (2_000, STORED_RESULT_CHARS)):
        call = types.FunctionCall(id=f"c{n}", name="big", args={"n": n})
        await runner.run([call], allowed=["big"], step_id="s1", budget_left=5)
        called = sink.events[-1]
        assert isinstance(called, ToolCalled) and called.truncated
        whole = json.dumps(await big(None, n), ensure_ascii=False)  # type: ignore[arg-type]
        assert called.result_chars == len(whole) > 1000
        assert called.result_preview == whole[:size]
    assert len(called.result_preview) == STORED_RESULT_CHARS < called.result_chars


def test_truncate_keeps_small_results_and_clips_huge_strings() -> None:
    small = {"a": 1}
    assert truncate(small, 100) == (small, 8, False)
    cut, size, flag = truncate({"blob": "y" * 10_000}, 600)
    assert flag and size > 10_000 and len(str(cut)) < 700 and "chars omitted" in cut["blob"]


def test_catalogue_text_lists_signatures(registry: ToolRegistry) -> None:
    text = registry.catalogue_text(["greet", "unknown"])
    assert text == "- greet(name: str, times: int): Greet someone."
