"""``StreamGate``: ``slack.streaming`` and Slack's refusals, remembered in the database (SQLite
and PostgreSQL) for the workspace or the channel; errors that say nothing decide nothing."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.slack.post_once import ThreadSearch
from bot.slack.stream_gate import StreamGate
from store.db.engine import Database
from store.slack import SlackStore
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlackAPI


def refusal(code: str, status: int = 200) -> SlackApiError:
    web = AsyncWebClient(token="xoxb-test")
    response = AsyncSlackResponse(
        client=web,
        http_verb="POST",
        api_url="chat.startStream",
        req_args={},
        data={"ok": False, "error": code},
        headers={},
        status_code=status,
    )
    return SlackApiError("refused", response)


def gate(fake: FakeSlackAPI, db: Database, mode: Any = "auto") -> StreamGate:
    web = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
    return StreamGate(ThreadSearch(web), SlackStore(db), mode)


async def test_off_never_streams(fake: FakeSlackAPI, any_db: Database) -> None:
    assert not await gate(fake, any_db, "off").allows("C1")
    assert await gate(fake, any_db).allows("C1")


@pytest.mark.parametrize(
    ("code", "elsewhere"),
    [
        ("feature_not_enabled", False),
        ("unknown_method", False),
        ("not_allowed_token_type", False),
        ("method_not_supported_for_channel_type", True),
        ("missing_recipient_user_id", True),
    ],
)
async def test_a_refusal_is_remembered_where_it_applies(
    fake: FakeSlackAPI, any_db: Database, code: str, elsewhere: bool
) -> None:
    first = gate(fake, any_db)
    assert await first.refused("C1", refusal(code))
    assert not await first.allows("C1")
    later = gate(fake, any_db)  # another replica, or after a restart
    assert not await later.allows("C1")
    assert await later.allows("C2") is elsewhere


@pytest.mark.parametrize(
    ("code", "status"), [("ratelimited", 429), ("fatal_error", 200), ("", 500)]
)
async def test_an_error_that_says_nothing_decides_nothing(
    fake: FakeSlackAPI, any_db: Database, code: str, status: int
) -> None:
    first = gate(fake, any_db)
    assert not await first.refused("C1", refusal(code, status))
    assert await gate(fake, any_db).allows("C1")


async def test_the_recipient_is_who_asked_else_socbot(fake: FakeSlackAPI, any_db: Database) -> None:
    g = gate(fake, any_db)
    assert await g.recipient("UASKER01") == (TEAM_ID, "UASKER01")
    assert await g.recipient(None) == (TEAM_ID, BOT_USER_ID)
    assert fake.methods() == ["auth.test"]  # asked once


async def test_no_stream_when_slack_cannot_say_who_we_are(
    fake: FakeSlackAPI, any_db: Database
) -> None:
    fake.fail_next("auth.test", error="invalid_auth", times=5)
    g = gate(fake, any_db)
    assert not await g.allows("C1") and await g.recipient("U1") is None
