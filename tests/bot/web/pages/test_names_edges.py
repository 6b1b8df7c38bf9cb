"""The edges of ``bot.web.pages.names``: how a name is cleaned and cut (exactly at the
limit, at a space, behind invisible characters), which of Slack's user fields names a
person, how values that are no Slack id are shown, when a kept name or failure runs out
(to the second), how long a rate limit is honoured, the cap on lookups under way, and
what is logged. Against the Slack fake through a real ``AsyncWebClient``; names invented."""

from __future__ import annotations

import asyncio
import logging

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.web.pages import names as names_module
from bot.web.pages.names import (
    FAILED_S,
    KEEP_S,
    LIMITED_S,
    NAME_CHARS,
    OTHER_CHARS,
    Names,
    cleaned,
    user_name,
)
from tests.bot.web.pages.test_names import ALERTS, LEAD, Clock, fake, names_for, settled, shown
from tests.fakes.slack_api import FakeSlackAPI

__all__ = ["fake"]  # the fixture, shared with test_names


def test_a_name_of_exactly_the_limit_is_kept_whole() -> None:
    assert cleaned("B" * NAME_CHARS) == "B" * NAME_CHARS
    assert cleaned("B" * (NAME_CHARS + 1)) == "B" * (NAME_CHARS - 1) + "…"


def test_a_cut_at_a_space_leaves_no_space_before_the_ellipsis() -> None:
    text = "A" * (NAME_CHARS - 2) + " " + "B" * 10
    assert cleaned(text) == "A" * (NAME_CHARS - 2) + "…"


def test_invisible_characters_before_a_name_do_not_hide_it() -> None:
    assert cleaned("\u200b" * 200 + "Jane") == "Jane"  # format characters: dropped
    assert cleaned("\t\u2028Jane\u00a0Doe\x7f") == "Jane Doe"  # controls and separators
    assert cleaned(None) == "" and cleaned(12) == "12"
    assert cleaned("\u2029\u3000\u205fx\u1680y") == "x y"  # every kind of separator
    assert cleaned("\u200b" * (NAME_CHARS * 4) + "Jane") == ""  # reads 4 times the limit at most


def test_which_field_names_a_user() -> None:
    assert user_name({"profile": {"display_name": "Disp", "real_name": "Prof"}}) == "Disp"
    assert user_name({"profile": {"display_name": " ", "real_name": "Prof"}}) == "Prof"
    top = {"profile": {"display_name": "", "real_name": ""}, "real_name": "Top", "name": "h"}
    assert user_name(top) == "Top"
    assert user_name({"profile": "not a dict", "real_name": "Top", "name": "h"}) == "Top"
    assert user_name({"profile": None, "name": "handle"}) == "handle"
    assert user_name({"profile": {}, "real_name": "\u200b", "name": None}) == ""


async def test_a_user_with_no_name_at_all_shows_the_id(fake: FakeSlackAPI) -> None:
    fake.add_user("U0NONAME01", profile={"display_name": ""}, real_name="", name="")
    fake.add_user("U0ODDPROF1", profile=["x"], real_name="Odd Profile")
    page = await shown(names_for(fake), " ", "U0NONAME01", "U0ODDPROF1")
    assert page == '<code class="id">U0NONAME01</code> ' + (
        '<span class="name" title="U0ODDPROF1">@Odd Profile</span>'
    )


def test_values_that_are_no_slack_id_are_shown_cleaned_and_cut() -> None:
    names = Names(None)
    assert str(names.user(None)) == "" and str(names.channel(None)) == ""
    assert str(names.user(12)) == "12"
    spaced = "a  " + "b" * (OTHER_CHARS - 3)  # printable, exactly the limit: as it is
    assert str(names.user(spaced)) == spaced
    assert str(names.user("x" * (OTHER_CHARS + 1))) == "x" * (OTHER_CHARS - 1) + "…"
    assert str(names.channel("cli:\x00root\u202e<b>")) == "cli: root &lt;b&gt;"


def test_drawn_outside_a_running_loop_shows_the_id(fake: FakeSlackAPI) -> None:
    names = names_for(fake)
    assert str(names.user(LEAD)) == f'<code class="id">{LEAD}</code>'
    assert not names._pending and fake.calls == []


async def test_outside_a_page_a_missing_name_is_asked_for_in_the_background(
    fake: FakeSlackAPI,
) -> None:
    names = names_for(fake)
    assert str(names.channel(ALERTS)) == f'<code class="id">{ALERTS}</code>'
    assert list(names._pending) == [ALERTS]
    await settled(names)
    assert str(names.channel(ALERTS)) == f'<span class="name" title="{ALERTS}">#alerts-prod</span>'


async def test_a_name_is_asked_again_the_second_its_time_is_up(fake: FakeSlackAPI) -> None:
    clock = Clock()
    names = names_for(fake, clock)
    await shown(names, " ", LEAD)
    clock.now += KEEP_S - 0.5
    await shown(names, " ", LEAD)
    await settled(names)
    assert len(fake.calls_to("users.info")) == 1
    clock.now += 0.5
    fake.add_user(LEAD, profile={"display_name": "Jane Renamed"})
    assert "@Jane Doe" in await shown(names, " ", LEAD)  # shown while asked again
    await settled(names)
    assert len(fake.calls_to("users.info")) == 2
    assert "@Jane Renamed" in await shown(names, " ", LEAD)


@pytest.mark.parametrize(("asked", "kept"), [(10, FAILED_S), (5000, LIMITED_S)])
async def test_a_rate_limit_is_kept_at_least_the_failure_time_at_most_the_cap(
    fake: FakeSlackAPI, asked: int, kept: float
) -> None:
    fake.fail_next("users.info", status=429, retry_after=asked)
    clock = Clock()
    names = names_for(fake, clock)
    await shown(names, " ", LEAD)
    clock.now += kept - 1
    assert await shown(names, " ", LEAD) == f'<code class="id">{LEAD}</code>'
    assert len(fake.calls_to("users.info")) == 1
    clock.now += 1
    assert "@Jane Doe" in await shown(names, " ", LEAD)
    assert len(fake.calls_to("users.info")) == 2


async def test_lookups_under_way_are_capped(
    fake: FakeSlackAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(names_module, "PENDING", 1)
    fake.add_user("U0SECOND01", profile={"display_name": "Second"})
    names = names_for(fake)
    page = await shown(names, " ", LEAD, "U0SECOND01")
    assert (
        page
        == f'<span class="name" title="{LEAD}">@Jane Doe</span> <code class="id">U0SECOND01</code>'
    )
    assert [c.args["user"] for c in fake.calls_to("users.info")] == [LEAD]
    assert "@Second" in await shown(names, " ", "U0SECOND01")  # room again once it ended


async def test_a_failure_is_logged_with_slacks_error(
    fake: FakeSlackAPI, caplog: pytest.LogCaptureFixture
) -> None:
    fake.remove_user("U0GONE0001")
    names = names_for(fake)
    with caplog.at_level(logging.WARNING, logger=names_module.__name__):
        await shown(names, " ", "U0GONE0001")  # not found: nothing to warn about
        fake.fail_next("users.info", error="fatal_error")
        await shown(names, " ", LEAD)
    warned = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert warned == [(logging.WARNING, f"no name for {LEAD} from Slack: fatal_error")]


async def test_a_failure_without_slacks_error_logs_its_kind(
    fake: FakeSlackAPI, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No answer in time (no response at all), or an answer with no error code (a
    gateway's page): the log says what kind of failure it was."""
    monkeypatch.setattr(names_module, "LOOKUP_S", 0.2)
    fake.hold("users.info")
    names = names_for(fake)
    blank = AsyncSlackResponse(
        client=None, http_verb="POST", api_url="", req_args={}, data={}, headers={}, status_code=502
    )
    with caplog.at_level(logging.WARNING, logger=names_module.__name__):
        await shown(names, " ", LEAD)
        await settled(names)
        names._failed("U0OTHER001", SlackApiError("bad gateway", blank))
    assert [r.getMessage() for r in caplog.records] == [
        f"no name for {LEAD} from Slack: TimeoutError",
        "no name for U0OTHER001 from Slack: SlackApiError",
    ]
    fake.release_held()
    await asyncio.sleep(0)
