"""Every disagreement becomes a regression case: a case resolved against socbot's verdict
is captured into ``evals.team_pack`` by its work row, and ``socbot eval run --pack team``
replays it offline, scored against the analyst's disposition, with what was cut said."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from bot.work.learning import Silent
from bot.work.worker import Coordinator, ThreadRef
from cli.database import migrated_database
from cli.eval.run import run_eval
from cli.main import app
from config.settings import Settings
from evals.capture import Captured
from evals.results import RunFolder
from evals.scenario import load_pack
from evals.team_capture import TeamCapture, cut_said
from evals.writer import Draft
from store.cases import transitions
from store.cases.opening import open_for_run
from store.cases.transitions import Resolution
from store.db.engine import Database
from store.queue.types import Work
from store.queue.work import WorkQueue
from store.schema import CaseDisposition, WorkKind, WorkRow
from tests.evals.test_capture import investigated
from tests.fakes.eval_model import Answer, eval_model

TP = Resolution(CaseDisposition.TRUE_POSITIVE, reason="a real spray", missed="the failures")


async def captures(db: Database) -> list[WorkRow]:
    async with db.session() as session:
        found = await session.scalars(select(WorkRow).where(WorkRow.kind == WorkKind.CASE_CAPTURE))
        return list(found)


async def resolved_and_captured(url: str, investigation_id: str, settings: Settings) -> Path:
    """Two replicas resolve the case at once against socbot's false positive; the one row
    queued is run by the team capture."""
    async with migrated_database(url) as db:
        case = await open_for_run(db, investigation_id)
        assert case is not None and case.socbot_verdict == "false_positive"  # flipped
        decided = [
            await transitions.resolve(
                db, case.id, user, TP, seen=case.revision, via="slack", capture=True
            )
            for user in ("UANA00001", "UBOB00002")
        ]
        assert decided[0] is not None and decided[1] is None  # one decision wins
        (row,) = await captures(db)  # queued once, with the decision
        assert row.request["disposition"] == "true_positive"
        capture = TeamCapture(db, settings, Coordinator(1, Silent(), WorkQueue(db), replica="r1"))
        await capture.run(ThreadRef(row.channel, row.thread_ts), Work.of(row))
        again = await capture.capture(row.request)  # a retry after a crash: the same folder
        assert again is not None
        return again


def test_a_disagreement_replays_offline_against_the_analyst(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"
    team = tmp_path / "team-pack"
    investigation_id = asyncio.run(investigated(url, tmp_path))
    settings = Settings(database_url=url, evals={"team_pack": str(team)})  # type: ignore[arg-type]
    folder = asyncio.run(resolved_and_captured(url, investigation_id, settings))

    (scenario,) = load_pack(str(team))
    assert scenario.folder == folder and folder.name.startswith("case-")
    assert scenario.truth.verdict == "true_positive"  # the analyst's disposition
    assert scenario.alert == load_pack("core", "okta-password-spray")[0].alert
    (table,) = scenario.tables
    assert len(table.files[0].read_text().splitlines()) == 3  # the rows the run saw
    origin = str(scenario.provenance.origin)
    assert "resolved true_positive against socbot's false_positive" in origin
    assert origin.endswith("cut: nothing")
    assert not (team / ".incoming" / folder.name).exists()

    # socbot's answer recorded once per kind, then `eval run --pack team` offline
    monkeypatch.setenv("SOCBOT_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'eval.db'}")
    monkeypatch.setenv("SOCBOT_EVALS__TEAM_PACK", str(team))
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    for kind, passed in (("flip", False), ("right", True)):
        record = tmp_path / f"rec-{kind}"
        model = eval_model([scenario], {scenario.id: Answer(kind)})
        live = RunFolder(tmp_path / f"live-{kind}")
        asyncio.run(run_eval(settings, [(scenario, 0)], live, backend=model, record=record))
        args = ["eval", "run", "--pack", "team", "--replay", str(record), "--json"]
        result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / f"out-{kind}")])
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout[result.stdout.index("{") :])
        (row,) = report["results"]
        assert row["id"] == scenario.id and row["passed"] is passed
        given = "false_positive" if kind == "flip" else "true_positive"
        assert row["given_verdict"] == given


def test_agreement_duplicates_and_a_team_without_a_pack_capture_nothing(tmp_path: Path) -> None:
    from tests.store.cases.case_support import a_case

    async def main() -> list[int]:
        async with migrated_database(f"sqlite+aiosqlite:///{tmp_path / 's.db'}") as db:
            queued = []
            for n, (verdict, disposition, capture) in enumerate(
                [
                    ("true_positive", CaseDisposition.TRUE_POSITIVE, True),  # agrees
                    ("false_positive", CaseDisposition.BENIGN, True),  # both "nothing to do"
                    ("true_positive", CaseDisposition.DUPLICATE, True),  # says nothing
                    ("true_positive", CaseDisposition.FALSE_POSITIVE, False),  # no team pack
                    ("inconclusive", CaseDisposition.BENIGN, True),  # never agrees
                ]
            ):
                case = await a_case(db, f"run-{n}", alert_id=f"a-{n}", verdict=verdict)
                resolution = Resolution(disposition)
                await transitions.resolve(
                    db, case.id, "U1", resolution, seen=case.revision, via="cli", capture=capture
                )
                queued.append(len(await captures(db)))
            return queued

    assert asyncio.run(main()) == [0, 0, 0, 0, 1]


def test_what_was_cut_is_said() -> None:
    draft = Draft("t", "cloud", "o", "l", False, {}, {}, [])
    captured = Captured(draft, queries=4, cut_rows=2, skipped=["SELECT …"], cut_intel=1)
    said = cut_said(captured)
    assert said.startswith("cut: 2 of 4 query results were longer than the trace keeps (65536")
    assert "1 queries over several tables are not replayed" in said
    assert "1 intel answers were not kept whole" in said
