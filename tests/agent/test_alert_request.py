"""One request text for an alert: what Slack asks the engine is what an eval measures.

The same genuine alert (the bundled pack's first scenario) goes through the eval harness
(``cli.eval.run.run_eval``, its real runner) and through the Slack alert runner
(``bot.runners.AlertRunner``, reading the alert back from a real database); the engine's
``run`` is replaced by a recorder at the one seam both call, so the requests are compared
as the engine would receive them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.engine import Engine
from agent.run import Request, alert_request_text
from alerts.parse import parse_alert
from bot.runners import AlertRunner
from bot.work.contracts import ThreadRef
from cli.eval.run import run_eval
from config.settings import Settings
from evals.results import RunFolder
from evals.scenario import load_pack
from store.db.engine import Database
from store.queue.work import Work
from store.triage.alerts import AlertStore
from tests.fakes.eval_model import Answer, eval_model
from tests.slack_support import RecordingInvestigate


class Recorded(Exception):
    """Raised by the recording engine once it has seen the request."""


async def test_the_eval_asks_the_engine_what_slack_asks_it(
    tmp_path: Path, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = load_pack(None)[0]
    alert = parse_alert(scenario.alert)

    seen: list[Request] = []

    async def record(self: Engine, request: Request, sink: Any) -> Any:
        seen.append(request)
        raise Recorded

    monkeypatch.setattr(Engine, "run", record)
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'eval.db'}")
    model = eval_model([scenario], {scenario.id: Answer("right")})
    await run_eval(settings, [(scenario, 0)], RunFolder(tmp_path / "run"), backend=model)
    (evaluated,) = seen

    alerts = AlertStore(db)
    await alerts.save(alert)
    investigate = RecordingInvestigate()
    work = Work(1, "alert", "C0ALERTS", "1.0", "1.0", None, alert.id, {}, 1)
    await AlertRunner(alerts, investigate, {}).run(ThreadRef("C0ALERTS", "1.0"), work)
    ((_, slack_text, slack_alert),) = investigate.calls

    assert evaluated.text == slack_text == alert_request_text(alert)
    assert slack_alert is not None and evaluated.alert is not None
    # the same alert as data beside the text (each path parsed it with an id of its own)
    as_data = [a.model_dump(exclude={"id"}) for a in (evaluated.alert, slack_alert, alert)]
    assert as_data[0] == as_data[1] == as_data[2]
