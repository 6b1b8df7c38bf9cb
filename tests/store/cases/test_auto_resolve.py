"""socbot resolving its own conclusions (store/cases/auto.py) on SQLite and PostgreSQL: the
rule's gate, one decision across retries and replicas, the audit drawn per rule and its
answer recorded once."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from random import Random

from sqlalchemy import select

from core.quality import wilson
from store.cases import auto, records, report, transitions
from store.cases.opening import open_for_run
from store.cases.transitions import SOCBOT, Resolution
from store.db.engine import Database
from store.schema import (
    CaseAction,
    CaseDisposition,
    CaseStatus,
    WorkKind,
    WorkRow,
    utcnow,
)
from tests.store.cases.auto_support import a_rule, concluded_case, let_through, resolver
from tests.store.cases.case_support import CHANNEL, concluded

AUTO = a_rule(auto_resolve=True)


async def case_posts(db: Database) -> list[tuple[str, dict[str, object]]]:
    async with db.session() as session:
        rows = await session.scalars(
            select(WorkRow).where(WorkRow.kind == WorkKind.CASE_POST).order_by(WorkRow.id)
        )
        return [(r.thread, dict(r.request)) for r in rows]


async def test_a_rule_that_says_so_closes_a_confident_false_positive(any_db: Database) -> None:
    case = await concluded_case(any_db, 1, AUTO)
    done = await resolver(any_db)(case)
    assert done is not None
    now = await records.get(any_db, case.id)
    assert now is not None
    assert (now.status, now.disposition, now.auto_resolved) == (
        CaseStatus.RESOLVED,
        "false_positive",
        True,
    )
    assert (now.owner, now.resolved_by, now.revision) == (SOCBOT, SOCBOT, 2)
    assert now.resolved_at is not None and now.acknowledged_at is None
    assert (now.audit, now.audit_disposition, now.policy_rule) == (False, None, "gd-noise")
    [opened, closed] = await records.history(any_db, case.id)
    assert opened.action == CaseAction.OPENED
    assert (closed.action, closed.actor, closed.via) == (CaseAction.AUTO_RESOLVED, SOCBOT, "auto")
    assert closed.detail == {"rule": "gd-noise", "confidence": "high", "audit": False}
    # told after the conclusion: on the run's own work thread, not the case's
    assert await case_posts(any_db) == [
        (f"slack:{CHANNEL}:1700000000.000001", {"case_id": case.id, "revision": 2})
    ]


async def test_benign_closes_too(any_db: Database) -> None:
    case = await concluded_case(any_db, 1, AUTO, verdict="benign")
    assert await resolver(any_db)(case) is not None
    assert (await records.get(any_db, case.id)).disposition == "benign"  # type: ignore[union-attr]


async def refused(db: Database, case_id: int) -> None:
    now = await records.get(db, case_id)
    assert now is not None
    assert (now.status, now.auto_resolved, now.revision, now.owner) == (
        CaseStatus.OPEN,
        False,
        1,
        None,
    )
    assert await case_posts(db) == []


async def test_no_rule_or_a_rule_without_it_closes_nothing(any_db: Database) -> None:
    bare = await concluded_case(any_db, 1, None)
    plain = await concluded_case(any_db, 2, a_rule())
    for case in (bare, plain):
        assert await resolver(any_db)(case) is None
        await refused(any_db, case.id)


async def test_the_gate_refuses_what_the_rule_does_not_allow(any_db: Database) -> None:
    cases = [
        await concluded_case(any_db, 1, AUTO, verdict="true_positive"),
        await concluded_case(any_db, 2, AUTO, verdict="inconclusive"),
        await concluded_case(any_db, 3, AUTO, confidence="medium"),
        await concluded_case(any_db, 4, AUTO, severity="critical"),
        await concluded_case(any_db, 5, a_rule(auto_resolve={"verdicts": ["benign"]})),
    ]
    for case in cases:
        assert await resolver(any_db)(case) is None
        await refused(any_db, case.id)


async def test_allow_critical_and_a_lower_threshold(any_db: Database) -> None:
    critical = await concluded_case(
        any_db, 1, a_rule(auto_resolve=True, allow_critical=True), severity="critical"
    )
    medium = await concluded_case(
        any_db, 2, a_rule("med", auto_resolve={"confidence": "medium"}), confidence="medium"
    )
    assert await resolver(any_db)(critical) is not None
    assert await resolver(any_db)(medium) is not None


async def test_the_latest_decision_that_let_it_through_counts(any_db: Database) -> None:
    await let_through(any_db, "alert-1", AUTO)
    case = await concluded_case(any_db, 1, a_rule("later"))  # a later decision: no auto
    assert await resolver(any_db)(case) is None


async def test_a_routed_alert_counts_a_held_one_does_not(any_db: Database) -> None:
    await let_through(any_db, "alert-1", a_rule("held", auto_resolve=True), "deferred")
    held = await concluded_case(any_db, 1, None)
    assert await resolver(any_db)(held) is None  # only a decision that let it through
    await let_through(any_db, "alert-2", a_rule("routed", auto_resolve=True), "routed")
    routed = await concluded_case(any_db, 2, None)
    done = await resolver(any_db)(routed)
    assert done is not None and done.event.detail["rule"] == "routed"


async def test_a_case_someone_took_stays_theirs(any_db: Database) -> None:
    case = await concluded_case(any_db, 1, AUTO)
    assert await transitions.take(any_db, case.id, "UANA00001", seen=1, via="slack")
    taken = await records.get(any_db, case.id)
    assert taken is not None
    assert await resolver(any_db)(taken) is None
    assert (await records.get(any_db, case.id)).owner == "UANA00001"  # type: ignore[union-attr]


async def test_once_across_retries_replicas_and_a_reopen(any_db: Database) -> None:
    case = await concluded_case(any_db, 1, AUTO)
    first, second = await asyncio.gather(resolver(any_db)(case), resolver(any_db)(case))
    assert [first is None, second is None].count(False) == 1
    assert await resolver(any_db)(case) is None  # a retried worker
    closed = await records.get(any_db, case.id)
    assert closed is not None
    reopened = await transitions.reopen(any_db, case.id, "UANA00001", seen=2, via="slack")
    assert reopened is not None and reopened.case.status == CaseStatus.ACKNOWLEDGED
    assert reopened.case.auto_resolved is True  # it stays an auto-resolved case
    again = await records.get(any_db, case.id)
    assert again is not None
    assert await resolver(any_db)(again) is None  # never closed by socbot a second time
    done = await transitions.resolve(
        any_db,
        case.id,
        "UANA00001",
        Resolution(CaseDisposition.TRUE_POSITIVE),
        seen=3,
        via="slack",
    )
    assert done is not None and done.case.resolved_by == "UANA00001"


async def test_a_newer_verdict_is_not_closed_on_the_older_judgement(any_db: Database) -> None:
    case = await concluded_case(any_db, 1, AUTO)  # judged false_positive ...
    await concluded(
        any_db, "run-1b", verdict="true_positive", alert_id="alert-1", thread_ts="1700000000.000001"
    )
    assert await open_for_run(any_db, "run-1b")  # ... a newer run says true_positive
    assert await resolver(any_db)(case) is None
    assert (await records.get(any_db, case.id)).status == CaseStatus.OPEN  # type: ignore[union-attr]


async def test_the_audit_share_is_the_rules_else_the_setting(any_db: Database) -> None:
    always = await concluded_case(any_db, 1, a_rule("always", auto_resolve={"audit_share": 1}))
    never = await concluded_case(any_db, 2, a_rule("never", auto_resolve={"audit_share": 0}))
    setting = await concluded_case(any_db, 3, AUTO)
    assert (await resolver(any_db, share=0.0)(always)).case.audit is True  # type: ignore[union-attr]
    assert (await resolver(any_db, share=1.0)(never)).case.audit is False  # type: ignore[union-attr]
    assert (await resolver(any_db, share=1.0)(setting)).case.audit is True  # type: ignore[union-attr]


async def drawn_case(db: Database, n: int = 1) -> int:
    case = await concluded_case(db, n, a_rule(auto_resolve={"audit_share": 1}))
    done = await resolver(db)(case)
    assert done is not None and done.case.audit is True
    return case.id


async def test_an_audit_is_recorded_once(any_db: Database) -> None:
    case_id = await drawn_case(any_db)
    fp, tp = CaseDisposition.FALSE_POSITIVE, CaseDisposition.TRUE_POSITIVE
    first, second = await asyncio.gather(
        auto.audit(any_db, case_id, "UANA00001", tp, seen=2, via="slack"),
        auto.audit(any_db, case_id, "UANA00002", fp, seen=2, via="slack"),
    )
    won = first or second
    assert won is not None and (first is None) != (second is None)
    # a later submission on the new revision changes nothing either
    assert await auto.audit(any_db, case_id, "UANA00003", fp, seen=3, via="slack") is None
    now = await records.get(any_db, case_id)
    assert now is not None
    assert (now.audit_disposition, now.audit_by) == (
        won.event.detail["audit_disposition"],
        won.event.actor,
    )
    assert now.audit_at is not None and now.revision == 3
    assert now.status == CaseStatus.RESOLVED and now.disposition == "false_positive"
    audited = [e for e in await records.history(any_db, case_id) if e.action == CaseAction.AUDITED]
    assert len(audited) == 1
    assert [t for t, _ in await case_posts(any_db)][-1] == f"case:{case_id}"


async def test_only_a_drawn_auto_resolved_case_takes_an_audit(any_db: Database) -> None:
    undrawn = await concluded_case(any_db, 1, AUTO)
    assert await resolver(any_db, share=0.0)(undrawn) is not None
    human = await concluded_case(any_db, 2, None)
    for case_id in (undrawn.id, human.id):
        now = await records.get(any_db, case_id)
        assert now is not None
        answer = CaseDisposition.BENIGN
        assert await auto.audit(any_db, case_id, "U1", answer, seen=now.revision, via="cli") is None
        assert (await records.get(any_db, case_id)).audit_disposition is None  # type: ignore[union-attr]


async def test_the_draw_is_random_per_rule_at_its_rate(db: Database) -> None:
    """200 cases of two rules, drawn from the system's random source: each rule's share of
    audits within 4.5 standard deviations of its own ``audit_share`` (a wrong rate, one
    shared between rules, or a fixed pattern fails; a correct one fails ~1 in 150,000)."""
    shares = {"tenth": 0.1, "half": 0.5}
    rules = {name: a_rule(name, auto_resolve={"audit_share": s}) for name, s in shares.items()}
    real = auto.AutoResolution(db, 0.0)  # SystemRandom
    assert isinstance(real.rng, Random) and type(real.rng).__name__ == "SystemRandom"
    drawn: dict[str, list[bool]] = {name: [] for name in shares}
    for n in range(200):
        name = "tenth" if n % 2 else "half"
        done = await real(await concluded_case(db, n, rules[name]))
        assert done is not None
        drawn[name].append(done.case.audit)
    for name, share in shares.items():
        k, size = sum(drawn[name]), len(drawn[name])
        sd = (share * (1 - share) / size) ** 0.5
        assert abs(k / size - share) <= 4.5 * sd, (name, k, size)


async def test_the_report_counts_auto_resolution_only_through_its_audit(any_db: Database) -> None:
    """Four cases of a rule, all drawn; three answered (one real alert), one not; and one
    case a person resolved: the error rate is 1 of 3 with its Wilson interval, and the
    agreement reads the three audited cases and the person's, never the unanswered one."""
    drawn_all = a_rule("gd-noise", auto_resolve={"audit_share": 1})
    ids = []
    for n in range(4):
        done = await resolver(any_db)(await concluded_case(any_db, n, drawn_all))
        assert done is not None
        ids.append(done.case.id)
    answers = [
        CaseDisposition.TRUE_POSITIVE,
        CaseDisposition.FALSE_POSITIVE,
        CaseDisposition.BENIGN,
    ]
    for case_id, answer in zip(ids, answers, strict=False):
        assert await auto.audit(any_db, case_id, "UANA00001", answer, seen=2, via="slack")
    human = await concluded_case(any_db, 9, None, verdict="true_positive")
    resolution = Resolution(CaseDisposition.TRUE_POSITIVE)
    assert await transitions.resolve(any_db, human.id, "UANA00002", resolution, seen=1, via="cli")
    now = utcnow()
    found = await report.period_report(any_db, now - timedelta(days=1), now + timedelta(days=1))
    low, high = wilson(1, 3) or (0.0, 0.0)
    assert found["auto_resolution"] == {
        "gd-noise": {
            "auto_resolved": 4,
            "audited": 3,
            "error_rate": {
                "hits": 1,
                "n": 3,
                "rate": round(1 / 3, 4),
                "low": round(low, 4),
                "high": round(high, 4),
            },
        }
    }
    assert (found["totals"]["auto_resolved"], found["totals"]["audited"]) == (4, 3)
    agreement = found["agreement"]
    assert (agreement["cases"], agreement["decided"]) == (5, 4)
    assert (agreement["agreement"]["hits"], agreement["agreement"]["n"]) == (3, 4)
    assert agreement["fp_rejection"]["n"] == 2 and agreement["tp_recall"]["n"] == 2
    assert found["time_to_resolve_s"]["p50"] is not None  # the person's only
    [missed] = found["disagreements"]
    assert (missed["case_id"], missed["decision"], missed["auto_resolved"]) == (
        ids[0],
        "true_positive",
        True,
    )
