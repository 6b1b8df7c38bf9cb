"""The harness: the fake's ``assistant.threads.*`` answer a real AsyncWebClient as Slack
does, and refuse what Slack refuses (more than four prompts, a prompt without its title or
message, a thread or title missing)."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack_api import FakeSlackAPI
from tests.fakes.slack_assistant import accepted

PANE, TS = "DPANE0001", "1700000300.000300"


def prompt(n: int) -> dict[str, str]:
    return {"title": f"title {n}", "message": f"message {n}"}


async def test_prompts_title_and_status_are_taken_as_slack_takes_them(fake: FakeSlackAPI) -> None:
    client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
    prompts = [prompt(n) for n in range(4)]
    await client.assistant_threads_setSuggestedPrompts(
        channel_id=PANE, thread_ts=TS, prompts=prompts, title="Try"
    )
    await client.assistant_threads_setTitle(channel_id=PANE, thread_ts=TS, title="An objective")
    await client.assistant_threads_setStatus(channel_id=PANE, thread_ts=TS, status="")
    taken = accepted(fake, "assistant.threads.setSuggestedPrompts")
    assert [c.args["prompts"] for c in taken] == [prompts]
    assert accepted(fake, "assistant.threads.setTitle")[0].args["title"] == "An objective"
    assert len(accepted(fake, "assistant.threads.setStatus")) == 1  # "" clears the status


@pytest.mark.parametrize(
    ("prompts", "where"),
    [
        ([prompt(n) for n in range(5)], {"channel_id": PANE}),  # five prompts: over four
        ([], {"channel_id": PANE}),
        ([{"title": "no message"}], {"channel_id": PANE}),
        ([{"title": "", "message": "empty title"}], {"channel_id": PANE}),
        (["just text"], {"channel_id": PANE}),
        ([prompt(1)], {"channel_id": ""}),
    ],
)
async def test_prompts_over_slacks_limits_are_refused(
    fake: FakeSlackAPI, prompts: list[Any], where: dict[str, str]
) -> None:
    client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
    with pytest.raises(SlackApiError) as refused:
        await client.assistant_threads_setSuggestedPrompts(
            channel_id=where["channel_id"], thread_ts=TS, prompts=prompts
        )
    assert refused.value.response["error"] in ("invalid_arguments", "channel_not_found")
    assert accepted(fake, "assistant.threads.setSuggestedPrompts") == []


async def test_a_title_needs_its_thread_and_words(fake: FakeSlackAPI) -> None:
    client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
    with pytest.raises(SlackApiError) as no_thread:
        await client.assistant_threads_setTitle(channel_id=PANE, thread_ts="", title="t")
    with pytest.raises(SlackApiError) as no_title:
        await client.assistant_threads_setTitle(channel_id=PANE, thread_ts=TS, title="")
    assert no_thread.value.response["error"] == "invalid_thread_ts"
    assert no_title.value.response["error"] == "invalid_arguments"
