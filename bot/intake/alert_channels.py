"""Alerts forwarded into Slack by other bots and integrations, as alert JSON.

Only integration messages count: ``bot_message`` subtype, a ``bot_id``, or an
attachments-/blocks-only message with empty ``text``. A human typing in an alert
channel is not an alert. The result is handed to ``alerts.parse.parse_alert``:

* if the message carries a JSON object (the whole text, or a fenced code block in
  the text, an attachment or a block), that object is the alert — GuardDuty, SCC
  and generic formats are recognised by the parser;
* otherwise a generic alert ``{title, severity, description, fields, link, slack}``
  is assembled from attachment titles/fields/colours and header/section blocks, with
  Slack mrkdwn (`` `High` ``, ``*bold*``, ``<url|label>``) taken off the values.

The posting bot's or integration's own name (``posted_by``) is never an indicator.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from alerts.catalogue import Catalogue
from alerts.json_input import BadJson, loads_object
from alerts.parse import Alert, parse_alert
from store.schema import AlertStatus
from store.triage.alerts import AlertStore

log = logging.getLogger(__name__)

_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
_COLOR_SEVERITY = {"danger": "high", "#ff0000": "high", "warning": "medium", "good": "low"}
_SEVERITY_KEYS = ("severity", "priority", "risk", "level")
_MAX_TEXT = 4000
_LINK = re.compile(r"<(?:[^|>]*\|)?([^>]*)>")
_MARKS = re.compile(r"(?<![\w])([*_~`]+)(\S(?:.*?\S)?)\1(?![\w])", re.DOTALL)
_BLOCK_FIELD = re.compile(r"^\s*\*([^*\n]{1,60})\*\s*:?\s*(.*)$", re.DOTALL)


def is_integration_message(event: dict[str, Any]) -> bool:
    """True for messages posted by bots, apps, webhooks and integrations."""
    if event.get("subtype") == "bot_message" or event.get("bot_id"):
        return True
    text = str(event.get("text") or "").strip()
    return not text and bool(event.get("attachments") or _non_rich_blocks(event))


def alert_from_message(event: dict[str, Any]) -> tuple[dict[str, Any], str | None] | None:
    """(alert JSON, source hint) for an integration message, or None for anything else."""
    if not is_integration_message(event):
        return None
    embedded = _embedded_json(event)
    if embedded is not None:
        return embedded, None
    built = _generic(event)
    if not built["title"] and not built["description"] and not built["fields"]:
        return None  # nothing to investigate (e.g. an empty bot ping)
    return built, None  # generic unless a format knows it (e.g. a GuardDuty notifier's)


def posted_by(event: dict[str, Any]) -> list[str]:
    """The names the posting bot or integration goes by (never indicators)."""
    profile = event.get("bot_profile")
    names = [event.get("username"), profile.get("name") if isinstance(profile, dict) else None]
    for att in event.get("attachments") or []:
        if isinstance(att, dict):
            names += [att.get("author_name"), att.get("footer")]
    return [n.strip() for n in names if isinstance(n, str) and n.strip()]


def plain_text(text: str) -> str:
    """Slack mrkdwn taken off: ``<url|label>`` → label, `` `x` ``/``*x*``/``_x_`` → x."""
    text = _LINK.sub(lambda m: m.group(1), text)
    for _ in range(3):  # nested marks: *`High`*
        text = _MARKS.sub(lambda m: m.group(2), text)
    return _unslack(text).strip()


def _unslack(text: str) -> str:
    """Text as sent: Slack's auto-links (``<https://x|x>``) undone, ``&lt;`` unescaped."""
    text = _LINK.sub(lambda m: m.group(1), text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _texts(event: dict[str, Any]) -> list[str]:
    """Every text a message carries, in reading order."""
    out = [str(event.get("text") or "")]
    for att in event.get("attachments") or []:
        if isinstance(att, dict):
            out += [str(att.get(k) or "") for k in ("pretext", "title", "text", "fallback")]
    for block in event.get("blocks") or []:
        out += _block_texts(block)
    return [t for t in out if t.strip()]


def _block_texts(block: object) -> list[str]:
    if not isinstance(block, dict):
        return []
    out: list[str] = []
    text = block.get("text")
    if isinstance(text, dict) and isinstance(text.get("text"), str):
        out.append(text["text"])
    elif isinstance(text, str):
        out.append(text)
    for key in ("fields", "elements"):
        for child in block.get(key) or []:
            out += _block_texts(child)
    return out


def _embedded_json(event: dict[str, Any]) -> dict[str, Any] | None:
    for text in _texts(event):
        text = _unslack(text)
        candidates = [text.strip(), *_FENCE.findall(text)]
        for candidate in candidates:
            if not candidate.startswith("{"):
                continue
            try:  # depth-checked, like the webhook body
                return loads_object(candidate, what="the message's JSON")
            except BadJson:
                continue
    return None


def _generic(event: dict[str, Any]) -> dict[str, Any]:
    attachments = [a for a in event.get("attachments") or [] if isinstance(a, dict)]
    first = attachments[0] if attachments else {}
    fields = _fields(event, attachments)
    header = _header_text(event)
    text = str(event.get("text") or "").strip()
    title = str(first.get("title") or header or first.get("pretext") or "").strip()
    if not title:
        title = (text or str(first.get("fallback") or "")).split("\n", 1)[0].strip()
    description = "\n".join(
        [t for t in (text, *(str(a.get("text") or "") for a in attachments)) if t.strip()]
        + [t for b in event.get("blocks") or [] if _kind(b) == "section" for t in _block_texts(b)]
    )
    return {
        "title": plain_text(title)[:300],
        "severity": _severity(fields, str(first.get("color") or "")),
        "description": plain_text(description)[:_MAX_TEXT],
        "fields": fields,
        "link": first.get("title_link") or first.get("from_url"),
        "slack": {
            "channel": event.get("channel"),
            "ts": event.get("ts"),
            "bot_id": event.get("bot_id"),
            "posted_by": next(iter(posted_by(event)), None),
        },
    }


def _fields(event: dict[str, Any], attachments: list[dict[str, Any]]) -> dict[str, str]:
    """Attachment fields and ``*Key*: value`` block fields, mrkdwn taken off."""
    fields: dict[str, str] = {}
    for att in attachments:
        for field in att.get("fields") or []:
            if isinstance(field, dict) and field.get("title"):
                fields[plain_text(str(field["title"]))] = plain_text(str(field.get("value") or ""))
    for block in event.get("blocks") or []:
        if not isinstance(block, dict) or _kind(block) != "section":
            continue
        for child in block.get("fields") or []:
            for text in _block_texts(child):
                m = _BLOCK_FIELD.match(text)
                if m:
                    fields.setdefault(plain_text(m.group(1)), plain_text(m.group(2)))
    return fields


def _severity(fields: dict[str, str], color: str) -> str | None:
    for key, value in fields.items():
        if any(word in key.lower() for word in _SEVERITY_KEYS) and value.strip():
            return value.strip()
    return _COLOR_SEVERITY.get(color.lower())


def _header_text(event: dict[str, Any]) -> str:
    for block in event.get("blocks") or []:
        if _kind(block) == "header":
            texts = _block_texts(block)
            if texts:
                return texts[0]
    return ""


def _kind(block: object) -> str:
    return str(block.get("type")) if isinstance(block, dict) else ""


def _non_rich_blocks(event: dict[str, Any]) -> list[object]:
    """Blocks other than the ``rich_text`` every human message from a Slack client has."""
    return [b for b in event.get("blocks") or [] if _kind(b) != "rich_text"]


class AlertIntake:
    """Parses an alert payload and stores it; both entry points (Slack, webhook) use it."""

    def __init__(self, store: AlertStore, catalogue: Catalogue | None = None) -> None:
        self.store = store
        self.catalogue = catalogue

    async def accept(
        self,
        data: dict[str, Any],
        source_hint: str | None,
        *,
        slack_channel: str | None = None,
        slack_ts: str | None = None,
        not_indicators: Sequence[str] = (),
        triaged: bool = True,
    ) -> Alert:
        """Parse and store the alert; ``triaged``: a triage places it (``received``)."""
        alert = parse_alert(
            data, source_hint, catalogue=self.catalogue, not_indicators=not_indicators
        )
        # "received" in the same transaction: triage places it even if this process dies
        await self.store.save(
            alert,
            slack_channel=slack_channel,
            slack_ts=slack_ts,
            status=AlertStatus.RECEIVED if triaged else None,
        )
        log.info("alert %s stored (source %s)", alert.id, alert.source)
        return alert
