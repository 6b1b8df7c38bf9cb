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


async def seed_audits(url: str) -> None:
    """Case 1 auto-resolved and drawn, case 2 auto-resolved and not drawn, case 3 a person's."""
    from tests.store.cases.auto_support import a_rule, concluded_case, resolver

    db = Database(url)
    await db.create()
    try:
        for n, share in ((1, 1.0), (2, 0.0)):
            case = await concluded_case(db, n, a_rule(auto_resolve={"audit_share": share}))
            assert await resolver(db)(case) is not None
        await concluded_case(db, 3, None)
    finally:
        await db.close()


async def capture_rows(url: str) -> list[dict[str, object]]:
    db = Database(url)
    try:
        async with db.session() as session:
            kind = WorkRow.kind == WorkKind.CASE_CAPTURE
            return [dict(r.request) for r in await session.scalars(select(WorkRow).where(kind))]
    finally:
        await db.close()


def refused(*args: str) -> str:
    result = CliRunner().invoke(app, ["cases", *args])
    assert result.exit_code == 2, result.output
    return result.output


def test_audit_lists_blind_and_records_a_review_once(
    env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asyncio.run(seed_audits(env))
    monkeypatch.setenv("SOCBOT_EVALS__TEAM_PACK", str(tmp_path / "team"))
    [waiting] = json.loads(run("audit", "--json"))["audits"]
    assert waiting["id"] == 1 and waiting["alert_id"] == "alert-1"
    assert set(waiting) == {"id", "source", "title", "alert_id", "channel", "thread_ts",
                            "created_at"}  # fmt: skip
    assert "false_positive" not in json.dumps(waiting)  # blind: no verdict
    assert "1 cases await a blind review" in run("audit")
    assert "--disposition" in refused("audit", "1")
    assert "unknown disposition 'maybe'" in refused("audit", "1", "--disposition", "maybe")
    out = run("audit", "1", "--disposition", "true_positive", "--as", "U0ANA")
    assert "case #1: blind review true_positive recorded" in out
    assert "recorded already" in refused("audit", "1", "--disposition", "benign")
    assert "not drawn" in refused("audit", "2", "--disposition", "benign")
    assert "not drawn" in refused("audit", "3", "--disposition", "benign")
    assert "no such case" in refused("audit", "9", "--disposition", "benign")
    assert json.loads(run("audit", "--json"))["audits"] == []
    shown = json.loads(run("show", "1", "--json"))
    assert (shown["audit_disposition"], shown["status"]) == ("true_positive", "resolved")
    audited = [e for e in shown["history"] if e["action"] == "audited"]
    assert [(e["actor"], e["via"]) for e in audited] == [("U0ANA", "cli")]
    [captured] = asyncio.run(capture_rows(env))  # against socbot's false_positive
    assert (captured["case_id"], captured["disposition"], captured["audit"]) == (
        1,
        "true_positive",
        True,
    )
    posts = asyncio.run(post_rows(env))
    assert {"case_id": 1, "revision": 3} in posts  # the running bot tells the thread


def test_a_review_by_the_login_without_as(env: str) -> None:
    import getpass

    asyncio.run(seed_audits(env))
    assert json.loads(run("audit", "1", "--disposition", "benign", "--json")) == {
        "case_id": 1,
        "audit_disposition": "benign",
        "audit_by": f"cli:{getpass.getuser()}",
    }
    assert asyncio.run(capture_rows(env)) == []  # agrees, and no team pack here
