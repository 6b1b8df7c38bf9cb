"""What the replica tests and ``bench.bench_replicas`` send to ``socbot serve``
processes (``tests/serve_cluster.py``): their settings file, signed Slack events, webhook
alerts, and what the fake Gemini answers."""

from __future__ import annotations

import itertools
import json
from typing import Any

import httpx

from bench.bench_slack import WEBHOOK_TOKEN, signed
from bench.fake_gemini import GeminiRequest, Responder, Turn
from tests.fakes.slack_api import BOT_USER_ID
from tests.serve_cluster import ANSWER, SOC, SUMMARY, WEBHOOK_CHANNEL, Replica

# requests to the replicas -----------------------------------------------------------


_messages = itertools.count(1)


def mention(n: int, run: str, *, user: str = "UANALYST1", channel: str = SOC) -> dict[str, Any]:
    """An ``app_mention`` delivery (the shape of tests/fixtures/slack/app_mention.json),
    in a new thread of its own; its text ends with ``(case RUN-N)``."""
    ts = f"{1_700_000_000 + next(_messages)}.{n:06d}"
    return {
        "token": "fake-verification-token",
        "team_id": "T0TEST01",
        "api_app_id": "A0SOCBOT01",
        "event": {
            "user": user,
            "type": "app_mention",
            "ts": ts,
            "text": f"<@{BOT_USER_ID}> is 185.220.101.42 known bad? (case {run}-{n})",
            "team": "T0TEST01",
            "channel": channel,
            "event_ts": ts,
        },
        "type": "event_callback",
        "event_id": f"Ev{run}{n:06d}",
        "event_time": 1_700_000_000 + n,
        "authorizations": [
            {"team_id": "T0TEST01", "user_id": BOT_USER_ID, "is_bot": True, "enterprise_id": None}
        ],
        "is_ext_shared_channel": False,
    }


def deliver(replica: Replica, event: dict[str, Any], retry: int = 0) -> int:
    """POST a signed event to ``replica``'s ``/slack/events`` (``retry``: Slack's retry
    number header); returns the HTTP status."""
    body = json.dumps(event)
    headers = signed(body)
    if retry:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    response = httpx.post(f"{replica.url}/slack/events", content=body, headers=headers, timeout=30)
    return response.status_code


def post_alert(replica: Replica, alert: str, source: str | None = None) -> httpx.Response:
    """POST an alert (JSON text) to ``replica``'s ``/alerts``."""
    params = {"source": source} if source else None
    headers = {"Authorization": f"Bearer {WEBHOOK_TOKEN}", "Content-Type": "application/json"}
    return httpx.post(
        f"{replica.url}/alerts", content=alert, headers=headers, params=params, timeout=30
    )


def settings_toml(
    *, limit: int, lease_s: float, poll_s: float, grace_s: float = 1.0, per_replica: int = 0
) -> str:
    """The replicas' settings file: webhook alerts on, review and learning off (fewer
    model calls), ``limit`` investigations at once across the replicas (``per_replica``
    of them on one replica, when given), short leases."""
    one = f"max_running_per_replica = {per_replica}" if per_replica else ""
    return f"""
[slack]
webhook_channel = "{WEBHOOK_CHANNEL}"
max_concurrent_investigations = {limit}
max_queued_investigations = 1000
alert_group_window_s = 0

[review]
enabled = false

[learning]
enabled = false

[work]
lease_s = {lease_s}
poll_s = {poll_s}
shutdown_grace_s = {grace_s}
{one}
max_running_per_user = {limit}
max_running_per_channel = {limit}
max_queued_per_user = 1000
max_queued_per_channel = 1000
"""


# what the fake Gemini answers ---------------------------------------------------------


def script() -> dict[str, Responder]:
    """Mentions are answered directly; alerts get a one-step plan whose step searches
    the past alerts (a real tool on the replicas' database) and a conclusion."""
    plan = {
        "objective": "Decide whether the alert is a real compromise.",
        "steps": [
            {
                "id": "s1",
                "description": "Search past alerts for the same indicators",
                "tools": ["search_past_alerts"],
                "expected": "earlier alerts with their verdicts",
                "depends_on": [],
            }
        ],
    }
    step = [
        Turn.call(("search_past_alerts", {"text": "alert"})),
        Turn(text="Searched past alerts: none match (count 0)."),
    ]
    conclusion = {
        "verdict": "inconclusive",
        "severity": "medium",
        "confidence": "low",
        "summary": SUMMARY,
        "key_findings": [
            {"finding": "No past alert matches", "evidence": "s1", "evidence_refs": ["s1#1"]}
        ],
        "uncertainties": ["Only past alerts were checked"],
        "recommendations": ["Review the alert by hand"],
    }

    def step_turn(request: GeminiRequest) -> Turn:
        return step[min(request.model_turns, len(step) - 1)]

    return {
        "classifier": lambda _r: Turn.json({"needs_plan": False, "reason": "a quick question"}),
        "direct": lambda _r: Turn(text=ANSWER),
        "planner": lambda _r: Turn.json(plan),
        "step": step_turn,
        "reflector": lambda _r: Turn.json({"achieved": True, "insights": [], "plan_updates": []}),
        "concluder": lambda _r: Turn.json(conclusion),
    }
