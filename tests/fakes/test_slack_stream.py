"""The Slack fake's streaming methods refuse what Slack refuses, driven by the real
``AsyncWebClient`` and its ``chat_stream`` helper (``AsyncChatStream``)."""

from __future__ import annotations

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlackAPI

CHANNEL, THREAD = "CSOC00001", "1700000100.000100"


def client(fake: FakeSlackAPI) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test", base_url=fake.base_url)


async def error_of(call: object) -> str:
    with pytest.raises(SlackApiError) as raised:
        await call  # type: ignore[misc]
    return str(raised.value.response["error"])


async def test_a_stream_through_the_sdk_helper(fake: FakeSlackAPI) -> None:
    fake.streams.allow()
    web = client(fake)
    stream = await web.chat_stream(
        channel=CHANNEL,
        thread_ts=THREAD,
        recipient_team_id=TEAM_ID,
        recipient_user_id=BOT_USER_ID,
        task_display_mode="plan",
    )
    task = {"type": "task_update", "id": "step-1", "title": "Look", "status": "in_progress"}
    await stream.append(chunks=[{"type": "plan_update", "title": "Decide"}, task])
    await stream.append(chunks=[{**task, "status": "complete", "details": "\n🔧 q"}])
    await stream.stop(markdown_text="done")
    held = fake.streams.streams[str(stream.ts)]
    assert held.title == "Decide" and held.stopped and held.text == "done"
    assert held.tasks["step-1"] == {"title": "Look", "status": "complete", "details": "\n🔧 q"}
    replies = await web.conversations_replies(channel=CHANNEL, ts=THREAD)
    assert [m["ts"] for m in replies["messages"]] == [stream.ts]
    # after the stop, and for a ts that is no stream: refused
    again = web.chat_appendStream(channel=CHANNEL, ts=str(stream.ts), markdown_text="x")
    assert await error_of(again) == "message_not_in_streaming_state"
    unknown = web.chat_stopStream(channel=CHANNEL, ts="1700000000.999999")
    assert await error_of(unknown) == "message_not_found"


async def test_what_slack_refuses_is_refused(fake: FakeSlackAPI) -> None:
    web = client(fake)
    start = {"channel": CHANNEL, "thread_ts": THREAD}
    assert await error_of(web.chat_startStream(**start)) == "unknown_method"  # not allowed yet
    fake.streams.allow()
    assert await error_of(web.chat_startStream(**start)) == "missing_recipient_team_id"
    who = {"recipient_team_id": TEAM_ID, "recipient_user_id": BOT_USER_ID}
    too_long = web.chat_startStream(**start, **who, markdown_text="x" * 12_001)
    assert await error_of(too_long) == "msg_too_long"
    bad_task = web.chat_startStream(
        **start, **who, chunks=[{"type": "task_update", "id": "a", "title": "b", "status": "x"}]
    )
    assert await error_of(bad_task) == "invalid_arguments"
    fake.streams.refuse_channel(CHANNEL, "method_not_supported_for_channel_type")
    refused = web.chat_startStream(**start, **who)
    assert await error_of(refused) == "method_not_supported_for_channel_type"
    fake.streams.refuse("feature_not_enabled")
    other = web.chat_startStream(channel="COTHER001", thread_ts=THREAD, **who)
    assert await error_of(other) == "feature_not_enabled"
    assert fake.streams.streams == {}
