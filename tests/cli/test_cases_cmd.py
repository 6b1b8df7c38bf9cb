"""``socbot cases list|show|take|resolve`` on a database with cases opened as the bot opens
them; the decisions are the buttons' store functions (recorded once, told by a work row)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from cli.main import app
from store.db.engine import Database
from store.schema import WorkKind, WorkRow
from tests.store.cases.case_support import a_case


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"
    monkeypatch.setenv("SOCBOT_DATABASE_URL", url)
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    return url


async def seed(url: str) -> None:
    db = Database(url)
    await db.create()
    try:
        await a_case(db, "run-1", alert_id="a1", severity="high")
        await a_case(db, "run-2", alert_id="a2", severity="low", verdict="benign")
    finally:
        await db.close()


async def post_rows(url: str) -> list[dict[str, object]]:
    db = Database(url)
    try:
        async with db.session() as session:
            rows = await session.scalars(select(WorkRow).where(WorkRow.kind == WorkKind.CASE_POST))
            return [dict(r.request) for r in rows]
    finally:
        await db.close()


def run(*args: str) -> str:
    result = CliRunner().invoke(app, ["cases", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_list_take_resolve_show(env: str) -> None:
    asyncio.run(seed(env))
    listed = json.loads(run("list", "--json"))["cases"]
    assert [(c["id"], c["status"], c["severity"]) for c in listed] == [
        (2, "open", "low"),
        (1, "open", "high"),
    ]
    assert "2 cases" in run("list")
    assert "case #1: acknowledged, owner U0ALICE" in run("take", "1", "--as", "U0ALICE")
    again = CliRunner().invoke(app, ["cases", "take", "1", "--as", "U0ALICE"])
    assert again.exit_code == 2 and "no change" in again.output
    mine = json.loads(run("list", "--mine", "U0ALICE", "--json"))["cases"]
    assert [c["id"] for c in mine] == [1]
    unowned = json.loads(run("list", "--unowned", "--json"))["cases"]
    assert [c["id"] for c in unowned] == [2]
    out = run(
        "resolve", "1", "--disposition", "false_positive", "--missed", "the VPN", "--as", "U0BOB"
    )
    assert "case #1: resolved, owner U0ALICE" in out
    assert json.loads(run("list", "--json"))["cases"] == [listed[0]]  # open ones only
    shown = json.loads(run("show", "1", "--json"))
    assert (shown["disposition"], shown["missed"], shown["resolved_by"]) == (
        "false_positive",
        "the VPN",
        "U0BOB",
    )
    assert [(e["action"], e["actor"], e["via"]) for e in shown["history"]] == [
        ("opened", "socbot", "auto"),
        ("taken", "U0ALICE", "cli"),
        ("resolved", "U0BOB", "cli"),
    ]
    assert "resolved" in run("show", "1")
    assert asyncio.run(post_rows(env)) == [
        {"case_id": 1, "revision": 2},
        {"case_id": 1, "revision": 3},
    ]


def test_bad_input_is_refused(env: str) -> None:
    asyncio.run(seed(env))
    bad = CliRunner().invoke(app, ["cases", "resolve", "1", "--disposition", "maybe"])
    assert bad.exit_code == 2 and "unknown disposition" in bad.output
    missing = CliRunner().invoke(app, ["cases", "show", "99"])
    assert missing.exit_code == 2 and "no case #99" in missing.output
    status = CliRunner().invoke(app, ["cases", "list", "--status", "closed"])
    assert status.exit_code == 2 and "unknown status" in status.output
