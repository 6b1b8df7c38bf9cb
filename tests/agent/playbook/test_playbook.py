"""The team playbook: selection, the store's life cycle, prompts and the trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select as sql_select
from typer.testing import CliRunner

from agent.playbook.selection import Situation, bm25_scores, reliability, select, tokens
from cli.main import app
from config.settings import PlaybookSettings, Settings
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.playbook.bullets import PlaybookError, PlaybookStore, Triggers
from store.schema import Bullet
from tests.playbook_support import (
    Lab,
    bullet,
    load_alert,
    planned_script,
    prompt_text,
)

SETTINGS = PlaybookSettings()
SCANNER = "203.0.113.0/24 is our external scanner (Qualys); scans from it are expected."


@pytest.fixture
def lab(db: Database) -> Lab:
    return Lab(db, Settings(), PlaybookStore(db), InvestigationStore(db))


# ---------------------------------------------------------------- selection


def test_tokens_keep_values_and_their_parts() -> None:
    words = tokens("Trojan:EC2/DropPoint!DNS from 203.0.113.7 at the alert")
    assert {"trojan:ec2/droppoint", "trojan", "ec2", "droppoint", "dns", "203.0.113.7"} <= set(
        words
    )
    assert "the" not in words and "alert" not in words


def test_bm25_gives_zero_to_documents_sharing_no_term() -> None:
    docs = [tokens("qualys scanner subnet"), tokens("okta admin password reset")]
    scores = bm25_scores(docs, tokens("port scan from the qualys scanner"))
    assert scores[0] > 0 and scores[1] == 0


def test_selection_by_text_trigger_and_scope() -> None:
    scanner = bullet(SCANNER, triggers=Triggers(indicators=["203.0.113.0/24"]))
    dns = bullet("DropPoint DNS findings on build hosts come from the malware sandbox.")
    scc_only = bullet(
        "Cryptocurrency mining on ci-runner hosts is the load test.", scope="source:scc"
    )
    unrelated = bullet("Okta admin password resets on Mondays are the helpdesk rota.")
    situation = Situation(
        text="Trojan:EC2/DropPoint!DNS Drop Point domain queried",
        source="guardduty",
        indicators=[("ip", "203.0.113.7")],
    )
    chosen = select([scanner, dns, scc_only, unrelated], situation, SETTINGS)
    ids = [c.bullet.id for c in chosen]
    assert set(ids) == {scanner.id, dns.id}
    reasons = {c.bullet.id: c.reasons for c in chosen}
    assert "indicator 203.0.113.7" in reasons[scanner.id]
    assert any(r.startswith("text ") for r in reasons[dns.id])


def test_only_active_bullets_are_candidates() -> None:
    text = "Drop point DNS query from the build host"
    bullets = [
        bullet("Drop point DNS on build hosts is the sandbox.", status=status)
        for status in ("proposed", "retired", "rejected")
    ]
    assert select(bullets, Situation(text=text), SETTINGS) == []


def test_reliability_has_a_prior_and_orders_equal_matches() -> None:
    fresh = bullet("Tor exit logins to the VPN are blocked upstream.")
    proven = bullet("Tor exit logins to the VPN are blocked upstream!", helpful=6, harmful=0)
    doubtful = bullet("Tor exit logins to the VPN are blocked upstream?", helpful=0, harmful=5)
    assert reliability(fresh, SETTINGS) == 0.5
    chosen = select([doubtful, fresh, proven], Situation(text="tor exit vpn login"), SETTINGS)
    assert [c.bullet.id for c in chosen] == [proven.id, fresh.id, doubtful.id]


def test_count_and_token_budget_hold() -> None:
    many = [bullet(f"Scanner note {i}: qualys scanner range {'x' * 200}") for i in range(10)]
    situation = Situation(text="qualys scanner")
    assert len(select(many, situation, PlaybookSettings(max_bullets=3))) == 3
    small = select(many, situation, PlaybookSettings(max_tokens=150))
    assert len(small) == 2  # each bullet is ~60 tokens


def test_unknown_scope_never_matches() -> None:
    odd = bullet("qualys scanner", scope="team:blue")
    assert select([odd], Situation(text="qualys scanner"), SETTINGS) == []


# ---------------------------------------------------------------- the store


async def test_approve_merge_inherits_counters_and_retires_targets(db: Database) -> None:
    store = PlaybookStore(db)
    a = await store.add(bullet("Qualys scans from 203.0.113.0/24", helpful=2, harmful=1))
    b = await store.add(bullet("Our scanner is 203.0.113.0/24", helpful=1))
    merged = await store.add(bullet(SCANNER, status="proposed", op="merge", targets=[a.id, b.id]))
    assert [x.id for x in await store.active()] == [a.id, b.id]

    done = await store.approve(merged.id, "UAPPROVER")
    assert (done.status, done.helpful, done.harmful) == ("active", 3, 1)
    assert done.provenance["approved_by"] == "UAPPROVER"
    assert [x.id for x in await store.active()] == [merged.id]
    old = await store.get(a.id)
    assert old is not None and old.provenance["superseded_by"] == merged.id
    with pytest.raises(PlaybookError, match="not proposed"):
        await store.approve(merged.id, "UAPPROVER")


async def test_retire_proposal_and_counters(db: Database) -> None:
    store = PlaybookStore(db)
    target = await store.add(bullet("Ignore port scans"))
    await store.count_tags({target.id: "harmful", "pb-unknown": "helpful"})
    await store.count_tags({target.id: "neutral"})
    proposal = await store.add(
        bullet(
            "Harmful more often than helpful", status="proposed", op="retire", targets=[target.id]
        )
    )
    await store.approve(proposal.id, "UAPPROVER")
    after = await store.get(target.id)
    assert after is not None and (after.status, after.harmful, after.helpful) == ("retired", 1, 0)
    assert await store.active() == []


# ---------------------------------------------------------------- prompts and trace


async def test_active_bullet_reaches_prompts_and_the_trace(lab: Lab) -> None:
    alert = load_alert("leveret-guardduty-finding.json")
    relevant = await lab.store.add(
        bullet(
            "DropPoint DNS findings on i-99999999 come from the malware sandbox; check "
            "the sandbox schedule before escalating.",
            triggers=Triggers(sources=["guardduty"]),
        )
    )
    unrelated = await lab.store.add(bullet("Okta admin password resets are the helpdesk rota."))
    proposed = await lab.store.add(bullet("DropPoint DNS is always benign", status="proposed"))
    outcome, model = await lab.investigate(
        alert, planned_script(plan_cites=[relevant.id, "pb-invented", unrelated.id])
    )

    assert outcome.status == "concluded"
    for stage in ("planner", "step", "concluder"):
        text = prompt_text(model.requests_for(stage)[0])
        assert f"[{relevant.id}]" in text, stage
        assert unrelated.id not in text and proposed.id not in text
        assert "Team playbook" in text
    book = outcome.record["playbook"]
    assert book["loaded"] == [relevant.id]
    assert book["used"] == [relevant.id]  # invented and not-loaded ids are dropped
    trace = await lab.investigations.trace(outcome.investigation_id)
    selected = [e for e in trace if e["type"] == "playbook_selected"]
    used = [e for e in trace if e["type"] == "playbook_used"]
    assert selected[0]["payload"]["bullets"][0]["id"] == relevant.id
    assert used[0]["payload"] == {"stage": "planner", "bullet_ids": [relevant.id]}
    after = await lab.store.get(relevant.id)
    assert after is not None and (after.times_loaded, after.times_used) == (1, 1)


async def test_unrelated_investigation_gets_no_playbook_section(lab: Lab) -> None:
    await lab.store.add(bullet("Okta admin password resets are the helpdesk rota."))
    outcome, model = await lab.investigate(load_alert("leveret-guardduty-finding.json"))
    assert outcome.record["playbook"]["loaded"] == []
    assert all("Team playbook" not in prompt_text(r) for r in model.requests)


# ---------------------------------------------------------------- the CLI


def test_cli_add_list_export_import_round_trip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = tmp_path / "one.db"
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)  # no config/socbot.toml here
    monkeypatch.setenv("SOCBOT_DATABASE_URL", f"sqlite+aiosqlite:///{first}")
    runner = CliRunner()
    added = runner.invoke(
        app,
        [
            "playbook",
            "add",
            SCANNER,
            "--scope",
            "source:guardduty",
            "--indicator",
            "203.0.113.0/24",
            "--keyword",
            "port scan",
            "--by",
            "alice",
        ],
    )
    assert added.exit_code == 0, added.output
    bullet_id = added.stdout.split()[1]
    assert bullet_id in runner.invoke(app, ["playbook", "list"]).stdout
    out = tmp_path / "playbook"
    exported = runner.invoke(app, ["playbook", "export", str(out)])
    assert exported.exit_code == 0, exported.output
    path = out / "groups" / "guardduty" / "facts" / f"{bullet_id}.yaml"
    assert "203.0.113.0/24" in path.read_text()

    monkeypatch.setenv("SOCBOT_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'two.db'}")
    imported = runner.invoke(app, ["playbook", "import", str(out)])
    assert imported.exit_code == 0 and "1 added" in imported.output
    again = tmp_path / "again"
    assert runner.invoke(app, ["playbook", "export", str(again)]).exit_code == 0
    assert (again / path.relative_to(out)).read_text() == path.read_text()

    stats = runner.invoke(app, ["playbook", "stats", "--json"])
    assert stats.exit_code == 0, stats.output
    report = json.loads(stats.output)
    assert report["bullets"] == {"active": 1} and report["hit_rate"] is None

    retired = runner.invoke(app, ["playbook", "retire", bullet_id, "--reason", "moved"])
    assert f"{bullet_id} is now retired" in retired.output
    assert runner.invoke(app, ["playbook", "approve", bullet_id]).exit_code == 2


async def test_bullet_rows_round_trip_through_the_model(db: Database) -> None:
    store = PlaybookStore(db)
    original = await store.add(
        bullet(SCANNER, triggers=Triggers(keywords=["scan"], tools=["lookup_ip"]))
    )
    async with db.session() as session:
        row = (await session.scalars(sql_select(Bullet))).one()
    assert row.triggers["tools"] == ["lookup_ip"]
    assert await store.get(original.id) == original


async def test_migration_0002_keeps_each_analysts_latest_vote(tmp_path: Path) -> None:
    from sqlalchemy import text

    from store.db import migrate
    from store.playbook.feedback import FeedbackStore

    old = Database(f"sqlite+aiosqlite:///{tmp_path / 'old.db'}")
    await migrate.upgrade(old.engine, "0001")
    async with old.engine.begin() as conn:  # before 0002 a second click added a row
        for value in ("correct", "incorrect", "correct"):
            await conn.execute(
                text(
                    "INSERT INTO feedback (investigation_id, user, value, created_at) "
                    "VALUES ('inv-1', 'U1', :value, CURRENT_TIMESTAMP)"
                ),
                {"value": value},
            )
    await migrate.upgrade(old.engine)
    votes = await FeedbackStore(old).votes("inv-1")
    assert [(v.user, v.value, v.source) for v in votes] == [("U1", "correct", "button")]
    assert await FeedbackStore(old).vote("inv-1", "U1", "incorrect") == "changed"
    assert [v.value for v in await FeedbackStore(old).votes("inv-1")] == ["incorrect"]
    await old.close()
