"""MCP servers as tool sources, against a real server written with the SDK (stdio, HTTP).

Tools are offered as ``<server>__<tool>`` only when allowlisted and declarable; calls
are dispatched by the registry like any tool's (restricted, capped, bounded by the
deadline, failures as data); arguments to an external server pass the egress gate; a
server that crashes or hangs is restarted.
"""

from __future__ import annotations

import time

import pytest

from tests.tools.mcp_support import http_server, started, stdio_spec
from tools.base import Budget, ToolRegistry, ToolResult


async def call(
    registry: ToolRegistry, name: str, deadline: float | None = None, **args: object
) -> ToolResult:
    return await registry.dispatch(
        name,
        dict(args),
        allowed=registry.names(),
        investigation_id="inv-1",
        budget=Budget(),
        deadline=deadline,
    )


async def test_allowlisted_tools_are_offered_and_the_others_say_why() -> None:
    spec = stdio_spec(tools=["lookup_asset", "org_tree", "retired_tool"])
    async with started(spec) as (registry, _):
        assert registry.names() == ["assets__lookup_asset"]
        assert registry.unlisted["assets__echo"] == "not in the server's allowlist"
        assert "assets__echo" not in registry.disabled  # the server's names stay out of prompts
        assert registry.disabled["assets__org_tree"] == (
            "its input schema cannot be declared to Gemini"
        )
        assert "recursive $ref" in registry.details["assets__org_tree"]
        assert "does not offer it" in registry.disabled["assets__retired_tool"]
        declaration = registry.declarations(["assets__lookup_asset"])[0]
        assert declaration.parameters_json_schema == {
            "type": "object",
            "properties": {"host": {"type": "string"}},
            "required": ["host"],
        }
        assert "(MCP server assets, external)" in (declaration.description or "")
        result = await call(registry, "assets__lookup_asset", host="web-01")
    assert result.ok
    assert result.data == {
        "result": {
            "host": "web-01",
            "found": True,
            "owner": "alice@example.com",
            "team": "payments",
            "criticality": "high",
        }
    }


async def test_no_tool_is_offered_without_an_allowlist() -> None:
    async with started(stdio_spec(tools=[])) as (registry, hub):
        assert registry.names() == []
        assert "no tools allowlisted" in registry.unlisted["assets__*"]
        assert hub.connections == {}  # not even started


async def test_a_call_outside_the_steps_tools_is_refused() -> None:
    async with started(stdio_spec()) as (registry, _):
        result = await registry.dispatch(
            "assets__echo",
            {"text": "hi"},
            allowed=["assets__lookup_asset"],
            investigation_id="inv-1",
            budget=Budget(),
        )
    assert not result.ok
    assert result.data == {"error": "tool 'assets__echo' is not available in this step"}


async def test_a_large_result_is_capped_and_an_error_result_is_data() -> None:
    async with started(stdio_spec(), result_chars=1500) as (registry, _):
        big = await call(registry, "assets__big_report", lines=5000)
        failed = await call(registry, "assets__fail", why="quota")
    assert big.ok and big.truncated and big.chars > 300_000
    assert len(big.as_json()) <= 1500
    assert not failed.ok
    assert "backend said no: quota" in failed.data["error"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("who talked to 10.20.30.40?", "private address (10.20.30.40)"),
        ("dc01.corp", "internal host name (dc01.corp)"),
        ("mail from jane.doe@example.org", "e-mail address (jane.doe@example.org)"),
        ("http://0x0a000001/admin", "internal address (10.0.0.1"),
        ("aHR0cDovLzE5Mi4xNjguMS4xLw==", "192.168.1.1"),  # base64 of an internal URL
    ],
)
async def test_internal_data_never_reaches_an_external_server(text: str, reason: str) -> None:
    async with started(stdio_spec()) as (registry, _):
        refused = await call(registry, "assets__echo", text=text)
        listed = await call(registry, "assets__echo", text="fine", tags=[text])
        public = await call(registry, "assets__echo", text="185.220.101.42")
    assert not refused.ok and reason in refused.data["error"]
    assert "external service" in refused.data["error"]
    assert not listed.ok  # nested values are judged too
    assert public.ok and public.data["result"]["text"] == "185.220.101.42"


async def test_an_internal_server_may_receive_internal_data() -> None:
    async with started(stdio_spec(trust="internal")) as (registry, _):
        result = await call(registry, "assets__echo", text="who talked to 10.20.30.40?")
    assert result.ok
    assert result.data["result"]["text"] == "who talked to 10.20.30.40?"


async def test_a_crashed_server_is_restarted() -> None:
    async with started(stdio_spec()) as (registry, hub):
        before = await call(registry, "assets__pid")
        crashed = await call(registry, "assets__crash")
        after = await call(registry, "assets__pid", deadline=time.monotonic() + 60)
        restarts = hub.connections["assets"].restarts
    assert not crashed.ok and "being restarted" in crashed.data["error"]
    assert before.ok and after.ok
    assert after.data["result"] != before.data["result"]  # a new process answered
    assert restarts == 1


async def test_a_hanging_server_is_cut_at_the_deadline_and_restarted() -> None:
    async with started(stdio_spec()) as (registry, _):
        before = await call(registry, "assets__pid")
        started_at = time.monotonic()
        hung = await call(registry, "assets__hang", deadline=started_at + 1.0)
        waited = time.monotonic() - started_at
        after = await call(registry, "assets__pid", deadline=time.monotonic() + 60)
    assert not hung.ok and "did not finish within" in hung.data["error"]
    assert waited < 5  # cut at the deadline, not at the tool's hour
    assert after.ok and after.data["result"] != before.data["result"]


async def test_a_server_that_cannot_start_disables_its_tools() -> None:
    spec = stdio_spec(command="/nonexistent/mcp-server", args=[])
    async with started(spec) as (registry, _):
        assert registry.names() == []
        assert "did not start" in registry.disabled["assets__lookup_asset"]
        assert "nonexistent" in registry.details["assets__lookup_asset"]


async def test_a_missing_secret_disables_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSETS_TOKEN", raising=False)
    spec = stdio_spec(env={"ASSETS_TOKEN": "${ASSETS_TOKEN}"})
    async with started(spec) as (registry, _):
        assert registry.names() == []
        reason = registry.details["assets__lookup_asset"]
    assert "environment variable ASSETS_TOKEN is not set" in reason


async def test_streamable_http_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSETS_TOKEN", "t0ken")
    with http_server() as url:
        spec = stdio_spec(
            command=None,
            args=[],
            url=url,
            headers={"Authorization": "Bearer ${ASSETS_TOKEN}"},
            tools=["lookup_asset", "echo"],
        )
        async with started(spec) as (registry, _):
            assert registry.names() == ["assets__echo", "assets__lookup_asset"]
            found = await call(registry, "assets__lookup_asset", host="build-7")
            refused = await call(registry, "assets__echo", text="ssh to 192.168.10.4")
    assert found.ok and found.data["result"]["team"] == "platform"
    assert not refused.ok and "private address (192.168.10.4)" in refused.data["error"]
