"""A disagreement resolved in Slack (the real bolt app, the Slack fake) is captured into the
team's pack by its work row, off the click's path, as ``socbot serve`` wires it; so is a
blind review that says socbot's auto-resolution was wrong."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select, update

from bot.decisions._audit_dialog import AUDIT_VIEW_ID
from config.eval_settings import EvalSettings
from config.settings import Settings
from evals.scenario import load_pack
from evals.team_capture import TeamCapture
from store.cases import records
from store.cases.auto import AutoResolution
from store.cases.opening import open_for_run
from store.db.engine import Database
from store.schema import Investigation, WorkKind, WorkRow, WorkState
from store.slack import SlackStore
from tests.bot.scenarios.test_slack_cases import (
    ANALYST,
    SOC,
    THREAD,
    click,
    posted,
    resolution,
    settings_for,
)
from tests.bot.scenarios.test_slack_feedback import submission
from tests.evals.test_capture import investigated
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import RecordingInvestigate, SlackHarness, settle_until
from tests.store.cases.auto_support import a_rule, let_through


async def in_a_thread(tmp_path: Path, fake: FakeSlackAPI) -> tuple[str, Path, Settings, Database]:
    """A finished run (socbot said false_positive) in a Slack thread, as the investigator
    leaves it; the team's pack folder; settings writing to it; the database."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"
    run = await investigated(url, tmp_path / "eval")
    team = tmp_path / "team"
    fake.add_members(SOC, [ANALYST])
    settings = settings_for(tmp_path, fake).model_copy(
        update={"evals": EvalSettings(team_pack=str(team))}
    )
    db = Database(url)
    thread = await SlackStore(db).remember_thread(SOC, THREAD)
    async with db.session() as session:
        await session.execute(update(Investigation).values(conversation_id=thread))
    return run, team, settings, db


async def test_a_disagreement_resolved_in_slack_is_captured(
    tmp_path: Path, fake: FakeSlackAPI
) -> None:
    run, team, settings, db = await in_a_thread(tmp_path, fake)
    case = await open_for_run(db, run)
    assert case is not None and case.socbot_verdict == "false_positive"
    assert (case.channel, case.thread_ts) == (SOC, THREAD)
    try:
        async with SlackHarness(fake, settings, RecordingInvestigate(fake), db=db) as h:
            assert h.bot is not None
            TeamCapture(db, settings, h.bot.coordinator)  # as socbot serve registers it
            await h.action(click("case_resolve", run))
            await h.settle()
            meta = fake.calls_to("views.open")[-1].args["view"]["private_metadata"]
            values = resolution("true_positive", missed="the spray's source")
            assert (await h.action(submission("case_resolve_dialog", meta, values)))[0] == 200
            await posted(h, 1)  # the decision in the thread
            await fake.wait_for(lambda: (team / f"case-{case.id}" / "scenario.toml").exists())
            await h.settle()
        async with db.session() as session:
            found = await session.scalars(
                select(WorkRow.state).where(WorkRow.kind == WorkKind.CASE_CAPTURE)
            )
            assert list(found) == [WorkState.DONE]  # one row, run to its end
        (scenario,) = load_pack(str(team))
        assert scenario.truth.verdict == "true_positive"
    finally:
        await db.close()


async def test_a_blind_review_against_socbot_is_captured(
    tmp_path: Path, fake: FakeSlackAPI
) -> None:
    """socbot closed the alert itself (a rule's ``auto_resolve``); the blind review in Slack
    says it was real: the review's transaction queued the capture, with the reviewer's
    answer as the expected verdict."""
    run, team, settings, db = await in_a_thread(tmp_path, fake)
    case = await open_for_run(db, run)
    assert case is not None and case.alert_id is not None
    rule = a_rule(allow_critical=True, auto_resolve={"confidence": "low", "audit_share": 1})
    await let_through(db, case.alert_id, rule)
    closed = await AutoResolution(db, 0.0)(case)
    assert closed is not None and closed.case.audit is True
    try:
        async with SlackHarness(fake, settings, RecordingInvestigate(fake), db=db) as h:
            assert h.bot is not None
            TeamCapture(db, settings, h.bot.coordinator)
            await h.action(click("case_audit", str(case.id)))
            await h.settle()
            view = fake.calls_to("views.open")[-1].args["view"]
            assert view["callback_id"] == AUDIT_VIEW_ID
            values = resolution("true_positive")
            sent = submission(AUDIT_VIEW_ID, view["private_metadata"], values)
            assert (await h.action(sent))[0] == 200
            await settle_until(h, (team / f"case-{case.id}" / "scenario.toml").exists)
        async with db.session() as session:
            rows = list(
                await session.scalars(select(WorkRow).where(WorkRow.kind == "case_capture"))
            )
        assert [(r.state, r.request["audit"]) for r in rows] == [(WorkState.DONE, True)]
        (scenario,) = load_pack(str(team))
        assert scenario.truth.verdict == "true_positive"
        assert f"case {case.id} blind-reviewed true_positive against socbot's false_positive" in (
            scenario.origin
        )
        now = await records.get(db, case.id)
        assert now is not None and (now.audit_disposition, now.audit_by) == (
            "true_positive",
            ANALYST,
        )
        assert now.disposition == "false_positive"  # the review leaves the case as it is
    finally:
        await db.close()
