"""Scripted investigations for the fake Gemini: what each stage answers.

All responders are stateless: a step answers according to how many model turns its
contents already hold, so concurrent investigations share one script. The SQL is
real and runs against the bundled DuckDB sample (``examples/data``); ``lookup_ip``
goes to the fake threat-intel server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bench.fake_gemini import GeminiRequest, Responder, Turn

AUTH = "`socbot-sample.logs.auth_logs`"
AUDIT = "`socbot-sample.logs.gcp_audit_logs`"
FLOWS = "`socbot-sample.logs.vpc_flow_logs`"
DNS = "`socbot-sample.logs.dns_logs`"
WINDOW = (
    "event_time BETWEEN TIMESTAMP '2025-11-07 00:00:00+00' AND TIMESTAMP '2025-11-08 06:00:00+00'"
)
THINK = 120  # thinking tokens reported for main-model turns

SPRAY_SQL = (
    f"SELECT user_name, result, COUNT(*) AS n, MIN(event_time) AS first_seen, "
    f"MAX(event_time) AS last_seen FROM {AUTH} WHERE src_ip = '185.220.101.42' AND {WINDOW} "
    "GROUP BY user_name, result ORDER BY n DESC"
)
IAM_SQL = (
    f"SELECT event_time, principal_email, caller_ip, method_name, request_summary FROM {AUDIT} "
    f"WHERE method_name = 'SetIamPolicy' AND {WINDOW} ORDER BY event_time"
)
ATTACKER_SQL = (
    f"SELECT method_name, COUNT(*) AS n, MIN(event_time) AS first_seen FROM {AUDIT} "
    f"WHERE principal_email = 'attacker@external-domain.com' AND {WINDOW} "
    "GROUP BY method_name ORDER BY first_seen"
)
EGRESS_SQL = (
    f"SELECT dst_ip, dst_port, COUNT(*) AS flows, SUM(bytes_sent) AS bytes, "
    f"MIN(event_time) AS first_seen FROM {FLOWS} WHERE src_instance = 'web-server-prod-01' "
    f"AND remote_country IS NOT NULL AND {WINDOW} GROUP BY dst_ip, dst_port ORDER BY bytes DESC"
)
DNS_SQL = (
    f"SELECT query_name, answer, MIN(event_time) AS first_seen FROM {DNS} "
    f"WHERE source_instance = 'web-server-prod-01' AND {WINDOW} GROUP BY query_name, answer"
)
RAW_SQL = f"SELECT * FROM {FLOWS} WHERE {WINDOW} ORDER BY event_time LIMIT 200"

FINDINGS = (
    "Checked {what}. Found concrete values: 185.220.101.42 made 57 failed SSO sign-ins "
    "between 21:38 and 22:05 UTC, then j.doe@example.com signed in without MFA at 22:06:13; "
    "attacker@external-domain.com was granted roles/compute.admin at 22:19:40; "
    "web-server-prod-01 sent traffic to 195.123.245.89:4444 from 05:15:40. "
)

STEPS: dict[str, tuple[str, str, list[str], list[Turn]]] = {
    "s1": (
        "Check sign-ins from 185.220.101.42 (auth_logs) and its reputation",
        "counts of failed/successful sign-ins per user, and whether the IP is known bad",
        ["query_logs", "lookup_ip"],
        [
            Turn.call(("query_logs", {"sql": SPRAY_SQL}), thoughts_tokens=THINK),
            Turn.call(("lookup_ip", {"ip": "185.220.101.42"}), thoughts_tokens=THINK),
            Turn(text=FINDINGS.format(what="auth_logs and lookup_ip"), thoughts_tokens=THINK),
        ],
    ),
    "s2": (
        "Find IAM policy changes and what attacker@external-domain.com did (gcp_audit_logs)",
        "who granted which role when, and the attacker's API calls",
        ["query_logs"],
        [
            Turn.call(("query_logs", {"sql": IAM_SQL}), thoughts_tokens=THINK),
            Turn.call(("query_logs", {"sql": ATTACKER_SQL}), thoughts_tokens=THINK),
            Turn(text=FINDINGS.format(what="gcp_audit_logs"), thoughts_tokens=THINK),
        ],
    ),
    "s3": (
        "Check egress of web-server-prod-01 to external hosts and its DNS lookups",
        "external destinations with bytes and first time seen; reputation of the top one",
        ["query_logs", "lookup_ip"],
        [
            Turn.call(("query_logs", {"sql": EGRESS_SQL}), thoughts_tokens=THINK),
            Turn.call(
                ("lookup_ip", {"ip": "195.123.245.89"}),
                ("query_logs", {"sql": DNS_SQL}),
                thoughts_tokens=THINK,
            ),
            Turn(
                text=FINDINGS.format(what="vpc_flow_logs, dns_logs, lookup_ip"),
                thoughts_tokens=THINK,
            ),
        ],
    ),
}

CONCLUSION: dict[str, Any] = {
    "verdict": "true_positive",
    "severity": "critical",
    "confidence": "high",
    "summary": "A password spray from 185.220.101.42 compromised j.doe@example.com; the "
    "attacker granted itself compute.admin and started XMRig on web-server-prod-01.",
    "key_findings": [
        {
            "finding": "Password spray then a sign-in without MFA",
            "evidence": "auth_logs s1",
            "evidence_refs": ["s1#1"],
        },
        {
            "finding": "roles/compute.admin granted to an external account",
            "evidence": "s2",
            "evidence_refs": ["s2#1"],
        },
        {
            "finding": "Mining pool traffic from web-server-prod-01",
            "evidence": "s3",
            "evidence_refs": ["s3#1"],
        },
    ],
    "uncertainties": ["Whether other instances were touched"],
    "recommendations": ["Revoke the IAM binding", "Stop web-server-prod-01", "Reset j.doe"],
}


CRITIQUE: dict[str, Any] = {
    "score": 0.9,
    "criteria": {"answers_objective": 0.9, "grounded": 0.9, "consistent": 0.9, "actionable": 0.9},
    "issues": [],
}


def _by_position(turns: Sequence[Turn]) -> Responder:
    def respond(request: GeminiRequest) -> Turn:
        return turns[min(request.model_turns, len(turns) - 1)]

    return respond


def _const(turn: Turn) -> Responder:
    return lambda _request: turn


def _step_router(steps: Mapping[str, Sequence[Turn]]) -> Responder:
    def respond(request: GeminiRequest) -> Turn:
        step_id = request.stage.split(" ", 1)[1] if " " in request.stage else ""
        return _by_position(steps[step_id])(request)

    return respond


def plan_json(step_ids: Sequence[str], *, chain: bool = False) -> dict[str, Any]:
    """The planner's answer for the given steps (independent, or each after the previous)."""
    steps = []
    for i, step_id in enumerate(step_ids):
        description, expected, tools, _ = _chain_step(step_id) if chain else STEPS[step_id]
        steps.append(
            {
                "id": step_id,
                "description": description,
                "tools": tools,
                "expected": expected,
                "depends_on": [step_ids[i - 1]] if chain and i else [],
            }
        )
    return {
        "objective": "Establish whether the SCC XMRig alert on web-server-prod-01 is a real "
        "compromise, how the attacker got in and what they changed.",
        "steps": steps,
    }


def three_steps(*, achieved: bool = True) -> dict[str, Responder]:
    """Planner → 3 independent steps (3 model calls each, 4 tool calls) → reflect → conclude."""
    return {
        "classifier": _const(Turn.json({"needs_plan": True, "reason": "an investigation"})),
        "planner": _const(Turn.json(plan_json(["s1", "s2", "s3"]), thoughts_tokens=400)),
        "step": _step_router({k: v[3] for k, v in STEPS.items()}),
        "reflector": _const(
            Turn.json(
                {
                    "achieved": achieved,
                    "insights": ["Spray, IAM grant, mining"],
                    "plan_updates": [],
                },
                thoughts_tokens=200,
            )
        ),
        "concluder": _const(Turn.json(CONCLUSION, thoughts_tokens=300)),
        "critic": _const(Turn.json(CRITIQUE)),
        "direct": _const(Turn(text="185.220.101.42 is a known Tor exit node.")),
    }


def _chain_step(step_id: str) -> tuple[str, str, list[str], list[Turn]]:
    findings = f"{step_id}: " + FINDINGS.format(what=f"vpc_flow_logs for {step_id}") * 3
    return (
        f"Step {step_id}: review raw VPC flows of the window for anything new",
        "notable flows with timestamps",
        ["query_logs"],
        [Turn.call(("query_logs", {"sql": RAW_SQL}), thoughts_tokens=THINK), Turn(text=findings)],
    )


def chain(n: int) -> dict[str, Responder]:
    """Planner → ``n`` steps, each depending on the previous; every step fetches 200 raw
    rows (a large tool result) and reports ~1 KB of findings. Reflector never stops early."""
    ids = [f"s{i}" for i in range(1, n + 1)]
    return {
        "classifier": _const(Turn.json({"needs_plan": True, "reason": "an investigation"})),
        "planner": _const(Turn.json(plan_json(ids, chain=True))),
        "step": _step_router({i: _chain_step(i)[3] for i in ids}),
        "reflector": _const(Turn.json({"achieved": False, "insights": [], "plan_updates": []})),
        "concluder": _const(Turn.json(CONCLUSION)),
        "critic": _const(Turn.json(CRITIQUE)),
    }


INVENTED_IP = "198.51.100.77"  # in no tool result: the code check flags the finding


def review_rewrites() -> dict[str, Responder]:
    """``three_steps`` whose first conclusion quotes an IP no tool returned: the critic
    scores it low, the rewrite (asked with the review's issues) is grounded and passes."""

    def concluder(request: GeminiRequest) -> Turn:
        if "## Review of your previous draft" in request.user_text():
            return Turn.json(CONCLUSION, thoughts_tokens=300)
        bad = {
            "finding": f"{INVENTED_IP} also signed in",
            "evidence": "auth_logs",
            "evidence_refs": ["s1#1"],
        }
        draft = {**CONCLUSION, "key_findings": [*CONCLUSION["key_findings"], bad]}
        return Turn.json(draft, thoughts_tokens=300)

    def critic(request: GeminiRequest) -> Turn:
        if INVENTED_IP not in request.user_text():
            return Turn.json(CRITIQUE)
        issue = f"key_findings[3] quotes {INVENTED_IP}, which no cited result contains: drop it"
        scores = dict.fromkeys(CRITIQUE["criteria"], 0.5)
        return Turn.json({"score": 0.5, "criteria": scores, "issues": [issue]})

    return {**three_steps(), "concluder": concluder, "critic": critic}
