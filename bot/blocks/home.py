"""The App Home view: a user's open cases, unowned high/critical cases and recent verdicts.

Rows are already filtered to channels the user can see (the caller's job). Every field is
attacker-written text, so it is escaped and cut to Slack's limits; the view stays within
100 blocks. "Take" reuses the case card's ``case_take`` action (value: investigation id);
"Open" links to the web page when a web URL is set, and is left out otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.blocks.escape import escape

MAX_BLOCKS = 100
MAX_ROWS = 25  # per section; three sections of header + rows stay under MAX_BLOCKS
TEXT_LIMIT = 3000


@dataclass(frozen=True)
class HomeRow:
    """One case or verdict line: its id, title, severity, and the investigation to take."""

    case_id: int
    title: str
    severity: str
    investigation_id: str
    verdict: str = ""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _row(row: HomeRow, section: str, take: bool, web_url: str) -> dict[str, Any]:
    line = f"*#{row.case_id}* [{escape(row.severity)}] {escape(row.title)}"
    if row.verdict:
        line += f" — {escape(row.verdict)}"
    block: dict[str, Any] = {
        "type": "section",
        "block_id": f"home_{section}_{row.case_id}",
        "text": {"type": "mrkdwn", "text": _cut(line, TEXT_LIMIT)},
    }
    buttons: list[dict[str, Any]] = []
    if take:
        buttons.append(
            {
                "type": "button",
                "action_id": "case_take",
                "text": {"type": "plain_text", "text": "🙋 Take it"},
                "value": _cut(row.investigation_id, 2000),
            }
        )
    if web_url:
        buttons.append(
            {
                "type": "button",
                "action_id": f"home_open_{section}_{row.case_id}",
                "text": {"type": "plain_text", "text": "Open"},
                "url": _cut(f"{web_url.rstrip('/')}/cases/{row.case_id}", 3000),
            }
        )
    if len(buttons) == 2:
        return _with_actions(block, buttons)
    if buttons:
        block["accessory"] = buttons[0]
    return block


def _with_actions(block: dict[str, Any], buttons: list[dict[str, Any]]) -> dict[str, Any]:
    # A section holds one accessory: Take goes there, Open in the text as a link.
    block["accessory"] = buttons[0]
    block["text"]["text"] = _cut(f"{block['text']['text']}  <{buttons[1]['url']}|open>", TEXT_LIMIT)
    return block


def _part(
    title: str, section: str, rows: Sequence[HomeRow], take: bool, web_url: str
) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [
        {
            "type": "header",
            "block_id": f"home_{section}",
            "text": {"type": "plain_text", "text": title},
        }
    ]
    if not rows:
        blocks.append(
            {
                "type": "context",
                "block_id": f"home_{section}_none",
                "elements": [{"type": "mrkdwn", "text": "Nothing here."}],
            }
        )
    blocks += [_row(row, section, take, web_url) for row in rows[:MAX_ROWS]]
    return blocks


def home_view(
    mine: Sequence[HomeRow],
    unowned: Sequence[HomeRow],
    verdicts: Sequence[HomeRow],
    web_url: str = "",
) -> dict[str, Any]:
    """The ``home`` view to publish for one user."""
    blocks = (
        _part("Your open cases", "mine", mine, False, web_url)
        + _part("Unowned high/critical cases", "unowned", unowned, True, web_url)
        + _part("Recent verdicts", "verdicts", verdicts, False, web_url)
    )
    return {"type": "home", "blocks": blocks[:MAX_BLOCKS]}
