"""The ack front in a process of its own (``cli.serve.ack_process``): Slack events are acked
while socbot's own process cannot run any Python at all, then reach the app.

A real aiohttp app on this test's loop (loopback), the real child process, requests
signed as Slack signs them and sent from another process, while this process holds the
interpreter lock in one long C call (as a big JSON parse or a regex over a huge log row
can): a front in a thread of this process could not answer until it ends.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from bench.bench_slack import SIGNING_SECRET, signed
from bot.transport.server import bound_port, start_site
from cli.serve.ack_process import AckProcess
from config.settings import LoggingSettings
from tests.bot.transport.test_ack_front import EVENT, App

ROOT = Path(__file__).parents[2]
# another process: says it is ready, then posts the event a moment later and prints the
# status and when (time.monotonic: one clock for every process on the machine) it sent
# the request and had the answer
CLIENT = """
import json, sys, time, httpx
url, body, headers = json.loads(sys.stdin.read())
print("ready", flush=True)
time.sleep(0.3)  # the test's process is holding the interpreter lock by now
sent = time.monotonic()
status = httpx.post(url, content=body, headers=headers, timeout=30).status_code
print(json.dumps([status, sent, time.monotonic()]))
"""


def front(backend: str) -> AckProcess:
    return AckProcess(
        signing_secret=SIGNING_SECRET,
        backend=backend,
        body_limit=1024 * 1024,
        log=LoggingSettings(),
    )


@pytest.fixture
async def served() -> AsyncIterator[tuple[App, str]]:
    app = App()
    runner = await start_site(app.web(), "127.0.0.1", 0)
    process = front(f"http://127.0.0.1:{bound_port(runner)}")
    port = await asyncio.to_thread(process.start, "127.0.0.1", 0)
    try:
        yield app, f"http://127.0.0.1:{port}"
    finally:
        await asyncio.to_thread(process.stop)
        await runner.cleanup()


async def test_an_event_is_acked_while_this_process_runs_no_python(
    served: tuple[App, str],
) -> None:
    app, url = served
    body = json.dumps(EVENT)
    client = post_from_another_process(f"{url}/slack/events", body)
    started, ended = hold_the_interpreter_lock()  # this test's loop, its threads: stopped
    status, sent, answered = answer(client)
    assert status == 200
    assert started < sent and answered < ended  # acked while this process ran no Python
    await asyncio.wait_for(app.arrived.wait(), 30)  # then handed to the app
    assert app.seen == [body]


def post_from_another_process(url: str, body: str) -> subprocess.Popen[str]:
    """The client, started and ready (its imports done) to post ``body`` in 0.3 s."""
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert client.stdin is not None and client.stdout is not None
    with client.stdin:
        client.stdin.write(json.dumps([url, body, signed(body)]))
    assert client.stdout.readline() == "ready\n"
    return client


def hold_the_interpreter_lock() -> tuple[float, float]:
    """Hold the lock in one C call (no thread of this process runs until it returns),
    a few seconds on this machine; when it was taken and let go."""
    started = time.monotonic()
    sum(range(200_000_000))
    return started, time.monotonic()


def answer(client: subprocess.Popen[str]) -> tuple[int, float, float]:
    assert client.stdout is not None
    with client.stdout:
        status, sent, answered = json.loads(client.stdout.read())
    assert client.wait(60) == 0
    return int(status), float(sent), float(answered)


async def test_refused_requests_never_reach_the_app(served: tuple[App, str]) -> None:
    app, url = served
    body = json.dumps(EVENT)
    forged = {**signed(body), "X-Slack-Signature": "v0=" + "0" * 64}
    async with httpx.AsyncClient() as client:
        answer = await client.post(f"{url}/slack/events", content=body, headers=forged)
    assert answer.status_code == 401
    assert app.seen == []


async def test_a_taken_port_is_an_error_naming_it(served: tuple[App, str]) -> None:
    _, url = served
    taken = int(url.rsplit(":", 1)[1])
    with pytest.raises(OSError, match=str(taken)):
        await asyncio.to_thread(front("http://127.0.0.1:9").start, "127.0.0.1", taken)


PARENT = """
import sys
from cli.serve.ack_process import AckProcess
from config.settings import LoggingSettings
process = AckProcess(
    signing_secret="s", backend="http://127.0.0.1:9", body_limit=1024, log=LoggingSettings()
)
process.start("127.0.0.1", 0)
print(process._child.pid, flush=True)
sys.stdin.read()
"""


def test_the_child_ends_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert parent.stdin is not None and parent.stdout is not None
    child = int(parent.stdout.readline())
    assert running(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait(30)
    parent.stdin.close()
    parent.stdout.close()
    deadline = time.monotonic() + 30
    while running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(child)


def running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "State:\tZ" not in status.read_text()
