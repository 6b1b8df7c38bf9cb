"""The App Home view: a person's open cases, unowned high/critical cases, the queue, this
week's verdicts, agreement and cost (``bot.events.home`` reads them).

Rows are already filtered to channels the person may see (the caller's job). Every field
is attacker-written text: one line, defanged and escaped (``kit.one_line``), cut to
``TITLE_CHARS`` before the line is built, so the section stays far within Slack's 3,000
and a link after it is never cut; the view stays within 100 blocks (at most ``ROWS`` a
section). *Take* (``HOME_TAKE``, value: the case id) is decided as in the case's thread
(``bot.decisions.cases``); *Open* links to the investigation's page when ``web.base_url``
is set (``investigation.page_url``), and is left out otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.blocks.case import VERDICT_WORDS
from bot.blocks.escape import escape
from bot.blocks.investigation import page_url
from bot.blocks.kit import Block, button, clip, context_block, header_block, one_line, section

MAX_BLOCKS = 100
ROWS = 25  # per section: three sections of header + rows stay under MAX_BLOCKS
TITLE_CHARS = 300
HOME_TAKE = "home_take"  # value: the case id
OPEN = "home_open"  # a link button: Slack sends the click, socbot only acks it
SEVERITY_ICONS = {"critical": "🔴", "high": "🟠", "medium": "🟡", "low": "🔵", "info": "⚪"}


@dataclass(frozen=True)
class HomeRow:
    """One case or verdict line: the case, its title, severity, investigation and verdict."""

    case_id: int
    title: str
    severity: str
    investigation_id: str
    verdict: str = ""


@dataclass(frozen=True)
class HomeFigures:
    """The queue of the person's channels and this week's figures there."""

    waiting: int = 0
    running: int = 0
    held: int = 0
    cases: int = 0
    decided: int = 0
    agreed: int = 0
    cost_usd: float = 0.0


def _line(row: HomeRow) -> str:
    severity = (row.severity or "").lower()
    icon = SEVERITY_ICONS.get(severity, "▫️")
    title = one_line(clip(" ".join(row.title.split()), TITLE_CHARS)) or "(no title)"
    line = f"{icon} *#{row.case_id}* {title}"
    if severity:
        line += f" · {escape(clip(severity, 20))}"
    if row.verdict:
        line += f" · {VERDICT_WORDS.get(row.verdict, escape(clip(row.verdict, 40)))}"
    return line


def _row(row: HomeRow, part: str, take: bool, web_url: str) -> Block:
    block = section(_line(row))
    block["block_id"] = f"home_{part}_{row.case_id}"
    url = page_url(web_url, row.investigation_id)
    if take:
        block["accessory"] = button("🙋 Take it", HOME_TAKE, str(row.case_id), "primary")
        if url:  # one accessory a section: Open becomes a link in the text
            block["text"]["text"] += f"  <{url}|Open>"
    elif url:
        block["accessory"] = {
            "type": "button",
            "action_id": OPEN,
            "text": {"type": "plain_text", "text": "Open"},
            "url": url,
        }
    return block


def _part(title: str, part: str, rows: Sequence[HomeRow], take: bool, web_url: str) -> list[Block]:
    head = header_block(title)
    head["block_id"] = f"home_{part}"
    blocks = [head]
    if not rows:
        empty = context_block("Nothing here.")
        empty["block_id"] = f"home_{part}_none"
        blocks.append(empty)
    return blocks + [_row(row, part, take, web_url) for row in rows[:ROWS]]


def _percent(agreed: int, decided: int) -> str:
    if not decided:
        return "agreement: nothing decided yet"
    return f"agreement *{round(100 * agreed / decided)} %* ({agreed} of {decided} decided)"


def _figures(figures: HomeFigures) -> list[Block]:
    queue = context_block(
        f"*Queue* in your channels: *{figures.waiting}* waiting · *{figures.running}* running"
        f" · *{figures.held}* held by policy"
    )
    week = context_block(
        f"*This week*: {figures.cases} cases · {_percent(figures.agreed, figures.decided)}"
        f" · cost ${figures.cost_usd:,.2f}"
    )
    queue["block_id"], week["block_id"] = "home_queue", "home_week"
    return [queue, week]


def home_view(
    mine: Sequence[HomeRow],
    unowned: Sequence[HomeRow],
    verdicts: Sequence[HomeRow],
    web_url: str = "",
    *,
    figures: HomeFigures | None = None,
    notice: str = "",
) -> dict[str, Any]:
    """The ``home`` view to publish for one person; ``notice``: socbot's own mrkdwn (what
    became of their last click, its parts already escaped), shown first."""
    blocks: list[Block] = []
    if notice:
        note = section(f"⚠️ {clip(notice, 500)}")
        note["block_id"] = "home_notice"
        blocks.append(note)
    blocks += _figures(figures or HomeFigures())
    blocks += (
        _part("Your open cases", "mine", mine, False, web_url)
        + _part("Unowned high/critical cases", "unowned", unowned, True, web_url)
        + _part("Recent verdicts in your channels", "verdicts", verdicts, False, web_url)
    )
    return {"type": "home", "blocks": blocks[:MAX_BLOCKS]}
