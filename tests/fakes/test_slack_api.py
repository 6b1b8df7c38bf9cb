"""The harness, not socbot: the Slack Web API fake answers a real AsyncWebClient like Slack
does (a broken fake would let socbot tests pass against the wrong answers)."""

from __future__ import annotations

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack_api import BOT_USER_ID, FakeSlackAPI


async def test_post_update_and_replies_are_recorded() -> None:
    async with FakeSlackAPI() as fake:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        fake.add_message("C1", "1699999999.000001", "alert!", user="UHUMAN01")
        posted = await client.chat_postMessage(
            channel="C1",
            thread_ts="1699999999.000001",
            text="hi",
            blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}],
        )
        await client.chat_update(channel="C1", ts=posted["ts"], text="bye")
        replies = await client.conversations_replies(channel="C1", ts="1699999999.000001")
        auth = await client.auth_test()
        await client.assistant_threads_setStatus(
            channel_id="C1", thread_ts="1699999999.000001", status="thinking"
        )
        user = await client.users_info(user="U123")

    assert fake.methods() == [
        "chat.postMessage",
        "chat.update",
        "conversations.replies",
        "auth.test",
        "assistant.threads.setStatus",
        "users.info",
    ]
    post = fake.calls_to("chat.postMessage")[0]
    assert post.token == "xoxb-test"
    assert post.args["blocks"][0]["text"]["text"] == "hi"
    assert [m["text"] for m in replies["messages"]] == ["alert!", "bye"]
    assert auth["user_id"] == BOT_USER_ID
    assert user["user"]["id"] == "U123"
    assert fake.calls_to("assistant.threads.setStatus")[0].args["status"] == "thinking"


async def test_scripted_failures() -> None:
    async with FakeSlackAPI() as fake:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        fake.fail_next("chat.postMessage", status=429, retry_after=3)
        fake.fail_next("chat.update", status=500)
        fake.fail_next("assistant.threads.setStatus", error="not_allowed_token_type")
        with pytest.raises(SlackApiError) as limited:
            await client.chat_postMessage(channel="C1", text="x")
        with pytest.raises(SlackApiError) as broken:
            await client.chat_update(channel="C1", ts="1.1", text="x")
        with pytest.raises(SlackApiError) as refused:
            await client.assistant_threads_setStatus(channel_id="C1", thread_ts="1.1", status="x")
        ok = await client.chat_postMessage(channel="C1", text="x")
        with pytest.raises(SlackApiError) as unknown:
            await client.api_call("nope.method", json={})
    assert limited.value.response.status_code == 429
    assert limited.value.response.headers["Retry-After"] == "3"
    assert broken.value.response.status_code == 500
    assert refused.value.response["error"] == "not_allowed_token_type"
    assert ok["ok"] is True
    assert unknown.value.response["error"] == "unknown_method"
    assert [c.status for c in fake.calls_to("chat.postMessage")] == [429, 200]


async def test_blocks_over_slacks_limits_are_refused() -> None:
    async with FakeSlackAPI() as fake:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        button = {"type": "button", "text": {"type": "plain_text", "text": "x" * 76}, "value": "v"}
        too_long = [{"type": "actions", "elements": [button]}]
        with pytest.raises(SlackApiError) as refused:
            await client.chat_postMessage(channel="C1", text="t", blocks=too_long)
        assert refused.value.response["error"] == "invalid_blocks"
        same_id = [{"type": "divider", "block_id": "a"}, {"type": "divider", "block_id": "a"}]
        with pytest.raises(SlackApiError):
            await client.chat_postMessage(channel="C1", text="t", blocks=same_id)
        modal = {"type": "modal", "title": {"type": "plain_text", "text": "t" * 25}, "blocks": []}
        with pytest.raises(SlackApiError) as refused:
            await client.views_open(trigger_id="1.2.a", view=modal)
        assert refused.value.response["error"] == "invalid_arguments"
        assert len(fake.messages) == 0


async def test_users_and_conversations_info_refuse_what_slack_refuses() -> None:
    async with FakeSlackAPI() as fake:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        fake.add_channel("C0ALERTS01", "alerts-prod")
        fake.add_channel("G0PRIVATE1", "ir-private", is_private=True)
        fake.add_channel("D0DIRECT01", "ignored", is_im=True, user="U0LEAD0001")
        fake.remove_user("U0GONE0001")
        public = await client.conversations_info(channel="C0ALERTS01")
        private = await client.conversations_info(channel="G0PRIVATE1")
        direct = await client.conversations_info(channel="D0DIRECT01")
        refused = []
        for call in (
            client.conversations_info(channel="C0NOWHERE1"),
            client.users_info(user="U0GONE0001"),
            client.users_info(user="not-a-user"),
        ):
            with pytest.raises(SlackApiError) as error:
                await call
            refused.append(error.value.response["error"])
    assert public["channel"]["name"] == "alerts-prod" and public["channel"]["is_channel"]
    assert private["channel"]["is_private"] and not private["channel"]["is_channel"]
    assert "name" not in direct["channel"] and direct["channel"]["user"] == "U0LEAD0001"
    assert refused == ["channel_not_found", "user_not_found", "user_not_found"]
