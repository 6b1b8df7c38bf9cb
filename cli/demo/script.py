"""The demo's scripted investigation of ``examples/alerts/leveret-scc.json``, as data.

The SQL is real and runs against the bundled SYNTHETIC sample logs (``examples/data``);
``lookup_ip`` goes to the threat-intel tool. ``cli.demo.model`` plays it for ``socbot
demo``; the benchmarks' fake Gemini plays the same investigation (``bench.scripts``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

AUTH = "`socbot-sample.logs.auth_logs`"
AUDIT = "`socbot-sample.logs.gcp_audit_logs`"
FLOWS = "`socbot-sample.logs.vpc_flow_logs`"
DNS = "`socbot-sample.logs.dns_logs`"
WINDOW = (
    "event_time BETWEEN TIMESTAMP '2025-11-07 00:00:00+00' AND TIMESTAMP '2025-11-08 06:00:00+00'"
)

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

FINDINGS = (
    "Checked {what}. Found concrete values: 185.220.101.42 made 57 failed SSO sign-ins "
    "between 21:38 and 22:05 UTC, then j.doe@example.com signed in without MFA at 22:06:13; "
    "attacker@external-domain.com was granted roles/compute.admin at 22:19:40; "
    "web-server-prod-01 sent traffic to 195.123.245.89:4444 from 05:15:40. "
)

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class ScriptedStep:
    """One step of the plan: what the planner says of it, then the step's model turns —
    each a tuple of tool calls (run in parallel) — and its findings (the last turn)."""

    description: str
    expected: str
    tools: tuple[str, ...]
    turns: tuple[tuple[Call, ...], ...]
    findings: str


STEPS: dict[str, ScriptedStep] = {
    "s1": ScriptedStep(
        "Check sign-ins from 185.220.101.42 (auth_logs) and its reputation",
        "counts of failed/successful sign-ins per user, and whether the IP is known bad",
        ("query_logs", "lookup_ip"),
        ((("query_logs", {"sql": SPRAY_SQL}),), (("lookup_ip", {"ip": "185.220.101.42"}),)),
        FINDINGS.format(what="auth_logs and lookup_ip"),
    ),
    "s2": ScriptedStep(
        "Find IAM policy changes and what attacker@external-domain.com did (gcp_audit_logs)",
        "who granted which role when, and the attacker's API calls",
        ("query_logs",),
        ((("query_logs", {"sql": IAM_SQL}),), (("query_logs", {"sql": ATTACKER_SQL}),)),
        FINDINGS.format(what="gcp_audit_logs"),
    ),
    "s3": ScriptedStep(
        "Check egress of web-server-prod-01 to external hosts and its DNS lookups",
        "external destinations with bytes and first time seen; reputation of the top one",
        ("query_logs", "lookup_ip"),
        (
            (("query_logs", {"sql": EGRESS_SQL}),),
            (("lookup_ip", {"ip": "195.123.245.89"}), ("query_logs", {"sql": DNS_SQL})),
        ),
        FINDINGS.format(what="vpc_flow_logs, dns_logs, lookup_ip"),
    ),
}

OBJECTIVE = (
    "Establish whether the SCC XMRig alert on web-server-prod-01 is a real "
    "compromise, how the attacker got in and what they changed."
)

CLASSIFICATION: dict[str, Any] = {"needs_plan": True, "reason": "an investigation"}

REFLECTION: dict[str, Any] = {
    "achieved": True,
    "insights": ["Spray, IAM grant, mining"],
    "plan_updates": [],
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
    "techniques": [{"id": "T1110.003"}, {"id": "T1098.003"}, {"id": "T1496"}],
}

CRITIQUE: dict[str, Any] = {
    "score": 0.9,
    "criteria": {"answers_objective": 0.9, "grounded": 0.9, "consistent": 0.9, "actionable": 0.9},
    "issues": [],
}


def plan_json(step_ids: tuple[str, ...] = tuple(STEPS)) -> dict[str, Any]:
    """The planner's answer: the given steps, independent of each other."""
    return {
        "objective": OBJECTIVE,
        "steps": [
            {
                "id": step_id,
                "description": STEPS[step_id].description,
                "tools": list(STEPS[step_id].tools),
                "expected": STEPS[step_id].expected,
                "depends_on": [],
            }
            for step_id in step_ids
        ],
    }
