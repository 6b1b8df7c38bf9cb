"""Every disagreement becomes a regression case: the ``case_capture`` rows' runner.

A case resolved against socbot's verdict queues its row in the decision's transaction
(``store.cases.captures``) when ``evals.team_pack`` is set; ``socbot serve`` registers this
runner on every replica (one without the setting logs the row and leaves it). The row is
captured as ``socbot eval capture`` does (``evals.capture``: the alert as it arrived, the
rows and intel answers the trace kept), with the analyst's disposition (the blind
reviewer's, for an audited auto-resolution) as the expected verdict, into
``<evals.team_pack>/case-<id>``; ``socbot eval run --pack team`` replays it offline.

What was cut is said in the scenario's ``origin`` (shown by ``socbot eval list``): the
queries whose result was longer than the trace keeps (``core.events.STORED_RESULT_CHARS``:
only their whole rows are in the scenario), the queries over several tables (not replayed)
and the intel answers not kept whole (left out).

Once: the row is claimed by one replica; a retry after a crash writes the same folder
again (into ``.incoming/`` first, then moved in place), so a scenario is never half
written where ``load_pack`` looks, nor there twice. A case reopened, or resolved again
otherwise, before its row runs is not captured by that row (a later disagreeing
resolution queues its own).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from bot.work.contracts import ThreadRef
from bot.work.learning import Silent
from bot.work.worker import Coordinator
from config.settings import Settings
from core.events import STORED_RESULT_CHARS
from evals.capture import Captured, CaptureError, capture
from evals.writer import write_scenario
from store.cases import records
from store.db.engine import Database
from store.queue.work import Work
from store.schema import WorkKind

log = logging.getLogger(__name__)

INCOMING = ".incoming"  # no scenario.toml at its root: load_pack never reads it


class TeamCapture:
    """The ``Runner`` of ``case_capture`` rows (registered by ``socbot serve``)."""

    reporter = Silent("team capture")

    def __init__(self, db: Database, settings: Settings, coordinator: Coordinator) -> None:
        self.db = db
        self.settings = settings
        self.pack = Path(settings.evals.team_pack).expanduser()
        coordinator.register({WorkKind.CASE_CAPTURE: self}, reporter=self.reporter)

    async def run(self, thread: ThreadRef, work: Work) -> None:
        await self.capture(work.request)

    async def capture(self, request: dict[str, object]) -> Path | None:
        """Write the scenario of one row's request; its folder, or None when skipped."""
        case_id, disposition = int(str(request["case_id"])), str(request["disposition"])
        if not self.settings.evals.team_pack:  # queued by a replica configured otherwise
            log.warning("case %s not captured: evals.team_pack is not set here", case_id)
            return None
        audit = request.get("audit") is True  # a blind review of an auto-resolution
        case = await records.get(self.db, case_id)
        now = None if case is None else case.audit_disposition if audit else case.disposition
        if case is None or now != disposition:
            log.info("case %s was decided again before its capture: skipped", case_id)
            return None
        try:
            captured = await capture(
                self.db, self.settings, case.investigation_id, verdict=disposition
            )
        except CaptureError as error:  # nothing to replay (no stored alert): said, not retried
            log.warning("case %s not captured: %s", case_id, error)
            return None
        captured.draft.origin += (
            f"; case {case_id} {'blind-reviewed' if audit else 'resolved'} {disposition} "
            f"against socbot's "
            f"{case.socbot_verdict or 'no verdict'}; {cut_said(captured)}"
        )
        folder = self.pack / f"case-{case_id}"
        incoming = self.pack / INCOMING / folder.name
        write_scenario(incoming, captured.draft, replace=True)
        if folder.exists():
            shutil.rmtree(folder)
        incoming.rename(folder)
        log.info("case %s captured into %s", case_id, folder)
        return folder

    async def dropped(self, work: Work) -> None:
        log.warning("capture of case %s given up: %s", work.request.get("case_id"), work.error)


def cut_said(captured: Captured) -> str:
    """What the scenario lacks of what the investigation saw, in one sentence."""
    cut = []
    if captured.cut_rows:
        cut.append(
            f"{captured.cut_rows} of {captured.queries} query results were longer than the "
            f"trace keeps ({STORED_RESULT_CHARS} characters): only their whole rows are here"
        )
    if captured.skipped:
        cut.append(f"{len(captured.skipped)} queries over several tables are not replayed")
    if captured.cut_intel:
        cut.append(f"{captured.cut_intel} intel answers were not kept whole and are left out")
    return "cut: " + ("; ".join(cut) if cut else "nothing")
