"""When two alerts are "the same alert again": triage groups them (``bot.intake.triage``)."""

from __future__ import annotations

import re

from alerts.parse import Alert

_DIGITS = re.compile(r"\d+")


def group_key(alert: Alert) -> str:
    """Equal keys: same source, title with numbers blurred, and primary indicator
    (public indicators first)."""
    title = " ".join(_DIGITS.sub("#", alert.title.lower()).split())
    ranked = sorted(alert.indicators, key=lambda i: i.private)  # public ones first
    indicator = f"{ranked[0].kind}:{ranked[0].value.lower()}" if ranked else ""
    return f"{alert.source}|{title}|{indicator}"
