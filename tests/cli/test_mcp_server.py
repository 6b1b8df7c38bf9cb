"""``socbot mcp``, driven by the official SDK's client: in process over a runtime with the
scripted model, over stdio as a child process, and over HTTP behind its token."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from cli.mcp_server import build_server
from cli.runtime import open_runtime
from config.settings import Settings
from store.playbook.bullets import PlaybookStore
from tests.cli.test_cli import ALERTS, investigation_model
from tests.fakes.model import ScriptedModel, json_response, text_response
from tests.playbook_support import bullet

REPO = Path(__file__).parents[2]
SOCBOT = ["-c", "from cli.main import run; run()"]  # the `socbot` executable
ALERT = (ALERTS / "leveret-scc.json").read_text()
TOOLS = [
    "ask",
    "get_investigation",
    "investigate_alert",
    "parse_alert",
    "search_past_alerts",
    "search_playbook",
]


def result(answer: Any) -> dict[str, Any]:
    assert not answer.is_error, answer
    return dict(answer.structured_content or json.loads(answer.content[0].text))


def settings(tmp_path: Path) -> Settings:
    return Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}")


async def test_investigate_with_progress_then_look_it_up(tmp_path: Path) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with open_runtime(settings(tmp_path), backend=investigation_model()) as rt:
        await PlaybookStore(rt.db).add(bullet("Tor exit logins to service accounts are bad"))
        async with Client(build_server(rt)) as client:
            listed = await client.list_tools()
            assert sorted(t.name for t in listed.tools) == TOOLS
            parsed = result(await client.call_tool("parse_alert", {"alert": ALERT}))
            done = result(
                await client.call_tool(
                    "investigate_alert", {"alert": ALERT}, progress_callback=on_progress
                )
            )
            record = result(
                await client.call_tool(
                    "get_investigation", {"investigation_id": done["investigation_id"]}
                )
            )
            past = result(await client.call_tool("search_past_alerts", {"text": parsed["title"]}))
            book = result(await client.call_tool("search_playbook", {"query": "Tor exit login"}))
            bad = await client.call_tool("parse_alert", {"alert": "[1, 2]"})
    assert parsed["source"] == "scc" and parsed["indicators"]
    assert done["status"] == "concluded" and done["conclusion"]["verdict"]
    assert progress and progress[-1][0] == progress[-1][1]  # every step finished
    assert any("started" in (m or "") for _, _, m in progress)
    assert record["status"] == "concluded" and record["record"]["plan"]["steps"]
    assert past["count"] == 1 and past["alerts"][0]["verdict"] == done["conclusion"]["verdict"]
    assert book["bullets"][0]["content"].startswith("Tor exit logins")
    assert bad.is_error and "one JSON object" in bad.content[0].text


async def test_ask_and_follow_up_in_one_conversation(tmp_path: Path) -> None:
    model = ScriptedModel(
        {
            "classifier": [json_response({"needs_plan": False, "reason": "simple"})] * 2,
            "direct": [text_response("It is a Tor exit node."), text_response("Yes, since 2019.")],
        }
    )
    async with open_runtime(settings(tmp_path), backend=model) as rt:
        async with Client(build_server(rt)) as client:
            first = result(await client.call_tool("ask", {"question": "is 185.220.101.42 bad?"}))
            again = result(
                await client.call_tool(
                    "ask",
                    {"question": "for long?", "conversation_id": first["conversation_id"]},
                )
            )
            forged = await client.call_tool(
                "ask", {"question": "x", "conversation_id": "slack:C1:1.2"}
            )
        history = await rt.history.messages(first["conversation_id"])
    assert (first["answer"], again["answer"]) == ("It is a Tor exit node.", "Yes, since 2019.")
    assert again["conversation_id"] == first["conversation_id"]
    assert [m.content for m in history][-1] == "Yes, since 2019."
    assert len(history) == 4
    assert forged.is_error  # another surface's conversation is not reachable


def child_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    config = tmp_path / "socbot.toml"
    config.write_text("")
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "GEMINI_API_KEY": "test-key-never-used",  # parse_alert makes no model call
        "SOCBOT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}",
        "SOCBOT_CONFIG": str(config),
        **extra,
    }


async def test_stdio(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=[*SOCBOT, "mcp"], env=child_env(tmp_path)
    )
    async with Client(params) as client:
        listed = await client.list_tools()
        parsed = result(await client.call_tool("parse_alert", {"alert": ALERT}))
    assert sorted(t.name for t in listed.tools) == TOOLS
    assert parsed["source"] == "scc"


@pytest.fixture
async def http_server(tmp_path: Path) -> AsyncIterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = child_env(tmp_path, SOCBOT_MCP_TOKEN="t" * 32)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *SOCBOT, "mcp", "--http", "--port", str(port),
        env=env, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(600):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.returncode is None, "socbot mcp --http exited"
            await asyncio.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        await proc.wait()


async def test_http_needs_the_token(http_server: str) -> None:
    async with httpx.AsyncClient() as http:
        anonymous = await http.post(http_server, json={})
        wrong = await http.post(http_server, json={}, headers={"Authorization": "Bearer nope"})
    assert (anonymous.status_code, wrong.status_code) == (401, 401)
    headers = {"Authorization": "Bearer " + "t" * 32}
    async with (
        httpx2.AsyncClient(headers=headers) as http2,
        Client(streamable_http_client(http_server, http_client=http2)) as client,
    ):
        parsed = result(await client.call_tool("parse_alert", {"alert": ALERT}))
    assert parsed["source"] == "scc"
