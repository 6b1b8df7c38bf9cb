"""The alert policy between intake and investigation, in the real app (``create_socbot``,
real SQLite, Web API = ``FakeSlackAPI``): genuine payloads POSTed to ``/alerts`` and
forwarded into an alert channel are ignored, routed, re-rated or held by a budget as
the rule files say, and ``/healthz`` counts what the policy did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import select

from bot.investigator import EngineInvestigator
from bot.slack.client import build_client
from bot.slack.pacer import Pacer
from bot.work.worker import ThreadRef
from cli.runtime import open_runtime
from config.policy_settings import PolicySettings
from config.settings import Settings
from store.schema import AlertRow, Investigation, PolicyHit
from store.triage.alerts import AlertStore
from store.triage.policy import PolicyStore
from tests.bot.scenarios.test_slack_storm import forwarded_event, posts_in
from tests.fakes.model import ScriptedModel, text_response
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import (
    ALERTS,
    WEBHOOK_CHANNEL,
    WEBHOOK_TOKEN,
    RecordingInvestigate,
    SlackHarness,
    make_settings,
)

FIXTURES = Path(__file__).parents[2] / "fixtures" / "alerts"
AUTH = {"Authorization": f"Bearer {WEBHOOK_TOKEN}"}
NOISE = "CNOISE001"
RULES = """
[[rule]]
id = "wazuh-ssh-hardening"
description = "SSH hardening findings on the manager are tracked in SEC-12"
action = "ignore"
match = { source = "wazuh", title = "SSH Hardening*" }

[[rule]]
id = "scc-to-cloud-team"
action = "route"
channel = "CNOISE001"
match = { source = "scc" }

[[rule]]
id = "guardduty-budget"
action = "investigate"
severity = "medium"
budget = { investigations = 1, per = "hour" }
match = { source = "guardduty" }
"""


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return data


def with_policy(settings: Settings, folder: Path) -> Settings:
    folder.mkdir(exist_ok=True)
    (folder / "10-team.toml").write_text(RULES)
    policy = PolicySettings(dir=str(folder), reload_s=0)
    return settings.model_copy(update={"policy": policy})


async def status_of(h: SlackHarness, alert_id: str) -> tuple[str | None, str | None]:
    async with h.db.session() as session:
        row = await session.get(AlertRow, alert_id)
        assert row is not None
        return row.status, row.severity


async def test_webhook_alerts_are_ignored_routed_rerated_and_held_by_budget(
    fake: FakeSlackAPI, investigate: RecordingInvestigate, tmp_path: Path
) -> None:
    settings = with_policy(make_settings(tmp_path, fake.base_url), tmp_path / "policy")
    async with SlackHarness(fake, settings, investigate) as h:
        ids = {}
        for name in (
            "wazuh-rootcheck.json",
            "warren-scc.json",
            "warren-guardduty.json",
            "leveret-guardduty-finding.json",
        ):
            response = await h.client.post("/alerts", json=fixture(name), headers=AUTH)
            assert response.status == 202
            ids[name] = (await response.json())["alert_id"]
            await h.settle()

        assert await status_of(h, ids["wazuh-rootcheck.json"]) == ("ignored", "low")
        assert await status_of(h, ids["leveret-guardduty-finding.json"]) == ("over_budget", "high")
        status, severity = await status_of(h, ids["warren-guardduty.json"])
        assert severity == "medium" and status != "over_budget"

        investigated = {alert.id: thread for thread, _, alert in investigate.calls if alert}
        assert set(investigated) == {ids["warren-scc.json"], ids["warren-guardduty.json"]}
        assert investigated[ids["warren-scc.json"]].channel == NOISE
        assert investigated[ids["warren-guardduty.json"]].channel == WEBHOOK_CHANNEL
        assert len(posts_in(fake, NOISE)) == 1  # the routed alert's card
        assert len(posts_in(fake, WEBHOOK_CHANNEL)) == 1  # only the guardduty card

        health = await (await h.client.get("/healthz")).json()
        assert health["policy"]["alerts"] == {
            "ignored": 1,
            "suppressed": 0,
            "routed": 1,
            "investigated": 1,
            "deferred": 1,
        }
        assert health["policy"]["rules"] == 3 and health["policy"]["rule_errors"] == 0

        scraped = await (await h.client.get("/metrics")).text()
        gauges = {
            sample.labels["outcome"]: sample.value
            for family in text_string_to_metric_families(scraped)
            if family.name == "socbot_policy_alerts"
            for sample in family.samples
        }
        assert gauges == {
            "ignored": 1.0,
            "suppressed": 0.0,
            "routed": 1.0,
            "investigated": 1.0,
            "deferred": 1.0,
        }


async def test_forwarded_alert_the_policy_ignores_gets_a_quiet_reaction(
    fake: FakeSlackAPI, investigate: RecordingInvestigate, tmp_path: Path
) -> None:
    settings = with_policy(make_settings(tmp_path, fake.base_url), tmp_path / "policy")
    async with SlackHarness(fake, settings, investigate) as h:
        ignored = forwarded_event(1, fixture("wazuh-rootcheck.json"))
        kept = forwarded_event(2, fixture("okta-event-hook.json"))
        for event in (ignored, kept):
            assert (await h.event(event))[0] == 200
        await h.settle()

        reactions = [c.args for c in fake.calls_to("reactions.add")]
        assert {"channel": ALERTS, "timestamp": ignored["event"]["ts"], "name": "no_bell"} in [
            {k: r[k] for k in ("channel", "timestamp", "name")} for r in reactions
        ]
        threads = [thread for thread, _, alert in investigate.calls if alert]
        assert threads == [ThreadRef(ALERTS, kept["event"]["ts"])]
        async with h.db.session() as session:
            statuses = (await session.execute(select(AlertRow.source, AlertRow.status))).all()
        assert ("wazuh", "ignored") in statuses


async def test_a_broken_rule_file_leaves_the_others_working(
    fake: FakeSlackAPI, investigate: RecordingInvestigate, tmp_path: Path
) -> None:
    settings = with_policy(make_settings(tmp_path, fake.base_url), tmp_path / "policy")
    (tmp_path / "policy" / "05-broken.toml").write_text('[[rule]]\nid = "x"\naction = "drop"\n')
    async with SlackHarness(fake, settings, investigate) as h:
        response = await h.client.post(
            "/alerts", json=fixture("wazuh-rootcheck.json"), headers=AUTH
        )
        await h.settle()
        alert_id = (await response.json())["alert_id"]
        assert (await status_of(h, alert_id))[0] == "ignored"
        health = await (await h.client.get("/healthz")).json()
        assert health["policy"]["rule_errors"] == 1 and health["policy"]["rules"] == 3


DIRECT_RULE = """
[[rule]]
id = "wazuh-direct"
description = "Wazuh hardening findings: a quick direct look, no plan"
action = "investigate"
mode = "direct"
match = { source = "wazuh" }
"""


async def investigate_wazuh(
    fake: FakeSlackAPI, tmp_path: Path, rule: str, model: ScriptedModel
) -> tuple[Investigation, list[PolicyHit]]:
    """The Wazuh fixture POSTed to ``/alerts`` under ``rule`` alone and investigated by the
    real engine on ``model``: its run, and the policy's hits."""
    folder = tmp_path / "policy"
    folder.mkdir()
    (folder / "rule.toml").write_text(rule)
    settings = make_settings(tmp_path, fake.base_url).model_copy(
        update={"policy": PolicySettings(dir=str(folder), reload_s=0)}
    )
    async with open_runtime(settings, backend=model) as rt:
        client = build_client(settings.slack, backoff_s=0.01)
        investigate = EngineInvestigator(
            rt.engine,
            client,
            AlertStore(rt.db),
            pacer=Pacer(rate_per_s=200),
            update_interval=0.02,
            policy=PolicyStore(rt.db),
        )
        async with SlackHarness(fake, settings, investigate, db=rt.db, client=client) as h:
            response = await h.client.post(
                "/alerts", json=fixture("wazuh-rootcheck.json"), headers=AUTH
            )
            assert response.status == 202
            await h.settle()
            async with rt.db.session() as session:
                run = (await session.scalars(select(Investigation))).one()
                hits = list((await session.scalars(select(PolicyHit))).all())
    return run, hits


async def test_a_rule_asks_the_engine_for_direct_mode(fake: FakeSlackAPI, tmp_path: Path) -> None:
    model = ScriptedModel({"direct": [text_response("Known hardening gap; no attack.")]})
    run, _ = await investigate_wazuh(fake, tmp_path, DIRECT_RULE, model)
    assert (run.kind, run.mode) == ("alert", "direct")
    assert [r.stage for r in model.requests] == ["direct"]  # no classifier, no planner


CHEAP_RULE = """
[[rule]]
id = "wazuh-cheap"
description = "Wazuh hardening findings: direct, on the cheapest model"
action = "investigate"
mode = "direct"
model = "gemini-2.5-flash-lite"
match = { source = "wazuh" }
"""


async def test_a_rule_runs_the_investigation_on_a_cheaper_model(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    assert Settings().gemini.model != "gemini-2.5-flash-lite"
    answer = text_response("Known hardening gap.", model_version="gemini-2.5-flash-lite")
    model = ScriptedModel({"direct": [answer]})
    run, hits = await investigate_wazuh(fake, tmp_path, CHEAP_RULE, model)
    assert [(r.stage, r.model) for r in model.requests] == [("direct", "gemini-2.5-flash-lite")]
    assert run.usage["models"] == {"gemini-2.5-flash-lite": 1}
    assert [(hit.rule_id, hit.mode, hit.model) for hit in hits] == [
        ("wazuh-cheap", "direct", "gemini-2.5-flash-lite")
    ]
