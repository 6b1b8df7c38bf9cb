"""Block Kit messages of an investigation: plan checklist, conclusion, answers, notices.

Pure functions: each returns the kwargs of ``chat.postMessage``/``chat.update``
(``{"text": fallback, "blocks": [...]}``); the caller adds channel, thread and
``SAFE_POST_FLAGS``. Every piece of model or alert text goes through
``bot.blocks.escape`` (mrkdwn: defanged + escaped; plain_text: defanged, no brackets).
Slack's size limits and the splitting of long text live in ``bot.blocks.kit``; alert
cards and the storm messages in ``bot.blocks.cards``.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent.concluder import VERDICT_LABELS, Conclusion
from agent.planner import Plan
from agent.review.critic import Review
from bot.blocks.escape import escape, mrkdwn
from bot.blocks.feedback import vote_element
from bot.blocks.kit import (
    SEVERITY_EMOJI,
    Block,
    Message,
    button,
    context_block,
    continued_messages,
    fallback_text,
    fit_message,
    header_block,
    notice_message,
    one_line,
    pack_messages,
    pages_base,
    section_blocks,
)
from bot.blocks.stats import RunStats

VERDICT_EMOJI = {
    "true_positive": "🚨",
    "false_positive": "✅",
    "benign": "🟢",
    "inconclusive": "❓",
}
STEP_ICONS = {"pending": "⏳", "running": "🔄", "done": "✅", "failed": "❌", "cancelled": "🚫"}


# --- the plan / status message ------------------------------------------------------


def page_url(pages_url: str | None, investigation_id: str) -> str:
    """The investigation's page (``web.base_url``), or ``""``. The id is ours (hex); a
    base URL with characters that would break a link's syntax is not linked at all."""
    base = pages_base(pages_url)
    if not base or not investigation_id or investigation_id == "pending":
        return ""
    return f"{base}/web/investigations/{escape(investigation_id)}"


def page_link(pages_url: str | None, investigation_id: str) -> list[str]:
    """``<url|Open in socbot>`` for the investigation's page, or nothing."""
    url = page_url(pages_url, investigation_id)
    return [f"<{url}|Open in socbot>"] if url else []


def plan_message(
    plan: Plan | None,
    *,
    status_line: str,
    investigation_id: str,
    indicators: Sequence[str] = (),
    pages_url: str | None = None,
) -> Message:
    """The live status message: objective, checklist with status icons, latest activity.

    ``status_line`` is trusted socbot text (built by the progress sink, which escapes
    the pieces it takes from events); it is posted as mrkdwn as-is.
    """
    blocks: list[Block] = []
    if plan is not None:
        blocks += section_blocks(one_line(plan.objective, indicators), heading="*Investigating:*")
        lines = [_step_line(s.id, s.description, s.status, indicators) for s in plan.steps]
        if lines:
            blocks += section_blocks("\n".join(lines))
    footer = context_block(
        status_line,
        f"investigation `{escape(investigation_id)}`",
        *page_link(pages_url, investigation_id),
    )
    blocks = fit_message(blocks, [footer])
    objective = f"Investigating: {plan.objective}" if plan is not None else "socbot is working"
    return {"text": fallback_text(mrkdwn(objective, indicators)), "blocks": blocks}


def _step_line(step_id: str, description: str, status: str, indicators: Sequence[str]) -> str:
    icon = STEP_ICONS.get(status, "•")
    text = one_line(description, indicators).replace("~", "\u223c")
    if len(text) > 400:
        text = text[:399] + "…"
    if status == "cancelled":
        return f"{icon} ~{escape(step_id)} {text}~"
    if status == "failed":
        return f"{icon} *{escape(step_id)}* {text} — _failed_"
    return f"{icon} *{escape(step_id)}* {text}"


# --- conclusion and answers ---------------------------------------------------------


def verdict_title(conclusion: Conclusion) -> str:
    """``🚨 True positive · high severity`` — the first thing the analyst reads."""
    emoji = VERDICT_EMOJI.get(conclusion.verdict, "•")
    label = VERDICT_LABELS.get(conclusion.verdict, conclusion.verdict)
    return f"{emoji} {label} · {conclusion.severity} severity"


def feedback_actions(investigation_id: str, *, suppress: bool = False) -> Block:
    """Correct / incorrect verdict buttons (and, for an alert, "Suppress similar…");
    ``value`` carries the investigation id."""
    elements = [
        button("👍 Verdict correct", "feedback_correct", investigation_id, "primary"),
        button("👎 Verdict incorrect", "feedback_incorrect", investigation_id, "danger"),
    ]
    if suppress:
        elements.append(_suppress(investigation_id))
    return {"type": "actions", "block_id": "feedback", "elements": elements}


def _suppress(investigation_id: str) -> Block:
    return button("🔕 Suppress similar…", "policy_suppress", investigation_id)


def conclusion_messages(
    conclusion: Conclusion,
    *,
    investigation_id: str,
    limits_hit: list[str],
    indicators: Sequence[str] = (),
    review: Review | None = None,
    stats: RunStats | None = None,
    suppress: bool = False,
    pages_url: str | None = None,
    case: Sequence[Block] = (),
    element: bool = False,
) -> list[Message]:
    """The verdict as Block Kit, split into as many messages as Slack's limits need.

    ``suppress``: the verdict is an alert's, so similar alerts may be suppressed;
    ``case``: its case's blocks (``bot.blocks.case.case_actions``, or an auto-resolved
    case's state, ``bot.blocks.case_audit.auto_resolved_state``); ``element``:
    👍 / 👎 as Slack's feedback element (``bot.blocks.feedback``), not buttons.

    With a ``review``, the key findings say how many were verified against the tool
    results, and each unverified one carries ⚠️ and the reason.
    """
    review = review if review is not None and review.shown else None
    ind = tuple(indicators)
    sev = SEVERITY_EMOJI.get(conclusion.severity, "•")
    blocks: list[Block] = [
        header_block(verdict_title(conclusion)),
        {
            "type": "section",
            "fields": [
                {"type": "mrkdwn", "text": f"*Severity*\n{sev} {conclusion.severity}"},
                {"type": "mrkdwn", "text": f"*Confidence*\n{conclusion.confidence}"},
            ],
        },
        *section_blocks(mrkdwn(conclusion.summary, ind), heading="*Summary*"),
    ]
    if conclusion.techniques:
        blocks += section_blocks(_techniques(conclusion), heading="*ATT&amp;CK*")
    if conclusion.key_findings:
        blocks += [{"type": "divider"}, *section_blocks("*Key findings*")]
        if review is not None:
            blocks.append(_review_context(review, ind))
        for n, kf in enumerate(conclusion.key_findings):
            evidence = mrkdwn(kf.evidence, ind)
            text = f"• {mrkdwn(kf.finding, ind)}"
            if evidence:
                sep = "\n" if "\n" in evidence else " "
                text += f"\n   _Evidence:_{sep}{evidence}"
            if problems := (review.problems_of(n) if review is not None else []):
                text += f"\n   ⚠️ _Unverified:_ {mrkdwn('; '.join(problems), ind)}"
            blocks += section_blocks(text)
    elif review is not None and (review.verdict_problems or review.technique_notes):
        blocks.append(_review_context(review, ind))
    if conclusion.uncertainties:
        lines = "\n".join(f"• {mrkdwn(u, ind)}" for u in conclusion.uncertainties)
        blocks += section_blocks(lines, heading="*Uncertainties / not checked*")
    if conclusion.recommendations:
        recs = enumerate(conclusion.recommendations, start=1)
        lines = "\n".join(f"{n}. {mrkdwn(r, ind)}" for n, r in recs)
        blocks += section_blocks(lines, heading="*Recommendations*")
    footer = [
        f"investigation `{escape(investigation_id)}`",
        *page_link(pages_url, investigation_id),
    ]
    if stats is not None:
        footer.append(stats.text())
    if limits_hit:
        footer.insert(0, "⚠️ Stopped early: " + escape("; ".join(limits_hit)))
    tail = [context_block(*footer)]
    if not element:
        tail.append(feedback_actions(investigation_id, suppress=suppress))
    else:
        tail.append(vote_element(investigation_id))
        if suppress:
            tail.append(
                {
                    "type": "actions",
                    "block_id": "feedback",
                    "elements": [_suppress(investigation_id)],
                }
            )
    tail += case
    fallback = f"{verdict_title(conclusion)}: {mrkdwn(conclusion.summary, ind)}"
    return continued_messages(pack_messages(blocks, tail), fallback_text(fallback))


def _techniques(conclusion: Conclusion) -> str:
    """``• *T1110.003* Password Spraying · _Credential Access_``, one line each. Code took
    the names from the ATT&CK catalogue; they are escaped and defanged all the same."""
    lines = []
    for t in conclusion.techniques:
        tactic = f" · _{one_line(t.tactic)}_" if t.tactic else ""
        lines.append(f"• *{one_line(t.id)}* {one_line(t.name)}{tactic}".rstrip())
    return "\n".join(lines)


def _review_context(review: Review, indicators: Sequence[str] = ()) -> Block:
    """``🔎 4 of 5 findings verified against tool results`` plus verdict-rule problems."""
    icon = "🔎" if review.verified == review.findings else "⚠️"
    texts = [f"{icon} {escape(review.verification())}"]
    texts += [f"⚠️ {escape(p)}" for p in review.verdict_problems]
    if review.technique_notes:  # they quote what the model wrote: defanged too
        texts.append(f"⚠️ {one_line('; '.join(review.technique_notes), indicators)}")
    if review.status == "failed":
        texts.append("the review could not finish; shown as written")
    return context_block(*texts)


def answer_messages(
    text: str,
    *,
    investigation_id: str | None = None,
    indicators: Sequence[str] = (),
    review: Review | None = None,
    stats: RunStats | None = None,
    pages_url: str | None = None,
) -> list[Message]:
    """A direct answer (Markdown from the model), split like the conclusion.

    With a ``review`` of the answer, a note says whether its quoted values were
    found in its tool results, and which were not.
    """
    blocks = section_blocks(mrkdwn(text, indicators)) or section_blocks("_(no answer)_")
    if review is not None and review.shown:
        missing = [p for f in review.unverified for p in f.problems]
        blocks.append(_review_context(review))
        if missing:
            blocks += section_blocks("⚠️ _Unverified:_ " + mrkdwn("; ".join(missing), indicators))
    footer = (
        [f"investigation `{escape(investigation_id)}`", *page_link(pages_url, investigation_id)]
        if investigation_id
        else []
    )
    if stats is not None:
        footer.append(stats.text())
    tail = [context_block(*footer)] if footer else []
    fallback = fallback_text(mrkdwn(text, indicators)) or "(no answer)"
    return continued_messages(pack_messages(blocks, tail), fallback)


# --- short notices ------------------------------------------------------------------


def error_message(reason: str) -> Message:
    """One sentence telling the analyst what went wrong (never a stack trace)."""
    first = reason.strip().splitlines()[0] if reason.strip() else "Something went wrong."
    return notice_message(f"⚠️ {one_line(fallback_text(first))}")


def still_working_message() -> Message:
    return notice_message(
        "⏳ I'm still working on the investigation in this thread — "
        "I'll reply here when it's done. Say `stop` to cancel it."
    )


def queued_message(position: int) -> Message:
    return notice_message(
        f"🕒 Queued (#{position} in line). I'll start as soon as a slot frees up."
    )


def cancelled_message() -> Message:
    return notice_message("🛑 Investigation cancelled.")
