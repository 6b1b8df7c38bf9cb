"""Every payload socbot's builders make, over hostile content, for the validity test.

Each builder of a message, update, ephemeral or dialog (``bot.blocks``, ``bot.decisions``,
``bot.slack``, ``bot.work``) is driven with what an attacker or a runaway model could put
in it: a 5,000-character title, 200 entities and indicators, a 60,000-character answer,
mentions (``<!channel>``, ``<@U…>``, ``@here``), links, code fences and markdown marks.
``messages()`` and ``views()`` yield ``(name, payload)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from agent.concluder import Conclusion, KeyFinding, Technique
from agent.planner import Plan, Step
from agent.review.critic import Review
from agent.review.grounding import FindingCheck
from alerts.model import Alert, Entity, Indicator
from bot.blocks import cards, case, case_audit, investigation, pane
from bot.blocks.kit import notice_message
from bot.blocks.stats import RunStats
from bot.blocks.status import StatusView
from bot.decisions import _approval_message as approval
from bot.decisions import (
    _case_dialog,
    _playbook_dialog,
    _suppression_dialog,
    approvals,
    playbook_review,
    votes,
)
from bot.events import listeners, middleware
from bot.work import contracts, run_link
from core.approvals import ApprovalRequest
from core.events import Failed, PlanUpdated, StepStarted, ToolCalled
from store.approvals import Approval
from store.playbook.bullets import PlaybookBullet
from store.schema import ApprovalStatus
from store.triage.suppressions import Suppression

INJECT = (
    "<!channel> <!here> @everyone <@U0ADMIN> <!subteam^S1> <https://evil.example|docs> "
    "```\nclosed early``` *bold* _it_ ~s~ `tick` &amp; 185.220.101.42 https://x.lol/a "
)
TITLE = ("Suspicious " + INJECT) * 40 + "T" * 5000  # well over 5,000 characters
LONG = INJECT * 30  # ~4,000 characters, with fences
ANSWER = "\n\n".join(
    f"## Part {n}\n{INJECT}\n```sql\nSELECT {n}\n```\n" + "x " * 400 for n in range(60)
)
NOW = datetime(2026, 11, 28, 6, 0, tzinfo=UTC)
ID = "a1b2c3d4e5f6"

Payload = dict[str, Any]


def alert() -> Alert:
    indicators = [Indicator(kind="ipv4", value=f"185.220.{n // 250}.{n % 250}") for n in range(200)]
    indicators.append(Indicator(kind="domain", value="x" * 3000 + ".lol"))
    entities = [Entity(kind="user", value=f"{INJECT}{n}", role=INJECT) for n in range(200)]
    return Alert(
        id=INJECT,
        source=INJECT,
        title=TITLE,
        severity=INJECT,
        event_time=NOW,
        indicators=indicators,
        entities=entities,
        raw={"title": TITLE},
    )


def conclusion() -> Conclusion:
    return Conclusion(
        verdict="true_positive",
        severity="high",
        confidence="medium",
        summary=LONG * 2,
        key_findings=[KeyFinding(finding=LONG, evidence=LONG) for _ in range(200)],
        uncertainties=[LONG] * 50,
        recommendations=[LONG] * 50,
        techniques=[Technique(id=INJECT, name=LONG, tactic=INJECT)] * 30,
    )


def review() -> Review:
    checks = [FindingCheck(index=n, verified=False, problems=[LONG]) for n in range(200)]
    return Review(
        status="kept",
        findings=200,
        verified=0,
        unverified=checks,
        verdict_problems=[LONG] * 20,
        technique_notes=[LONG] * 20,
    )


def plan() -> Plan:
    steps = [
        Step(id=f"s{n}", description=LONG, tools=["q"], expected=LONG, status="pending")
        for n in range(60)
    ]
    return Plan(objective=TITLE, steps=steps)


STATS = RunStats(duration_s=9999.0, model_calls=999, cost_usd=12.5, privacy=INJECT)


def investigation_messages() -> Iterator[tuple[str, Payload]]:
    kwargs: dict[str, Any] = {"investigation_id": ID, "pages_url": "https://socbot.example"}
    for n, m in enumerate(
        investigation.conclusion_messages(
            conclusion(),
            limits_hit=[LONG] * 5,
            indicators=[INJECT],
            review=review(),
            stats=STATS,
            suppress=True,
            case=[case.case_actions(ID)],
            **kwargs,
        )
    ):
        yield f"conclusion part {n + 1}", m
    for audit in (False, True):  # a case socbot closed itself: its state, Review…, Reopen
        closed = case_audit.auto_resolved_state(10**9, rule=INJECT + LONG, audit=audit)
        auto = investigation.conclusion_messages(
            conclusion(), limits_hit=[], stats=STATS, suppress=True, case=closed, **kwargs
        )
        for n, m in enumerate(auto):
            yield f"auto-resolved conclusion audit={audit} part {n + 1}", m
    in_pane = investigation.conclusion_messages(
        conclusion(), limits_hit=[LONG], review=review(), stats=STATS, element=True, **kwargs
    )
    for n, m in enumerate(in_pane):
        yield f"pane conclusion part {n + 1}", m
    yield "pane greeting", pane.greeting_message()
    answers = investigation.answer_messages(ANSWER, review=review(), stats=STATS, **kwargs)
    for n, m in enumerate(answers):
        yield f"answer part {n + 1}", m
    for n, m in enumerate(investigation.answer_messages("", investigation_id=None)):
        yield f"empty answer {n}", m
    yield "plan", investigation.plan_message(plan(), status_line=LONG, **kwargs)
    view = StatusView((INJECT,), "https://socbot.example")
    view.note = run_link.INTERRUPTED.format(old=ID)
    events: list[Any] = [
        PlanUpdated(investigation_id=ID, plan=plan().model_dump(), changes=[LONG] * 10),
        StepStarted(investigation_id=ID, step_id="s1" * 200, description=LONG),
        ToolCalled(
            investigation_id=ID,
            tool=INJECT,
            step_id=INJECT,
            args={},
            ok=False,
            duration_ms=1,
            result_chars=1,
            truncated=False,
        ),
        Failed(investigation_id=ID, reason=LONG),
    ]
    for event in events:
        view.apply(event)
        yield f"status after {event.type}", view.render()
    view.cancelled()
    yield "status cancelled", view.render()
    yield "error", investigation.error_message(LONG)
    yield "still working", investigation.still_working_message()
    yield "queued", investigation.queued_message(10**9)
    yield "cancelled", investigation.cancelled_message()
    yield "gave up", notice_message(contracts.gave_up(10**9))


def card_messages() -> Iterator[tuple[str, Payload]]:
    a = alert()
    yield "alert card", cards.alert_card(a)
    yield "moved card (link)", cards.moved_card(a, thread="https://x.slack.com/p1", ts="1.2")
    yield "moved card (ts)", cards.moved_card(a, thread=INJECT, ts=INJECT)
    yield "group card", cards.group_card(a, similar=10**9, verdict=INJECT)
    yield "group note", cards.group_note(similar=10**9, verdict=LONG)
    counts = {key: 10**9 for key, _ in cards.STORM_LINES}
    for over in (False, True):
        yield f"storm over={over}", cards.storm_message(counts, since=INJECT, over=over)


def decision_messages() -> Iterator[tuple[str, Payload]]:
    for action in ("taken", "assigned", "reopened", "resolved"):
        message = case.decision_message(
            action,
            case_id=10**9,
            actor=INJECT,
            owner="U0OWNER1",
            disposition=INJECT,
            socbot_verdict="benign",
            escalated=True,
            reason=LONG,
            missed=LONG,
        )
        yield f"case {action}", message
    yield (
        "case reopened with its actions",
        case.decision_message(
            "reopened", case_id=10**9, actor=INJECT, owner=INJECT, actions_for=ID * 40
        ),
    )
    for audit in (False, True):
        yield (
            f"case auto-resolved audit={audit}",
            case_audit.auto_resolved_message(10**9, rule=INJECT, disposition=INJECT, audit=audit),
        )
    yield (
        "case audited",
        case_audit.audited_message(10**9, actor=INJECT, answer=INJECT, socbot_verdict=INJECT),
    )
    yield (
        "case reminder",
        case.reminder_message(
            ID * 30, severity=INJECT, waited=timedelta(days=999), oncall="S0ONCALL"
        ),
    )
    request = ApprovalRequest(
        tool=INJECT, args={"sql": "SELECT 1 ```\n<!channel>" * 500}, why=LONG, estimate=LONG
    )
    request = ApprovalRequest(**{**request.__dict__, "investigation_id": INJECT})
    blocks = approval.request_blocks(10**9, request, approvers="<@U0ADMIN>")
    yield "approval request", {"text": f"Approval needed to run {request.tool}", "blocks": blocks}
    decided = Approval(
        id=1,
        key="k",
        tool=INJECT,
        why=LONG,
        estimate=LONG,
        requested_by="U1",
        status=ApprovalStatus.APPROVED,
        channel="C1",
        message_ts="1.2",
        expires_at=NOW,
        decided_by="U0ADMIN",
        decided_at=NOW,
    )
    yield "approval decided", {"text": "Approval", "blocks": approval.decided_blocks(decided)}
    for status in ("proposed", "approved", "rejected", "lifted"):
        yield (
            f"suppression {status}",
            {"text": "s", "blocks": _suppression_dialog.review_blocks(suppression(status))},
        )
    bullet = playbook_bullet()
    blocks = playbook_review.proposal_blocks(bullet, [bullet] * 30, evidence_chars=2000)
    yield "playbook proposal", {"text": "Playbook proposal", "blocks": blocks}
    decided_blocks = playbook_review.decided_blocks(bullet, "U0ADMIN", "approved")
    yield "playbook decided", {"text": "Playbook proposal", "blocks": decided_blocks}


def suppression(status: str) -> Suppression:
    entities = [{"kind": INJECT, "value": LONG, "role": INJECT}] * 10
    return Suppression(
        id=10**9,
        status=status,
        rule={"match": {"source": INJECT, "title": LONG, "entity": entities}},
        reason=LONG,
        alert_id=INJECT,
        expires_at=NOW,
        proposed_by="U1",
        proposed_at=NOW,
        decided_by="U2",
        decided_at=NOW,
        lifted_by="U3",
        lifted_at=NOW,
        review_ts="1.2",
    )


def playbook_bullet() -> PlaybookBullet:
    evidence = {"ground_truth": LONG, "alert": LONG, "insight": {"key_insight": LONG}}
    provenance = {"reason": LONG, "evidence": evidence, "investigations": [INJECT] * 50}
    return PlaybookBullet(id="pb-" + "x" * 300, content=LONG, scope=INJECT, provenance=provenance)


def ephemerals() -> Iterator[tuple[str, Payload]]:
    texts = {
        "approval not allowed": approvals.NOT_ALLOWED,
        "approval own request": approvals.OWN_REQUEST,
        "approval closed": approvals.CLOSED,
        "vote refused": votes.REFUSED,
        "usage": listeners.USAGE,
        "gate": middleware.NOT_ALLOWED,
        "restarted": contracts.RESTARTED,
        **{f"refused {k}": v for k, v in contracts.REFUSED.items()},
    }
    for name, text in texts.items():
        yield f"ephemeral {name}", {"text": text}


def messages() -> Iterator[tuple[str, Payload]]:
    yield from investigation_messages()
    yield from card_messages()
    yield from decision_messages()
    yield from ephemerals()


def views() -> Iterator[tuple[str, Payload]]:
    yield "feedback dialog", votes.verdict_modal(ID * 40, INJECT, INJECT)
    target = _case_dialog.Target(10**9, "C" * 30, "1" * 30)
    for initial in (None, "benign"):
        yield f"resolve dialog {initial}", _case_dialog.resolve_dialog(target, "benign", initial)
    yield "playbook edit", _playbook_dialog.edit_view(playbook_bullet(), "C1", "1.2")
    metadata = {"alert_id": ID, "channel": "C" * 30, "ts": "1" * 30}
    yield "suppress dialog", _suppression_dialog.dialog(alert(), metadata, days=30, max_days=90)
