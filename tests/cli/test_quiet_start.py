"""A quiet start and exit: no bolt warning when ``serve`` starts, no DuckDB noise on exit.

The serve tests run the real ``serve_until`` against the local Slack fake with the
tokens in the environment, as an operator sets them. The exit tests run ``socbot`` as a
process (the "nanobind: leaked ..." lines are printed by the interpreter as it exits):
an investigation whose steps query the logs, and ``serve`` on a taken port.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from bench import scripts
from bench.fake_gemini import FakeGemini
from bench.loopback import free_port
from cli.runtime import open_runtime
from cli.serve.command import Mode, ServeError, serve_until
from tests.bot.scenarios.test_slack_flows import FakeSocketModeServer
from tests.fakes.model import ScriptedModel
from tests.fakes.signals import WAIT_S
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import SIGNING_SECRET, make_settings, until_up

REPO = Path(__file__).resolve().parents[2]
SOCBOT = Path(sys.executable).with_name("socbot")
ALERT = REPO / "examples" / "alerts" / "leveret-scc.json"

# What an operator's environment holds for `socbot serve`; bolt would read these itself.
OPERATOR_ENV = {
    "SLACK_BOT_TOKEN": "xoxb-test",
    "SLACK_APP_TOKEN": "xapp-test",
    "SLACK_SIGNING_SECRET": SIGNING_SECRET,
    "SLACK_CLIENT_ID": "1111.2222",  # set for another Slack tool on the same host
    "SLACK_CLIENT_SECRET": "not-a-real-client-secret",
}


async def _health(port: int) -> dict[str, object] | None:
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{port}/healthz") as response,
        ):
            return dict(await response.json()) if response.status == 200 else None
    except aiohttp.ClientConnectionError:
        return None


@pytest.mark.parametrize("mode", [Mode.http, Mode.socket])
async def test_serve_starts_without_a_bolt_warning(
    mode: Mode,
    fake: FakeSlackAPI,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in OPERATOR_ENV.items():
        monkeypatch.setenv(name, value)
    socket_server = FakeSocketModeServer()
    await socket_server.start()
    fake.set_handler("apps.connections.open", lambda call: {"ok": True, "url": socket_server.url})
    caplog.set_level(logging.DEBUG, logger="slack_bolt")
    port, stop, ready = free_port(), asyncio.Event(), asyncio.Event()
    serving = asyncio.create_task(
        serve_until(
            make_settings(tmp_path, fake.base_url),
            mode,
            host="127.0.0.1",
            port=port,
            stop=stop,
            runtime=lambda s: open_runtime(s, backend=ScriptedModel({})),
            ready=lambda _me: ready.set(),  # http: once the port is ours
        )
    )
    try:
        if mode is Mode.http:
            await until_up(serving, ready.wait())
        else:  # the local endpoints start before the socket connects
            connected = socket_server.changes.until(lambda: socket_server.connections > 0)
            await until_up(serving, connected)
        health = await _health(port)
        assert health is not None and health["mode"] == mode.value
    finally:
        stop.set()
        await asyncio.wait_for(serving, WAIT_S)  # an upper bound for a stop that would hang
        await socket_server.stop()
    bolt = [r for r in caplog.records if r.name.startswith("slack_bolt")]
    assert [r.getMessage() for r in bolt if r.levelno >= logging.WARNING] == []
    assert not any("OAuth" in r.getMessage() for r in bolt), "no OAuth flow from the env"
    assert {name: os.environ.get(name) for name in OPERATOR_ENV} == OPERATOR_ENV  # restored


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SOCBOT_", "SLACK_"))}
    return subprocess.run(
        [str(SOCBOT), *args],
        env={**base, **env},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_an_investigation_that_queried_the_logs_exits_without_duckdb_noise(
    tmp_path: Path,
) -> None:
    fake = FakeGemini(scripts.chain(2))
    base_url = await fake.start()
    try:
        env = {
            "SOCBOT_DATABASE_URL": f"sqlite:///{tmp_path / 'socbot.db'}",
            "SOCBOT_GEMINI_BASE_URL": base_url,
            "GEMINI_API_KEY": "not-a-real-key",
            "SOCBOT_CHAT_HISTORY_FILE": "",
        }
        done = await asyncio.to_thread(_run, ["investigate", "--json", str(ALERT)], env)
    finally:
        await fake.stop()
    assert done.returncode == 0, done.stderr
    calls = [c for step in json.loads(done.stdout)["steps"] for c in step["tool_calls"]]
    assert [c["tool"] for c in calls if c["ok"]].count("query_logs") >= 2  # in DuckDB workers
    assert "nanobind" not in done.stderr
    assert "leaked" not in done.stderr


async def test_serve_on_a_taken_port_is_one_line_without_duckdb_noise(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {
            **OPERATOR_ENV,
            "SOCBOT_SLACK_API_URL": fake.base_url,
            "SOCBOT_DATABASE_URL": f"sqlite:///{tmp_path / 'socbot.db'}",
            "GEMINI_API_KEY": "not-a-real-key",
        }
        args = ["serve", "--mode", "http", "--host", "127.0.0.1", "--port", str(port)]
        done = await asyncio.to_thread(_run, args, env)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    assert errors == [f"error: cannot listen on 127.0.0.1:{port}: {errors[0].split(': ', 2)[2]}"]
    assert "--port" in errors[0]
    assert "nanobind" not in done.stderr and "WARNING" not in done.stderr


async def test_socket_mode_with_an_app_token_slack_rejects_fails_in_one_sentence(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    fake.set_handler("apps.connections.open", lambda call: {"ok": False, "error": "invalid_auth"})
    with pytest.raises(ServeError, match=r"^Slack rejected SLACK_APP_TOKEN \(invalid_auth\)$"):
        await serve_until(
            make_settings(tmp_path, fake.base_url),
            Mode.socket,
            host="127.0.0.1",
            port=free_port(),
            stop=asyncio.Event(),
            runtime=lambda s: open_runtime(s, backend=ScriptedModel({})),
        )
    assert not (tmp_path / "socbot.db").exists(), "nothing opened before the token is checked"


async def test_socket_mode_stops_while_the_socket_cannot_connect(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    nowhere = f"ws://127.0.0.1:{free_port()}/link"  # nothing listens: bolt retries for ever
    fake.set_handler("apps.connections.open", lambda call: {"ok": True, "url": nowhere})
    stop = asyncio.Event()
    serving = asyncio.create_task(
        serve_until(
            make_settings(tmp_path, fake.base_url),
            Mode.socket,
            host="127.0.0.1",
            port=free_port(),
            stop=stop,
            runtime=lambda s: open_runtime(s, backend=ScriptedModel({})),
        )
    )
    await fake.wait_for(lambda: len(fake.calls_to("apps.connections.open")) >= 2)
    stop.set()  # what SIGTERM does
    await asyncio.wait_for(serving, WAIT_S)  # bolt would retry for ever: a loose bound
