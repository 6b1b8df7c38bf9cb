"""Shared fixtures. The autouse guard fails any attempt to reach a real service."""

from __future__ import annotations

import ipaddress
import os
import socket
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from hypothesis import settings

from store.db.engine import Database
from tests import pg_server
from tests.fakes.slack_api import FakeSlackAPI
from tests.pg_server import PostgresServer
from tests.slack_support import RecordingInvestigate, SlackHarness, make_settings

# No per-example deadline anywhere: a loaded machine is not a failure. CI replays the
# same examples every run (no flake from a new random draw); locally hypothesis
# explores afresh.
settings.register_profile("socbot", deadline=None, print_blob=True)
settings.register_profile("ci", parent=settings.get_profile("socbot"), derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "socbot")

_real_connect = socket.socket.connect
_real_getaddrinfo = socket.getaddrinfo


def _is_local(host: Any) -> bool:
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(str(host).strip("[]")).is_loopback
    except ValueError:
        return False


class NetworkBlocked(AssertionError):
    pass


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Only loopback and unix sockets; any other address fails the test loudly."""

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
            raise NetworkBlocked(f"test tried to reach {address!r}")
        return _real_connect(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_local(host):
            raise NetworkBlocked(f"test tried to resolve {host!r}")
        return _real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    yield


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No real credentials or config from the developer's shell leak into a test."""
    import os

    for var in list(os.environ):
        if var.startswith(
            (
                "SOCBOT_",
                "SLACK_",
                "GEMINI_",
                "GOOGLE_",
                "OTX_",
                "VIRUSTOTAL_",
                "OPENAI_",
                "ANTHROPIC_",
            )
        ) or var in (
            "ABUSEIPDB_API_KEY",
            "URLSCAN_API_KEY",
        ):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SOCBOT_CONFIG", str(tmp_path / "absent.toml"))


@pytest.fixture
async def db(tmp_path: Any) -> AsyncIterator[Database]:
    """A fresh SQLite database with the schema (its folder is created on the way)."""
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'var' / 'socbot.db'}")
    await database.create()
    yield database
    await database.close()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the whole test session (``tests/pg_server.py``)."""
    try:
        server = pg_server.start()
    except pg_server.PostgresUnavailable as error:
        pytest.fail(str(error))
    yield server
    server.stop()


@pytest.fixture
async def pg_db(postgres: PostgresServer) -> AsyncIterator[Database]:
    """A fresh PostgreSQL database with the schema, on the session's server."""
    database = Database(postgres.create_database(f"t_{uuid.uuid4().hex[:12]}"))
    await database.create()
    yield database
    await database.close()


@pytest.fixture(params=["sqlite", "postgresql"])
async def any_db(request: pytest.FixtureRequest, db: Database) -> AsyncIterator[Database]:
    """The test once on SQLite and once on PostgreSQL (a fresh database each); the server
    starts only for the PostgreSQL one (``-k sqlite`` runs without it)."""
    if request.param == "sqlite":
        yield db
        return
    postgres: PostgresServer = request.getfixturevalue("postgres")
    pg = Database(postgres.create_database(f"t_{uuid.uuid4().hex[:12]}"))
    await pg.create()
    yield pg
    await pg.close()


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlackAPI]:
    """The local Slack Web API fake; a module may override it to add handlers."""
    async with FakeSlackAPI() as api:
        yield api


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client for the code under test (respx or a local fake answers it)."""
    async with httpx.AsyncClient() as client:
        yield client


@pytest.fixture
def investigate() -> RecordingInvestigate:
    """A stand-in investigator that records what the Slack app asked it to run."""
    return RecordingInvestigate()


@pytest.fixture
async def harness(
    fake: FakeSlackAPI, investigate: RecordingInvestigate, tmp_path: Any
) -> AsyncIterator[SlackHarness]:
    """The real Slack app on the test workspace's settings; a module may override it."""
    async with SlackHarness(fake, make_settings(tmp_path, fake.base_url), investigate) as h:
        yield h
