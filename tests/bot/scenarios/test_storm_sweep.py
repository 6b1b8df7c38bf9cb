"""The triage's sweep runs every ``slack.storm_sweep_s``: an alert a killed process stored
(``received``, it got its 202) but never placed is placed and investigated by the sweep
of a live replica, with no request or restart to trigger it. The real app on SQLite;
the alert is a genuine sample (``tests/fixtures/alerts/NOTICE``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from alerts.parse import parse_alert
from config.service_settings import SlackSettings
from store.db.engine import Database
from store.triage.alerts import AlertStore
from store.triage.states import AlertStatuses
from tests.fakes.signals import writes
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import RecordingInvestigate, SlackHarness, make_settings

SAMPLE = Path(__file__).parents[2] / "fixtures" / "alerts" / "leveret-guardduty.json"


async def test_an_alert_left_received_is_placed_by_the_periodic_sweep(
    fake: FakeSlackAPI, tmp_path: Path, db: Database
) -> None:
    settings = make_settings(tmp_path, fake.base_url, storm_sweep_s=0.1)
    investigate = RecordingInvestigate()
    async with SlackHarness(fake, settings, investigate, db=db) as h:
        triage = h.app.triage
        assert triage is not None and triage.sweeper.period_s == 0.1  # the setting, used
        # after start-up's own sweep: what a replica killed between its 202 and triage left
        alert = parse_alert(json.loads(SAMPLE.read_text()))
        await AlertStore(db).save(alert, status="received")

        async def placed() -> bool:
            return (await AlertStatuses(db).counts()).get("received", 0) == 0

        await writes(db).until(placed)
        await investigate.wait_started()
        await h.settle()
    [(_thread, _text, investigated)] = investigate.calls
    assert investigated is not None and investigated.id == alert.id


@pytest.mark.parametrize("period", [0, 0.05, 61, -1])
def test_the_sweep_period_is_bounded(period: float) -> None:
    with pytest.raises(ValidationError, match="storm_sweep_s"):
        SlackSettings(storm_sweep_s=period)


def test_the_sweep_period_defaults_to_two_seconds() -> None:
    assert SlackSettings().storm_sweep_s == 2.0
