"""The assistant pane's words (pure): the greeting, the suggested prompts, thread titles.

Slack shows up to four suggested prompts (``assistant.threads.setSuggestedPrompts``), each
a ``title`` the person sees and the ``message`` sent as theirs when clicked. A prompt's
message is socbot's own sentence around values that were checked for their shape (an IP
address, a host name, a case number): an alert's words never become something a person
"says" to socbot. Titles are plain text, clipped.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from bot.blocks.escape import plain
from bot.blocks.kit import Message, clip

MAX_PROMPTS = 4
TITLE_CHARS = 75  # socbot's own cap for a prompt's title (one line in the pane)
THREAD_TITLE_CHARS = 120
PROMPTS_TITLE = "Try asking"
GREETING = (
    "Hi, I'm socbot. Ask me about an alert, an indicator or a host — opened beside an "
    "alert's thread, I know which alert you mean."
)
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9-]{1,63}){0,8}")


@dataclass(frozen=True)
class Offer:
    """What is useful now, from what the person may see (``bot.events.pane``)."""

    case_id: int | None = None
    case_title: str = ""
    here: bool = False  # the channel beside the pane has an alert the person may see
    ip: str | None = None
    host: str | None = None


def greeting_message() -> Message:
    return {
        "text": GREETING,
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": GREETING}}],
    }


def prompts(offer: Offer) -> list[dict[str, str]]:
    """At most four prompts, the most useful first; always at least one."""
    found: list[dict[str, str]] = []
    if offer.here:
        found.append(
            _prompt(
                "This channel's newest alert", "What did you conclude about this alert, and why?"
            )
        )
    if offer.case_id is not None:
        title = f"Case #{offer.case_id}: {' '.join(offer.case_title.split())}"
        found.append(
            _prompt(title, f"Where does case #{offer.case_id} stand, and what is left to do?")
        )
    ip = ip_shaped(offer.ip)
    if ip is not None:
        found.append(_prompt(f"Is {ip} known bad?", f"Is {ip} known bad?"))
    host = host_shaped(offer.host)
    if host is not None:
        ask = f"What did we conclude about {host} this week?"
        found.append(_prompt(ask, ask))
    if not found:
        found.append(_prompt("What can you do?", "What can you help me with?"))
    return found[:MAX_PROMPTS]


def thread_title(objective: str | None, question: str) -> str:
    """The pane thread's title: the alert's objective when one is known, else the question."""
    text = " ".join((objective or question).split()) or "socbot"
    return clip(plain(text), THREAD_TITLE_CHARS)


def ip_shaped(value: str | None) -> str | None:
    """``value`` when it is an IP address (as Python writes it), else None."""
    try:
        return str(ipaddress.ip_address((value or "").strip()))
    except ValueError:
        return None


def host_shaped(value: str | None) -> str | None:
    """``value`` when it is a host name (letters, digits, hyphens, dots), else None."""
    text = (value or "").strip().rstrip(".")
    return text if len(text) <= 253 and _HOST.fullmatch(text) else None


def _prompt(title: str, message: str) -> dict[str, str]:
    return {"title": clip(plain(title), TITLE_CHARS), "message": message}
