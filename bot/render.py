"""Block Kit messages socbot posts: plan checklist, conclusion, answers, alert card, notices.

Pure functions: each returns the kwargs of ``chat.postMessage``/``chat.update``
(``{"text": fallback, "blocks": [...]}``); the caller adds channel, thread and
``SAFE_POST_FLAGS``. Every piece of model or alert text goes through
``bot.escape`` (mrkdwn: defanged + escaped; plain_text: defanged, no brackets).

Slack limits are kept here: 3,000 characters per section text, 150 per header,
50 blocks per message. Long text is split on line boundaries; a split inside a
``` code block closes the block and reopens it in the next section, so every
section renders on its own. Messages are also kept under ``MESSAGE_CHARS`` of text
so a long conclusion arrives as a few readable messages rather than one wall.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agent.alerts import Alert
from agent.concluder import VERDICT_LABELS, Conclusion
from agent.planner import Plan
from agent.review import Review
from bot.escape import escape, mrkdwn, plain
from bot.stats import RunStats

Block = dict[str, Any]
Message = dict[str, Any]

SECTION_CHARS = 3000
HEADER_CHARS = 150
MAX_BLOCKS = 50
MESSAGE_CHARS = 12_000
FALLBACK_CHARS = 300
SAFE_POST_FLAGS: dict[str, bool] = {"unfurl_links": False, "unfurl_media": False}

VERDICT_EMOJI = {
    "true_positive": "🚨",
    "false_positive": "✅",
    "benign": "🟢",
    "inconclusive": "❓",
}
SEVERITY_EMOJI = {"critical": "🔴", "high": "🟠", "medium": "🟡", "low": "🔵", "info": "⚪"}
STEP_ICONS = {"pending": "⏳", "running": "🔄", "done": "✅", "failed": "❌", "cancelled": "🚫"}
FENCE = "```"


# --- text splitting -----------------------------------------------------------------


def _hard_cut(line: str, size: int) -> list[str]:
    """Cut one over-long line into pieces of at most ``size``, never inside an entity."""
    pieces: list[str] = []
    while len(line) > size:
        cut = size
        space = line.rfind(" ", size - 200, size)
        if space > 0:
            cut = space + 1  # prefer a word boundary
        amp = line.rfind("&", max(0, cut - 6), cut)
        if amp >= 0 and ";" not in line[amp:cut]:
            cut = amp  # would split "&amp;" / "&lt;" / "&gt;"
        pieces.append(line[:cut])
        line = line[cut:]
    pieces.append(line)
    return pieces


def split_text(text: str, limit: int = SECTION_CHARS) -> list[str]:
    """Split mrkdwn into chunks of at most ``limit`` chars with balanced code fences."""
    if len(text) <= limit and text.count(FENCE) % 2 == 0:
        return [text] if text.strip() else []
    chunks: list[str] = []
    lines: list[str] = []
    size = 0
    in_code = False  # inside a fence at the current point
    for raw in text.split("\n"):
        for line in _hard_cut(raw, limit - 2 * (len(FENCE) + 1)):
            closing = len(FENCE) + 1 if in_code or line.count(FENCE) % 2 else 0
            if lines and size + 1 + len(line) + closing > limit:
                chunks.append("\n".join([*lines, FENCE] if in_code else lines))
                lines = [FENCE] if in_code else []
                size = len(FENCE) if in_code else -1
            lines.append(line)
            size += 1 + len(line)
            if line.count(FENCE) % 2:
                in_code = not in_code
    if lines:
        chunks.append("\n".join([*lines, FENCE] if in_code else lines))
    return [c for c in chunks if c.strip() and c.strip() != f"{FENCE}\n{FENCE}"]


def _sections(text: str, *, heading: str = "") -> list[Block]:
    """``text`` (already mrkdwn) as section blocks; ``heading`` goes on the first one."""
    body = f"{heading}\n{text}" if heading else text
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": chunk}} for chunk in split_text(body)
    ]


def _block_chars(block: Block) -> int:
    text = block.get("text")
    if isinstance(text, dict):
        return len(str(text.get("text", "")))
    elements = block.get("elements", [])
    return sum(len(str(e.get("text", ""))) for e in elements if isinstance(e, dict))


def _pack(blocks: Sequence[Block], tail: Sequence[Block] = ()) -> list[list[Block]]:
    """Group blocks into messages (≤ MAX_BLOCKS, ≤ MESSAGE_CHARS); ``tail`` ends the last."""
    room = MAX_BLOCKS - 1  # one block kept for the "continued" note
    messages: list[list[Block]] = [[]]
    chars = 0
    for block in blocks:
        size = _block_chars(block)
        current = messages[-1]
        if current and (len(current) >= room or chars + size > MESSAGE_CHARS):
            messages.append([])
            chars = 0
        messages[-1].append(block)
        chars += size
    if tail:
        if len(messages[-1]) + len(tail) > room:
            messages.append([])
        messages[-1].extend(tail)
    return [m for m in messages if m]


def _continued(messages: list[list[Block]], fallback: str) -> list[Message]:
    total = len(messages)
    out: list[Message] = []
    for n, blocks in enumerate(messages, start=1):
        if total > 1 and n == 1:
            blocks = [*blocks, _context(f"part 1 of {total} · continued below")]
        elif total > 1:
            blocks = [_context(f"continued · part {n} of {total}"), *blocks]
        text = fallback if n == 1 else f"{fallback} (part {n} of {total})"
        out.append({"text": text, "blocks": blocks})
    return out


def _context(*texts: str) -> Block:
    return {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": t[:SECTION_CHARS]} for t in texts if t][:10],
    }


def _header(text: str) -> Block:
    text = plain(" ".join(text.split()))
    if len(text) > HEADER_CHARS:
        text = text[: HEADER_CHARS - 1] + "…"
    return {"type": "header", "text": {"type": "plain_text", "text": text, "emoji": True}}


def _fallback(text: str) -> str:
    """Notification text from already-safe mrkdwn: one line, clipped, no entity cut."""
    text = " ".join(text.split())
    return text if len(text) <= FALLBACK_CHARS else _hard_cut(text, FALLBACK_CHARS - 1)[0] + "…"


def _one_line(text: str, indicators: Iterable[str] = ()) -> str:
    return mrkdwn(" ".join(text.split()), indicators)


# --- the plan / status message ------------------------------------------------------


def plan_message(
    plan: Plan | None,
    *,
    status_line: str,
    investigation_id: str,
    indicators: Sequence[str] = (),
) -> Message:
    """The live status message: objective, checklist with status icons, latest activity.

    ``status_line`` is trusted socbot text (built by the progress sink, which escapes
    the pieces it takes from events); it is posted as mrkdwn as-is.
    """
    blocks: list[Block] = []
    if plan is not None:
        blocks += _sections(_one_line(plan.objective, indicators), heading="*Investigating:*")
        lines = [_step_line(s.id, s.description, s.status, indicators) for s in plan.steps]
        if lines:
            blocks += _sections("\n".join(lines))
    blocks.append(_context(status_line, f"investigation `{escape(investigation_id)}`"))
    blocks = blocks[: MAX_BLOCKS - 1] + blocks[-1:] if len(blocks) > MAX_BLOCKS else blocks
    objective = f"Investigating: {plan.objective}" if plan is not None else "socbot is working"
    return {"text": _fallback(mrkdwn(objective, indicators)), "blocks": blocks}


def _step_line(step_id: str, description: str, status: str, indicators: Sequence[str]) -> str:
    icon = STEP_ICONS.get(status, "•")
    text = _one_line(description, indicators).replace("~", "\u223c")
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


def feedback_actions(investigation_id: str) -> Block:
    """Correct / incorrect verdict buttons; ``value`` carries the investigation id."""
    return {
        "type": "actions",
        "block_id": "feedback",
        "elements": [
            _button("👍 Verdict correct", "feedback_correct", investigation_id, "primary"),
            _button("👎 Verdict incorrect", "feedback_incorrect", investigation_id, "danger"),
        ],
    }


def _button(label: str, action_id: str, value: str, style: str) -> Block:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": label, "emoji": True},
        "action_id": action_id,
        "value": value[:2000],
        "style": style,
    }


def conclusion_messages(
    conclusion: Conclusion,
    *,
    investigation_id: str,
    limits_hit: list[str],
    indicators: Sequence[str] = (),
    review: Review | None = None,
    stats: RunStats | None = None,
) -> list[Message]:
    """The verdict as Block Kit, split into as many messages as Slack's limits need.

    With a ``review``, the key findings say how many were verified against the tool
    results, and each unverified one carries ⚠️ and the reason.
    """
    review = review if review is not None and review.shown else None
    ind = tuple(indicators)
    sev = SEVERITY_EMOJI.get(conclusion.severity, "•")
    blocks: list[Block] = [
        _header(verdict_title(conclusion)),
        {
            "type": "section",
            "fields": [
                {"type": "mrkdwn", "text": f"*Severity*\n{sev} {conclusion.severity}"},
                {"type": "mrkdwn", "text": f"*Confidence*\n{conclusion.confidence}"},
            ],
        },
        *_sections(mrkdwn(conclusion.summary, ind), heading="*Summary*"),
    ]
    if conclusion.key_findings:
        blocks += [{"type": "divider"}, *_sections("*Key findings*")]
        if review is not None:
            blocks.append(_review_context(review))
        for n, kf in enumerate(conclusion.key_findings):
            evidence = mrkdwn(kf.evidence, ind)
            text = f"• {mrkdwn(kf.finding, ind)}"
            if evidence:
                sep = "\n" if "\n" in evidence else " "
                text += f"\n   _Evidence:_{sep}{evidence}"
            if problems := (review.problems_of(n) if review is not None else []):
                text += f"\n   ⚠️ _Unverified:_ {mrkdwn('; '.join(problems), ind)}"
            blocks += _sections(text)
    elif review is not None and review.verdict_problems:
        blocks.append(_review_context(review))
    if conclusion.uncertainties:
        lines = "\n".join(f"• {mrkdwn(u, ind)}" for u in conclusion.uncertainties)
        blocks += _sections(lines, heading="*Uncertainties / not checked*")
    if conclusion.recommendations:
        recs = enumerate(conclusion.recommendations, start=1)
        lines = "\n".join(f"{n}. {mrkdwn(r, ind)}" for n, r in recs)
        blocks += _sections(lines, heading="*Recommendations*")
    footer = [f"investigation `{escape(investigation_id)}`"]
    if stats is not None:
        footer.append(stats.text())
    if limits_hit:
        footer.insert(0, "⚠️ Stopped early: " + escape("; ".join(limits_hit)))
    tail = [_context(*footer), feedback_actions(investigation_id)]
    fallback = f"{verdict_title(conclusion)}: {mrkdwn(conclusion.summary, ind)}"
    return _continued(_pack(blocks, tail), _fallback(fallback))


def _review_context(review: Review) -> Block:
    """``🔎 4 of 5 findings verified against tool results`` plus verdict-rule problems."""
    icon = "🔎" if review.verified == review.findings else "⚠️"
    texts = [f"{icon} {escape(review.verification())}"]
    texts += [f"⚠️ {escape(p)}" for p in review.verdict_problems]
    if review.status == "failed":
        texts.append("the review could not finish; shown as written")
    return _context(*texts)


def answer_messages(
    text: str,
    *,
    investigation_id: str | None = None,
    indicators: Sequence[str] = (),
    review: Review | None = None,
    stats: RunStats | None = None,
) -> list[Message]:
    """A direct answer (Markdown from the model), split like the conclusion.

    With a ``review`` of the answer, a note says whether its quoted values were
    found in its tool results, and which were not.
    """
    blocks = _sections(mrkdwn(text, indicators)) or _sections("_(no answer)_")
    if review is not None and review.shown:
        missing = [p for f in review.unverified for p in f.problems]
        blocks.append(_review_context(review))
        if missing:
            blocks += _sections("⚠️ _Unverified:_ " + mrkdwn("; ".join(missing), indicators))
    footer = [f"investigation `{escape(investigation_id)}`"] if investigation_id else []
    if stats is not None:
        footer.append(stats.text())
    tail = [_context(*footer)] if footer else []
    return _continued(_pack(blocks, tail), _fallback(mrkdwn(text, indicators)))


# --- alert card and short notices ---------------------------------------------------


def alert_card(alert: Alert) -> Message:
    """The short card posted for a webhook alert; the investigation runs in its thread."""
    values = [i.value for i in alert.indicators]
    severity = alert.severity or "unknown"
    sev = SEVERITY_EMOJI.get(severity.lower(), "•")
    when = alert.event_time.isoformat() if alert.event_time else "unknown"
    fields = [
        {"type": "mrkdwn", "text": f"*Source*\n{_one_line(alert.source)}"},
        {"type": "mrkdwn", "text": f"*Severity*\n{sev} {_one_line(severity)}"},
        {"type": "mrkdwn", "text": f"*Time*\n{escape(when)}"},
    ]
    blocks: list[Block] = [
        _header(f"🔔 {alert.title}"),
        {"type": "section", "fields": fields},
    ]
    if alert.indicators:
        shown = [
            f"{escape(i.kind)} `{_one_line(i.value.replace('`', chr(39)), values)}`"
            for i in alert.indicators[:10]
        ]
        more = len(alert.indicators) - len(shown)
        text = "\n".join(shown) + (f"\n…and {more} more" if more > 0 else "")
        blocks += _sections(text, heading="*Indicators*")
    blocks.append(_context(f"alert `{escape(alert.id)}` · investigating in the thread 🧵"))
    fallback = f"New {alert.source} alert ({severity}): {alert.title}"
    return {"text": _fallback(mrkdwn(fallback, values)), "blocks": blocks}


def _notice(text: str) -> Message:
    return {"text": text, "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]}


def error_message(reason: str) -> Message:
    """One sentence telling the analyst what went wrong (never a stack trace)."""
    first = reason.strip().splitlines()[0] if reason.strip() else "Something went wrong."
    return _notice(f"⚠️ {_one_line(_fallback(first))}")


def still_working_message() -> Message:
    return _notice(
        "⏳ I'm still working on the investigation in this thread — "
        "I'll reply here when it's done. Say `stop` to cancel it."
    )


def queued_message(position: int) -> Message:
    return _notice(f"🕒 Queued (#{position} in line). I'll start as soon as a slot frees up.")


def cancelled_message() -> Message:
    return _notice("🛑 Investigation cancelled.")


# --- alert storms: group cards and the storm status message ---------------------------


def group_card(alert: Alert, *, similar: int, verdict: str | None = None) -> Message:
    """The card of an alert group: the first alert's card plus "+N similar alerts".

    Edited in place as similar alerts join; ``verdict`` (a label) once concluded.
    """
    card = alert_card(alert)
    if similar <= 0 and verdict is None:
        return card
    blocks: list[Block] = list(card["blocks"])
    lines = []
    if similar > 0:
        plural = "s" if similar != 1 else ""
        lines.append(
            f"🔗 *{similar} similar alert{plural}* grouped here (same source, title and "
            "main indicator): one investigation covers them and they get its verdict."
        )
    if verdict is not None:
        lines.append(f"*Verdict:* {_one_line(verdict)} — details in the thread 🧵")
    blocks[-1:-1] = _sections("\n".join(lines))
    text = card["text"] + (f" (+{similar} similar)" if similar > 0 else "")
    return {"text": text, "blocks": blocks}


STORM_LINES = (
    ("investigating", "🔄 Investigating"),
    ("queued", "🕒 Queued"),
    ("deferred", "⏸️ Deferred"),
    ("grouped", "🔗 Grouped"),
    ("concluded", "✅ Concluded"),
    ("failed", "⚠️ Failed or stopped"),
)


def storm_message(counts: dict[str, int], *, since: str, over: bool) -> Message:
    """The one per-channel status message of an alert storm, edited in place.

    ``counts`` holds every alert received since ``since`` (a time, e.g. ``01:02 UTC``)
    in exactly one of the ``STORM_LINES`` states.
    """
    received = sum(counts.get(key, 0) for key, _ in STORM_LINES)
    head = "✅ Alert storm over" if over else "🌩️ Alert storm"
    fields = [
        {"type": "mrkdwn", "text": f"*{label}*\n{counts.get(key, 0)}"} for key, label in STORM_LINES
    ]
    note = (
        "Every alert is stored. Grouped alerts share the card and verdict of the alert "
        "investigated for them; deferred alerts are investigated as soon as a slot "
        "frees up, most severe first."
    )
    blocks: list[Block] = [
        _header(head),
        *_sections(f"*{received}* alerts received since {escape(since)}."),
        {"type": "section", "fields": fields},
        _context(note, "updated in place"),
    ]
    summary = ", ".join(f"{counts.get(k, 0)} {k}" for k, _ in STORM_LINES if counts.get(k, 0))
    return {"text": _fallback(f"{head}: {received} alerts ({summary})"), "blocks": blocks}


def group_note(*, similar: int, verdict: str | None = None) -> Message:
    """The note in a forwarded alert's thread counting the similar alerts grouped under it.

    Posted once when the first similar alert joins, then edited in place; the grouped
    alerts' own messages are marked with a 🔗 reaction instead of a reply each.
    """
    plural = "s" if similar != 1 else ""
    lines = [
        f"🔗 *{similar} similar alert{plural}* in this channel grouped under this one (same "
        "source, title and main indicator; marked 🔗): this investigation covers them and "
        "they get its verdict."
    ]
    if verdict is not None:
        lines.append(f"*Verdict for the group:* {_one_line(verdict)}")
    text = f"{similar} similar alert{plural} grouped under this alert"
    return {"text": _fallback(text), "blocks": _sections("\n".join(lines))}
