"""The "Suppress similar…" dialog and the review message of a suppression (Block Kit).

The dialog is pre-filled from the alert: its source, its title as a pattern (glob
characters escaped, digits blurred to ``*`` so that the next instance matches), its
entities (all ticked: the narrowest suppression; untick what differs), an expiry in
days and a reason. What an analyst sends back is checked like a rule file's rule
(``alerts.policy``) before anything is stored. Alert text is shown as ``plain_text``
in the dialog and escaped and defanged in the review message (an attacker may have
written it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from alerts.model import Alert
from alerts.policy.decide import CompiledRule
from alerts.policy.rules import Rule
from bot.blocks.escape import mrkdwn
from bot.blocks.kit import button, section
from core.ids import row_id
from store.triage.suppressions import Suppression

VIEW_ID = "policy_suppress_dialog"
MAX_ENTITIES = 10  # Slack's checkboxes take at most 10 options
REASON_CHARS = 500
_GLOB = re.compile(r"([*?\[])")
_SOURCE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


def literal(text: str) -> str:
    """``text`` as a glob matching only itself (``*`` → ``[*]``)."""
    return _GLOB.sub(r"[\1]", text)


def title_pattern(title: str) -> str:
    """The alert's title as a pattern for similar alerts: literal, numbers blurred."""
    return re.sub(r"\d+", "*", literal(title))


def _label(text: str, size: int = 75) -> dict[str, Any]:
    clipped = text if len(text) <= size else text[: size - 1] + "…"
    return {"type": "plain_text", "text": clipped or "-", "emoji": False}


def _input(block_id: str, label: str, element: dict[str, Any], **extra: Any) -> dict[str, Any]:
    element = {"action_id": block_id, **element}
    return {
        "type": "input",
        "block_id": block_id,
        "label": _label(label),
        "element": element,
        **extra,
    }


def dialog(alert: Alert, metadata: dict[str, str], *, days: int, max_days: int) -> dict[str, Any]:
    """The modal, pre-filled from ``alert``."""
    options = [
        {
            "text": _label(f"{e.kind}: {e.value}" + (f" ({e.role})" if e.role else "")),
            "value": str(n),
        }
        for n, e in enumerate(alert.entities[:MAX_ENTITIES])
    ]
    blocks = [
        _input("source", "Source", {"type": "plain_text_input", "initial_value": alert.source}),
        _input(
            "title",
            "Title pattern (* matches anything)",
            {"type": "plain_text_input", "initial_value": title_pattern(alert.title)[:150]},
        ),
    ]
    if options:
        element = {"type": "checkboxes", "options": options, "initial_options": options}
        blocks.append(_input("entities", "Only when the alert names these", element, optional=True))
    blocks += [
        _input(
            "days",
            f"Expires in (days, at most {max_days})",
            {
                "type": "number_input",
                "is_decimal_allowed": False,
                "min_value": "1",
                "max_value": str(max_days),
                "initial_value": str(min(days, max_days)),
            },
        ),
        _input(
            "reason",
            "Why is this benign?",
            {"type": "plain_text_input", "multiline": True, "max_length": REASON_CHARS},
        ),
    ]
    return {
        "type": "modal",
        "callback_id": VIEW_ID,
        "private_metadata": json.dumps(metadata),
        "title": _label("Suppress similar alerts", 24),
        "submit": _label("Ask approvers"),
        "close": _label("Cancel"),
        "blocks": blocks,
    }


@dataclass(frozen=True)
class Asked:
    """A suppression as the dialog asks for it: the rule as data, reason, days."""

    rule: dict[str, Any]
    reason: str
    days: int


def _value(values: dict[str, Any], block: str) -> Any:
    return (values.get(block) or {}).get(block) or {}


def read_dialog(
    values: dict[str, Any], alert: Alert, *, max_days: int
) -> tuple[Asked | None, dict[str, str]]:
    """What the dialog asks for, or the errors to show by block."""
    errors: dict[str, str] = {}
    source = str(_value(values, "source").get("value") or "").strip().lower()
    title = str(_value(values, "title").get("value") or "").strip()
    reason = str(_value(values, "reason").get("value") or "").strip()[:REASON_CHARS]
    picked = _value(values, "entities").get("selected_options") or []
    try:
        days = int(str(_value(values, "days").get("value") or ""))
    except ValueError:
        days = 0
    if not _SOURCE.match(source):
        errors["source"] = "A source is one short word, e.g. guardduty."
    if not title.strip("*"):
        errors["title"] = "A title pattern must say more than *."
    if not 1 <= days <= max_days:
        errors["days"] = f"Between 1 and {max_days} days (policy.max_suppress_days)."
    if not reason:
        errors["reason"] = "Say why these alerts are benign: approvers read it."
    entities = []
    for option in picked:
        index = str(option.get("value") or "") if isinstance(option, dict) else ""
        at = row_id(index)
        if at is not None and at < min(len(alert.entities), MAX_ENTITIES):
            e = alert.entities[at]
            entities.append({"kind": e.kind, "value": literal(e.value), "role": e.role})
    match: dict[str, Any] = {"source": source, "title": title}
    if entities:
        match["entity"] = [{k: v for k, v in e.items() if v is not None} for e in entities]
    rule = {"match": match}
    if not errors:
        try:  # the same checks as a rule file's rule
            checked = {"id": "slack-new", "action": "ignore", **rule}
            CompiledRule.of(Rule.model_validate(checked), "slack")
        except (ValidationError, ValueError) as error:
            errors["title"] = " ".join(str(error).split())[:150]
    return (None if errors else Asked(rule, reason, days)), errors


def describe(s: Suppression) -> str:
    """The suppression in mrkdwn, alert text escaped."""
    match = s.rule.get("match") or {}
    lines = [
        f"*Source:* `{mrkdwn(str(match.get('source', '')))}`",
        f"*Title like:* `{mrkdwn(str(match.get('title', '')))}`",
    ]
    for e in match.get("entity") or []:
        role = f" as {mrkdwn(str(e.get('role')))}" if e.get("role") else ""
        lines.append(f"*{mrkdwn(str(e.get('kind')))}:* `{mrkdwn(str(e.get('value')))}`{role}")
    lines.append(f"*Until:* {s.expires_at:%Y-%m-%d %H:%M} UTC")
    lines.append(f"*Why:* {mrkdwn(s.reason)}")
    lines.append(f"Asked by <@{s.proposed_by}> at {s.proposed_at:%Y-%m-%d %H:%M} UTC")
    return "\n".join(lines)


def review_blocks(s: Suppression) -> list[dict[str, Any]]:
    """The review channel's message: what would be suppressed, and what an approver can do."""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": _label(f"Suppression proposal {s.rule_id}", 150)},
        section(describe(s)),
    ]
    buttons = []
    if s.status == "proposed":
        buttons = [
            ("Approve", "suppression_approve", "primary"),
            ("Reject", "suppression_reject", "danger"),
        ]
    elif s.status == "approved":
        buttons = [("Lift", "suppression_lift", "danger")]
    decided = {
        "approved": f"*Approved* by <@{s.decided_by}>",
        "rejected": f"*Rejected* by <@{s.decided_by}>",
        "lifted": f"*Lifted* by <@{s.lifted_by}> (approved by <@{s.decided_by}>)",
    }.get(s.status)
    if decided:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": decided}]})
    if buttons:
        elements = [button(label, action, str(s.id), style) for label, action, style in buttons]
        blocks.append({"type": "actions", "block_id": "suppression_review", "elements": elements})
    return blocks
