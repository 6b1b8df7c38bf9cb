"""The weekly digest's Block Kit: a period report (``store.cases.report``, the JSON of
docs/quality.md) as one Slack message for ``cases.digest_channel``.

Every figure comes from the report. What a payload wrote (a case's title) and what a team
configured (a policy rule's name) are escaped and clipped; a link is made only from
``web.base_url`` when it is a plain http(s) URL and from ids that are socbot's own."""

from __future__ import annotations

from typing import Any

from bot.blocks.case import VERDICT_WORDS
from bot.blocks.escape import escape
from bot.blocks.kit import (
    Block,
    Message,
    clip,
    context_block,
    fallback_text,
    fit_message,
    header_block,
    one_line,
    pages_base,
    section,
)

SHOWN_DISAGREEMENTS = 10
TITLE_CHARS = 80


def rate(figure: dict[str, Any]) -> str:
    """``83.3 % (10/12; 95 % 55.2 to 95.3 %)``, or ``—`` when there were none."""
    if figure.get("rate") is None:
        return "— (none)"
    return (
        f"{figure['rate']:.1%} ({figure['hits']}/{figure['n']}; "
        f"95 % {figure['low']:.1%} to {figure['high']:.1%})"
    )


def span(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def digest_message(week: str, report: dict[str, Any], pages_url: str | None = None) -> Message:
    """The digest of ``week`` from its period ``report``."""
    totals, agreement, book = report["totals"], report["agreement"], report["playbook"]
    cases = report["cases"]
    statuses = ", ".join(f"{escape(k)} {n}" for k, n in cases["by_status"].items()) or "none"
    resolved = ", ".join(
        f"{VERDICT_WORDS.get(k, escape(k))} {n}" for k, n in cases["by_disposition"].items()
    )
    ack, done = report["time_to_acknowledge_s"], report["time_to_resolve_s"]
    blocks: list[Block] = [
        header_block(f"Weekly case digest · {week}"),
        context_block(escape(report["period"]["label"]) + " (UTC)"),
        section(
            f"*Cases* {totals['cases']} ({statuses})\n"
            f"*Resolved as* {resolved or '—'}\n"
            f"*Time to acknowledge* p50 {span(ack['p50'])}, p90 {span(ack['p90'])} · "
            f"*to resolve* p50 {span(done['p50'])}, p90 {span(done['p90'])}"
        ),
        section(
            f"*Agreement with the analysts* {rate(agreement['agreement'])}\n"
            f"*Field TP recall* {rate(agreement['tp_recall'])}\n"
            f"*FP rejection* {rate(agreement['fp_rejection'])}\n"
            f"decided {totals['decided']}, duplicates left out {totals['excluded']}, "
            f"disagreements {totals['disagreements']}"
        ),
    ]
    audits = [
        f"*Auto-resolution {one_line(clip(rule, TITLE_CHARS))}* {a['auto_resolved']} closed, "
        f"{a['audited']} audited, error {rate(a['error_rate'])}"
        for rule, a in report["auto_resolution"].items()
    ]
    if audits:
        blocks.append(section("\n".join(audits)))
    blocks.append(
        section(
            f"*Playbook* ({escape(book['comparison'])}) skill hit rate "
            f"{rate(book['skill_hit_rate'])}\n"
            f"agreement with {rate(book['with_playbook']['agreement'])} · "
            f"without {rate(book['without_playbook']['agreement'])}\n"
            f"*Cost* ${report['cost']['usd']:.2f}, {report['cost']['tokens']:,} tokens"
        )
    )
    missed = [_disagreement(d, pages_url) for d in report["disagreements"][:SHOWN_DISAGREEMENTS]]
    if missed:
        blocks.append(section("*Disagreements*\n" + "\n".join(missed)))
    link = pages_base(pages_url)
    tail = [context_block(f"<{link}/web/quality|Quality page>")] if link else []
    text = (
        f"Weekly case digest {week}: {totals['cases']} cases, agreement "
        f"{rate(agreement['agreement'])}"
    )
    return {"text": fallback_text(text), "blocks": fit_message(blocks, tail)}


def _disagreement(d: dict[str, Any], pages_url: str | None) -> str:
    said = VERDICT_WORDS.get(str(d.get("socbot_verdict")), "no verdict")
    decided = VERDICT_WORDS.get(str(d.get("decision")), "unknown")
    name = f"case {int(d['case_id'])}"
    base, run = pages_base(pages_url), str(d.get("investigation_id") or "")
    if base and run:
        name = f"<{base}/web/investigations/{escape(run)}|{name}>"
    title = one_line(clip(" ".join(str(d.get("title") or "").split()), TITLE_CHARS))
    return f"• {name} {title} — socbot {said}, analyst {decided}"
