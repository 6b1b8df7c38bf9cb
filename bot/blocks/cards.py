"""Block Kit cards of alerts: the alert card, group cards and notes, the storm message.

Pure functions like ``bot.blocks.investigation``: each returns
``{"text": fallback, "blocks": [...]}``; alert fields are attacker-controlled and go
through ``bot.blocks.escape``.
"""

from __future__ import annotations

from alerts.parse import Alert
from bot.blocks.escape import escape, mrkdwn
from bot.blocks.kit import (
    SEVERITY_EMOJI,
    Block,
    Message,
    context_block,
    fallback_text,
    header_block,
    one_line,
    section_blocks,
)
from store.schema import AlertStatus


def alert_card(alert: Alert) -> Message:
    """The short card posted for a webhook alert; the investigation runs in its thread."""
    values = [i.value for i in alert.indicators]
    severity = alert.severity or "unknown"
    sev = SEVERITY_EMOJI.get(severity.lower(), "•")
    when = alert.event_time.isoformat() if alert.event_time else "unknown"
    fields = [
        {"type": "mrkdwn", "text": f"*Source*\n{one_line(alert.source)}"},
        {"type": "mrkdwn", "text": f"*Severity*\n{sev} {one_line(severity)}"},
        {"type": "mrkdwn", "text": f"*Time*\n{escape(when)}"},
    ]
    blocks: list[Block] = [
        header_block(f"🔔 {alert.title}"),
        {"type": "section", "fields": fields},
    ]
    if alert.indicators:
        shown = [
            f"{escape(i.kind)} `{one_line(i.value.replace('`', chr(39)), values)}`"
            for i in alert.indicators[:10]
        ]
        more = len(alert.indicators) - len(shown)
        text = "\n".join(shown) + (f"\n…and {more} more" if more > 0 else "")
        blocks += section_blocks(text, heading="*Indicators*")
    blocks.append(context_block(f"alert `{escape(alert.id)}` · investigating in the thread 🧵"))
    fallback = f"New {alert.source} alert ({severity}): {alert.title}"
    return {"text": fallback_text(mrkdwn(fallback, values)), "blocks": blocks}


def moved_card(alert: Alert, *, thread: str | None, ts: str) -> Message:
    """A second card of the alert, edited to point to the card whose thread runs the
    investigation: ``thread`` is that card's permalink (from Slack), else its ``ts`` is shown.

    Posted by a replica that stalled while another took its launch over
    (``store.triage.storm_posts``).
    """
    safe = thread is not None and thread.startswith("https://") and not _breaks_link(thread)
    where = f"<{thread}|this alert's thread>" if safe else f"the thread of message `{escape(ts)}`"
    blocks: list[Block] = [
        header_block(f"↪️ {alert.title}"),
        *section_blocks(f"Investigated in {where}: this card was posted twice and is not used."),
        context_block(f"alert `{escape(alert.id)}`"),
    ]
    fallback = f"Alert investigated in another thread: {alert.title}"
    values = [i.value for i in alert.indicators]
    return {"text": fallback_text(mrkdwn(fallback, values)), "blocks": blocks}


def _breaks_link(url: str) -> bool:
    """True when ``url`` holds a character that would end or split a ``<url|label>`` link."""
    return any(c in "<>|" or c.isspace() for c in url)


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
        lines.append(f"*Verdict:* {one_line(verdict)} — details in the thread 🧵")
    blocks[-1:-1] = section_blocks("\n".join(lines))
    text = card["text"] + (f" (+{similar} similar)" if similar > 0 else "")
    return {"text": text, "blocks": blocks}


STORM_LINES = (
    (AlertStatus.INVESTIGATING, "🔄 Investigating"),
    (AlertStatus.QUEUED, "🕒 Queued"),
    (AlertStatus.DEFERRED, "⏸️ Deferred"),
    (AlertStatus.GROUPED, "🔗 Grouped"),
    (AlertStatus.CONCLUDED, "✅ Concluded"),
    (AlertStatus.FAILED, "⚠️ Failed or stopped"),
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
        header_block(head),
        *section_blocks(f"*{received}* alerts received since {escape(since)}."),
        {"type": "section", "fields": fields},
        context_block(note, "updated in place"),
    ]
    summary = ", ".join(f"{counts.get(k, 0)} {k}" for k, _ in STORM_LINES if counts.get(k, 0))
    return {"text": fallback_text(f"{head}: {received} alerts ({summary})"), "blocks": blocks}


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
        lines.append(f"*Verdict for the group:* {one_line(verdict)}")
    text = f"{similar} similar alert{plural} grouped under this alert"
    return {"text": fallback_text(text), "blocks": section_blocks("\n".join(lines))}
