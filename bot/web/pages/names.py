"""Slack users and channels by name on the pages: ``@Jane Doe`` for ``U0LEAD0001``,
``#alerts-prod`` for ``C0ALERTS1``.

Names come from Slack (``users.info``, ``conversations.info``, the bot token's client the
pages already hold) and are kept per replica: ``KEEP_S`` for a name, ``MISSING_S`` for an
id Slack does not know, ``FAILED_S`` for one it could not answer (a rate limit, an error,
no answer within ``LOOKUP_S``), so a failing Slack is asked again at most once in that
time; the least recently shown go first past ``SIZE`` ids. A name past its time is still
shown while it is asked for again in the background.

A page is drawn from what is known; the ids it lacked are asked for at once (at most
``PER_PAGE``, ``PARALLEL`` calls at a time) and the page is drawn again after they answer
or ``WAIT_S``, whichever comes first: a warm cache costs no call to Slack, a cold one at
most ``WAIT_S`` (what is not back by then shows the id, and lands in the cache for the
next view). Only ids shaped like Slack's are ever looked up; anything else (``socbot``,
``cli:root``) is shown as it is. A name is data from Slack, which its owner chose: control
and formatting characters are dropped, it is cut to ``NAME_CHARS`` and always escaped.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any, Literal

from markupsafe import Markup, escape
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.errors import SLACK_ERRORS
from tools.retry_after import retry_after

log = logging.getLogger(__name__)

Kind = Literal["user", "channel"]
SHAPES: dict[Kind, re.Pattern[str]] = {
    "user": re.compile(r"[UW][A-Z0-9]{8,20}"),
    "channel": re.compile(r"[CG][A-Z0-9]{8,20}"),  # a DM (D…) has no name to show
}
SIGILS: dict[Kind, str] = {"user": "@", "channel": "#"}
NOT_FOUND = {"user_not_found", "channel_not_found"}  # users.info, conversations.info
NAME_CHARS = 64  # Slack allows 80 for a display name; a page needs far fewer
OTHER_CHARS = 64  # a value that is no Slack id (``socbot``, ``cli:root``), as shown
KEEP_S = 900.0  # a name (a rename shows within 15 minutes)
MISSING_S = 900.0  # an id Slack does not know
FAILED_S = 120.0  # Slack failed or was rate limited: not asked again for this long
LIMITED_S = 900.0  # at most this long when Slack's Retry-After asks for longer
SIZE = 5000  # ids kept
WAIT_S = 0.25  # how long a page waits for names it lacks
LOOKUP_S = 3.0  # one lookup, queueing included, before it counts as failed
PARALLEL = 4  # calls to Slack at a time
PER_PAGE = 100  # lookups one page may start
PENDING = 500  # lookups under way at most

Entry = tuple[float, str | None]  # until when, the name (None: show the id)


def shaped(kind: Kind, value: str) -> bool:
    """``value`` looks like a Slack id of ``kind`` (nothing else is ever looked up)."""
    return SHAPES[kind].fullmatch(value) is not None


def cleaned(text: object, size: int = NAME_CHARS) -> str:
    """``text`` without control or formatting characters (bidi overrides among them),
    spaces collapsed, cut to ``size`` characters with "…"."""
    raw = str(text or "")[: size * 4]
    kept = "".join(" " if unicodedata.category(c)[0] == "C" else c for c in raw)
    one = " ".join(kept.split())  # separators (category Z) are all whitespace to split()
    return one if len(one) <= size else one[: size - 1].rstrip() + "…"


def user_name(user: dict[str, Any]) -> str:
    """The name Slack shows for a user: display name, else real name, else handle."""
    found = user.get("profile")
    profile: dict[str, Any] = found if isinstance(found, dict) else {}
    for value in (
        profile.get("display_name"),
        profile.get("real_name"),
        user.get("real_name"),
        user.get("name"),
    ):
        name = cleaned(value)
        if name:
            return name
    return ""


def channel_name(channel: dict[str, Any]) -> str:
    """A channel's name (a direct message, never looked up, has none)."""
    return cleaned(channel.get("name"))


def _header(headers: Any, name: str) -> str | None:
    for key, value in dict(headers or {}).items():
        if str(key).lower() == name:
            return str(value[0] if isinstance(value, list) and value else value)
    return None


class Names:
    """Slack ids as names on the pages; one per replica, shared by every page."""

    def __init__(
        self,
        client: AsyncWebClient | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        size: int = SIZE,
        wait_s: float = WAIT_S,
    ) -> None:
        self.client = client
        self.clock = clock
        self.size = size
        self.wait_s = wait_s
        self._known: OrderedDict[str, Entry] = OrderedDict()
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._parallel = asyncio.Semaphore(PARALLEL)
        self._lacking: ContextVar[set[str] | None] = ContextVar("lacking", default=None)

    # what templates call ------------------------------------------------------------

    def user(self, value: object) -> Markup:
        """``@Jane Doe`` (the id as its title), else the id; escaped."""
        return self._shown("user", value)

    def channel(self, value: object) -> Markup:
        """``#alerts-prod`` (the id as its title), else the id; escaped."""
        return self._shown("channel", value)

    def _shown(self, kind: Kind, value: object) -> Markup:
        text = "" if value is None else str(value)
        if not shaped(kind, text):
            plain = len(text) <= OTHER_CHARS and text.isprintable()
            return escape(text if plain else cleaned(text, OTHER_CHARS))
        name = self.name(text)  # ``text`` is letters and digits only: nothing to escape
        if not name:
            return Markup(f'<code class="id">{text}</code>')
        return Markup(f'<span class="name" title="{text}">{SIGILS[kind]}{escape(name)}</span>')

    # the cache ----------------------------------------------------------------------

    def name(self, slack_id: str) -> str | None:
        """The name known for ``slack_id`` (None: show the id). One not known (or not
        found too long ago) is asked for by the page being drawn (``draw``), else at once
        in the background; a name known too long ago is shown while asked for again."""
        if self.client is None:
            return None
        entry = self._known.get(slack_id)
        if entry is not None:
            self._known.move_to_end(slack_id)
            if self.clock() < entry[0]:
                return entry[1]
            if entry[1]:
                self._start(slack_id)  # shown as it was while asked again
                return entry[1]
        lacking = self._lacking.get()
        if lacking is not None:
            lacking.add(slack_id)
        else:
            self._start(slack_id)
        return None

    async def draw(self, page: Callable[[], str]) -> str:
        """``page()`` with the names it shows: drawn again once the ids it lacked are
        looked up (or ``wait_s`` passed)."""
        token = self._lacking.set(set())
        try:
            html = page()
            lacking = self._lacking.get() or set()
        finally:
            self._lacking.reset(token)
        if not lacking:
            return html
        await self.fetch(lacking)
        return page()

    async def fetch(self, ids: Iterable[str]) -> None:
        """Look up ``ids`` not yet known (at most ``PER_PAGE``), waiting up to ``wait_s``."""
        started = [t for i in sorted(ids)[:PER_PAGE] if (t := self._start(i)) is not None]
        if started:
            await asyncio.wait(started, timeout=self.wait_s)

    def _start(self, slack_id: str) -> asyncio.Task[None] | None:
        task = self._pending.get(slack_id)
        if task is not None or self.client is None or len(self._pending) >= PENDING:
            return task
        if not (shaped("user", slack_id) or shaped("channel", slack_id)):
            return None
        try:
            task = asyncio.get_running_loop().create_task(self._lookup(slack_id))
        except RuntimeError:  # drawn outside the loop: nothing to ask with
            return None
        self._pending[slack_id] = task
        task.add_done_callback(lambda _t: self._pending.pop(slack_id, None))
        return task

    def _keep(self, slack_id: str, name: str | None, for_s: float) -> None:
        self._known[slack_id] = (self.clock() + for_s, name or None)
        self._known.move_to_end(slack_id)
        while len(self._known) > self.size:
            self._known.popitem(last=False)

    async def _lookup(self, slack_id: str) -> None:
        try:
            async with asyncio.timeout(LOOKUP_S), self._parallel:
                name = await self._ask(slack_id)
        except SLACK_ERRORS as error:
            self._failed(slack_id, error)
            return
        except Exception as error:  # an answer not as documented: shown as the id
            log.exception("no name for %s from Slack", slack_id)
            self._failed(slack_id, error)
            return
        self._keep(slack_id, name, KEEP_S if name else MISSING_S)

    def _failed(self, slack_id: str, error: Exception) -> None:
        """Not found: kept as such; anything else keeps the name shown before (if any) for
        ``FAILED_S`` (or as long as a rate limit's Retry-After asks, up to ``LIMITED_S``)."""
        response = error.response if isinstance(error, SlackApiError) else None
        data = response.data if response is not None else None
        code = str(data.get("error") or "") if isinstance(data, dict) else ""
        if code in NOT_FOUND:
            self._keep(slack_id, None, MISSING_S)
            return
        wait = FAILED_S
        if response is not None and response.status_code == 429:
            asked = retry_after(_header(response.headers, "retry-after"))
            wait = min(max(FAILED_S, asked or 0.0), LIMITED_S)
        log.warning("no name for %s from Slack: %s", slack_id, code or type(error).__name__)
        had = self._known.get(slack_id)
        self._keep(slack_id, had[1] if had else None, wait)

    async def _ask(self, slack_id: str) -> str:
        assert self.client is not None
        if shaped("user", slack_id):
            found = await self.client.users_info(user=slack_id)
            user = found.get("user")
            return user_name(user) if isinstance(user, dict) else ""
        found = await self.client.conversations_info(channel=slack_id)
        channel = found.get("channel")
        return channel_name(channel) if isinstance(channel, dict) else ""
