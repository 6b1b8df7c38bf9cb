"""``socbot list`` and the ids people type to ``show`` and ``trace`` (``last``, prefixes),
and ``--json`` on the commands that print data (``tools list``, ``playbook list``,
``db upgrade``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from store.db.engine import Database
from tests.cli.test_cli import assert_one_line_error
from tests.store.investigations.test_listing import store_runs


def stored_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fill: Callable[[Database], Awaitable[None]]
) -> str:
    """A database in ``tmp_path`` with what ``fill`` stores, for the CLI run from there
    (no config/socbot.toml: defaults); its URL."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"

    async def setup() -> None:
        db = Database(url)
        await db.create()
        try:
            await fill(db)
        finally:
            await db.close()

    asyncio.run(setup())
    monkeypatch.setenv("SOCBOT_DATABASE_URL", url)
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    return url


@pytest.fixture
def stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A database with three runs (``tests.store.investigations.test_listing.store_runs``)."""
    return stored_database(tmp_path, monkeypatch, store_runs)


@pytest.mark.usefixtures("stored")
def test_list_prints_a_table_newest_first() -> None:
    result = CliRunner().invoke(app, ["list"])
    assert result.exit_code == 0, result.output
    header, *rows = result.stdout.splitlines()
    assert header.split() == ["id", "time", "(UTC)", "source", "title", "status", "verdict", "cost"]
    assert [row.split()[0] for row in rows] == ["ef001111", "abcd2222", "abcd1111"]
    assert rows[0].split()[3:6] == ["chat", "is", "185.220.101.42"]
    assert rows[2].split()[-3:] == ["concluded", "true_positive", "$0.0200"]
    assert rows[1].split()[-3:] == ["failed", "-", "-"]


@pytest.mark.usefixtures("stored")
def test_list_filters_and_json() -> None:
    result = CliRunner().invoke(app, ["list", "--json", "--source", "scc"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert (row["id"], row["source"], row["verdict"], row["cost_usd"]) == (
        "abcd1111",
        "scc",
        "true_positive",
        0.02,
    )
    alerts = json.loads(CliRunner().invoke(app, ["list", "--alerts", "--json"]).stdout)
    assert sorted(a["investigation_id"] for a in alerts) == ["abcd1111", "abcd2222"]
    empty = CliRunner().invoke(app, ["list", "--verdict", "false_positive"])
    assert (empty.exit_code, empty.stdout, empty.stderr.splitlines()[-1]) == (
        0,
        "",
        "no investigations",
    )


@pytest.mark.usefixtures("stored")
@pytest.mark.parametrize(
    ("typed", "expected"), [("last", "ef001111"), ("abcd1", "abcd1111"), ("abcd2222", "abcd2222")]
)
@pytest.mark.parametrize("command", ["show", "trace"])
def test_show_and_trace_take_last_and_prefixes(command: str, typed: str, expected: str) -> None:
    result = CliRunner().invoke(app, [command, typed, "--json"])
    assert result.exit_code == 0, result.output
    if command == "show":
        assert json.loads(result.stdout)["investigation_id"] == expected
    else:
        assert json.loads(result.stdout) == []  # these runs stored no events


@pytest.mark.usefixtures("stored")
@pytest.mark.parametrize(
    ("typed", "needle"),
    [
        ("abcd", "'abcd' is the start of several investigations (abcd1111, abcd2222)"),
        ("ab", "too short"),
        ("ffff", "no investigation 'ffff' in this database"),
    ],
)
def test_an_id_that_is_not_one_investigation_is_one_line(typed: str, needle: str) -> None:
    result = CliRunner().invoke(app, ["show", typed, "--json"])  # --json: no settings notice
    assert result.exit_code == 2
    assert_one_line_error(result.output, needle)


@pytest.mark.usefixtures("stored")
def test_json_on_tools_playbook_and_db() -> None:
    tools = json.loads(CliRunner().invoke(app, ["tools", "list", "--json"]).stdout)
    names = {t["tool"]: t["enabled"] for t in tools["tools"]}
    assert names["search_past_alerts"] is True and names["lookup_ip"] is False
    assert {s["service"] for s in tools["services"]} >= {"abuseipdb", "otx"}
    added = CliRunner().invoke(app, ["playbook", "add", "Tor exits are noisy", "--by", "t"])
    assert added.exit_code == 0, added.output
    [bullet] = json.loads(CliRunner().invoke(app, ["playbook", "list", "--json"]).stdout)
    assert (bullet["content"], bullet["status"]) == ("Tor exits are noisy", "active")
    db = json.loads(CliRunner().invoke(app, ["db", "upgrade", "--json"]).stdout)
    assert db["revision"] and db["database"].endswith("socbot.db")
