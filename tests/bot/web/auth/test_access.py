"""Who may see what, against the fake Slack Web API: channels come from
``users.conversations`` (every page of it), are cached for ``cache_s`` and never after
a Slack error; admins and the local user see everything, terminal runs included."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.web.auth.access import Access
from bot.web.auth.session import Viewer
from store.investigations.browse import Visibility
from tests.fakes.slack_api import Call, FakeSlackAPI

ALICE = Viewer(user="U0ALICE1", team="T0TEAM01", name="Alice", admin=False, sid="s1")
ADMIN = Viewer(user="U0ADMIN1", team="T0TEAM01", name="Admin", admin=False, sid="s2")
LOCAL = Viewer(user="local", team=None, name="you", admin=False, sid="s3", local=True)
PAGES = {"": (["C0MINE01", "C0MINE02"], "page2"), "page2": (["C0MINE03"], "")}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def paged(call: Call) -> dict[str, Any]:
    channels, following = PAGES[str(call.args.get("cursor") or "")]
    return {
        "ok": True,
        "channels": [{"id": c} for c in channels],
        "response_metadata": {"next_cursor": following},
    }


async def test_every_page_is_read_with_the_right_arguments() -> None:
    async with FakeSlackAPI() as api:
        api.set_handler("users.conversations", paged)
        access = Access(AsyncWebClient(token="xoxb-test", base_url=api.base_url), [])
        assert await access.channels("U0ALICE1") == {"C0MINE01", "C0MINE02", "C0MINE03"}
        first, second = api.calls_to("users.conversations")
    assert {k: v for k, v in first.args.items() if k != "token"} == {
        "user": "U0ALICE1",
        "types": "public_channel,private_channel",
        "exclude_archived": "1",
        "limit": "999",
    }
    assert second.args["cursor"] == "page2" and second.args["user"] == "U0ALICE1"


async def test_channels_are_cached_for_cache_s_then_asked_again() -> None:
    clock = Clock()
    async with FakeSlackAPI() as api:
        api.set_handler("users.conversations", paged)
        client = AsyncWebClient(token="xoxb-test", base_url=api.base_url)
        access = Access(client, [], cache_s=30.0, clock=clock)
        await access.channels("U0ALICE1")
        clock.now += 29.9
        assert "C0MINE03" in await access.channels("U0ALICE1")
        assert len(api.calls_to("users.conversations")) == 2  # one look-up: two pages
        await access.channels("U0BOB001")  # another user: not from Alice's cache
        assert len(api.calls_to("users.conversations")) == 4
        clock.now += 0.1  # exactly cache_s after the look-up: stale
        assert await access.channels("U0ALICE1") == {"C0MINE01", "C0MINE02", "C0MINE03"}
        assert len(api.calls_to("users.conversations")) == 6
        by_default = Access(client, [], clock=clock)  # a minute
        await by_default.channels("U0ALICE1")
        clock.now += 59.9
        await by_default.channels("U0ALICE1")
        assert len(api.calls_to("users.conversations")) == 8
        clock.now += 0.1
        await by_default.channels("U0ALICE1")
        assert len(api.calls_to("users.conversations")) == 10


async def test_a_slack_error_fails_closed_and_is_not_cached(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with FakeSlackAPI() as api:
        api.set_handler("users.conversations", paged)
        api.fail_next("users.conversations", error="ratelimited")
        access = Access(AsyncWebClient(token="xoxb-test", base_url=api.base_url), [])
        with caplog.at_level(logging.WARNING, logger="bot.web.auth.access"):
            assert await access.channels("U0ALICE1") == frozenset()
        assert [r.getMessage() for r in caplog.records] == [
            "users.conversations failed: ratelimited"
        ]
        assert await access.may_see_channel(ALICE, "C0MINE01")  # asked again, not cached
        assert len(api.calls_to("users.conversations")) == 3  # the failure, then two pages


async def test_a_missing_channel_list_or_cursor_is_no_channel() -> None:
    async with FakeSlackAPI() as api:
        api.set_handler("users.conversations", lambda call: {"ok": True, "channels": None})
        access = Access(AsyncWebClient(token="xoxb-test", base_url=api.base_url), [])
        assert await access.channels("U0ALICE1") == frozenset()
        assert len(api.calls_to("users.conversations")) == 1


async def test_without_a_client_nobody_but_admins_sees_anything() -> None:
    access = Access(None, ["U0ADMIN1"])
    assert await access.channels("U0ALICE1") == frozenset()
    assert await access.visibility(ALICE) == Visibility(channels=frozenset(), terminal=False)
    assert await access.visibility(ADMIN) == Visibility(channels=None, terminal=True)
    assert await access.visibility(LOCAL) == Visibility(channels=None, terminal=True)
    assert (access.is_admin(ALICE), access.is_admin(ADMIN), access.is_admin(LOCAL)) == (
        False,
        True,
        True,
    )


@pytest.mark.parametrize(
    ("conversation", "alice", "admin"),
    [
        ("slack:C0MINE01:1700000000.000100", True, True),
        ("slack:C0MINE03:1700000000.000100", True, True),  # from the second page
        ("slack:C0THEIR1:1700000000.000100", False, True),
        ("cli:9f2c", False, True),  # a terminal run
        ("", False, True),
        (None, False, True),
    ],
)
async def test_a_conversation_is_seen_by_its_channels_members_and_admins(
    conversation: str | None, alice: bool, admin: bool
) -> None:
    async with FakeSlackAPI() as api:
        api.set_handler("users.conversations", paged)
        client = AsyncWebClient(token="xoxb-test", base_url=api.base_url)
        access = Access(client, ["U0ADMIN1"])
        assert await access.may_see(ALICE, conversation) is alice
        assert await access.may_see(ADMIN, conversation) is admin
        assert await access.may_see(LOCAL, conversation) is True
        channel = conversation.split(":")[1] if conversation else None
        channel = channel if conversation and conversation.startswith("slack:") else None
        assert await access.may_see_channel(ALICE, channel) is alice
        assert await access.may_see_channel(ADMIN, channel) is True
        assert await access.visibility(ALICE) == Visibility(
            channels=frozenset({"C0MINE01", "C0MINE02", "C0MINE03"}), terminal=False
        )
