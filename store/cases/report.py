"""The period report (``socbot report``, the web Quality page, the weekly digest): the cases
opened in a period of whole UTC days, summed from the daily tally (``store.cases.tally``)
by ``core.quality`` and ``core.playbook_effect``. The JSON shape is documented in
docs/quality.md (``SCHEMA`` names its version); ``metrics`` repeats the playbook's figures
in the shape of the learning design's effect report (total tasks, skills loaded, hit rate,
first-try success with and without skills, estimated savings)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from core.playbook_effect import effect
from core.quality import DIMENSIONS, Outcome, audits, breakdown, by, confusion, tally
from store.cases import quality
from store.cases.tally import days, percentiles, read
from store.db.engine import Database

SCHEMA = "socbot.report/2"


async def period_report(
    db: Database, since: datetime, until: datetime, *, disagreements: int = 50
) -> dict[str, Any]:
    """The report of the cases opened on the UTC days that ``[since, until)`` touches."""
    since, until = days(since, until)
    found = await read(db, since.date(), until.date())
    missed = await quality.disagreements(db, since, until, limit=disagreements)
    return build(
        found.facets,
        found.counts,
        percentiles(found.spans["acknowledge"]),
        percentiles(found.spans["resolve"]),
        [d.as_dict() for d in missed],
        since,
        until,
    )


def build(
    facets: dict[str, list[Outcome]],
    counts: dict[tuple[str, str | None], int],
    ack: dict[float, float | None],
    done: dict[float, float | None],
    missed: list[dict[str, Any]],
    since: datetime,
    until: datetime,
) -> dict[str, Any]:
    """The report from what the queries returned (pure). ``facets`` gives the outcomes of
    ``all`` cases (with their week), of the ``playbook`` (bullets, holdout, week) and of
    each dimension (with that attribute): the same cases each time, seen by a key."""
    found = facets["all"]
    total = tally(found)
    book = effect(facets["playbook"])
    by_status: Counter[str] = Counter()
    by_disposition: Counter[str] = Counter()
    for (status, disposition), n in counts.items():
        by_status[status] += n
        if disposition is not None and status == "resolved":
            by_disposition[disposition] += n
    tokens = sum(o.tokens for o in found)
    cost = sum(o.cost_usd for o in found)
    playbook = book.as_dict()
    with_, without = playbook["with_playbook"], playbook["without_playbook"]
    return {
        "schema": SCHEMA,
        "period": {
            "since": since.isoformat(),
            "until": until.isoformat(),
            "label": f"{since:%Y-%m-%d} ~ {until:%Y-%m-%d}",
        },
        "totals": {
            "cases": total.cases,
            "decided": total.decided,
            "excluded": total.excluded,
            "auto_resolved": sum(o.count for o in found if o.auto_resolved),
            "audited": sum(a.audited for a in audits(facets["rule"]).values()),
            "disagreements": total.decided - total.agreed,
        },
        "cases": {
            "by_status": dict(sorted(by_status.items())),
            "by_disposition": dict(sorted(by_disposition.items())),
        },
        "time_to_acknowledge_s": {"p50": ack.get(0.5), "p90": ack.get(0.9)},
        "time_to_resolve_s": {"p50": done.get(0.5), "p90": done.get(0.9)},
        "agreement": total.as_dict(),
        "confusion": confusion(found).as_dict(),
        "by": {
            d: {k: t.as_dict() for k, t in breakdown(facets.get(d, found), by(d)).items()}
            for d in DIMENSIONS
        },
        "auto_resolution": {rule: a.as_dict() for rule, a in audits(facets["rule"]).items()},
        "disagreements": missed,
        "playbook": playbook,
        "metrics": {
            "total_tasks": total.cases,
            "skills_loaded": book.hits.hits,
            "skill_hit_rate": playbook["skill_hit_rate"]["rate"],
            "first_try_success_rate": {
                "with_skills": with_["agreement"]["rate"],
                "without_skills": without["agreement"]["rate"],
                "comparison": book.comparison,
            },
            "estimated_token_savings": playbook["estimated_token_savings"],
            "estimated_cost_savings_usd": playbook["estimated_cost_savings_usd"],
        },
        "cost": {
            "tokens": tokens,
            "usd": round(cost, 6),
            "usd_per_case": round(cost / total.cases, 6) if total.cases else None,
        },
    }
