"""Slack's status and conclusion messages link to the investigation's page (web.base_url)."""

from __future__ import annotations

import pytest

from bot.blocks.investigation import page_link
from bot.slack.pacer import Pacer
from bot.slack.progress import SlackProgress
from core.events import Started
from tests.bot.slack.test_slack_progress import (
    CHANNEL,
    INV,
    THREAD,
    FakeOutcome,
    client_for,
    conclusion,
)
from tests.fakes.slack_api import FakeSlackAPI

BASE = "https://socbot.example.com"


def context_texts(blocks: list[dict[str, object]]) -> list[str]:
    return [
        str(e["text"])  # type: ignore[index]
        for b in blocks
        if b["type"] == "context"
        for e in b["elements"]  # type: ignore[attr-defined]
    ]


async def test_status_and_conclusion_link_to_the_page(fake: FakeSlackAPI) -> None:
    progress = SlackProgress(
        client_for(fake),
        channel=CHANNEL,
        thread_ts=THREAD,
        pacer=Pacer(rate_per_s=50),
        update_interval=0.05,
        pages_url=BASE + "/",
    )
    await progress.emit(Started(investigation_id=INV, kind="alert", conversation_id="c"))
    await progress.finish(FakeOutcome(conclusion=conclusion()))
    link = f"<{BASE}/web/investigations/{INV}|Open in socbot>"
    status, verdict = fake.calls_to("chat.postMessage")
    assert link in context_texts(status.args["blocks"])  # from the first status message on
    assert link in context_texts(verdict.args["blocks"])


async def test_no_base_url_no_link(fake: FakeSlackAPI) -> None:
    progress = SlackProgress(
        client_for(fake), channel=CHANNEL, thread_ts=THREAD, pacer=Pacer(rate_per_s=50)
    )
    await progress.emit(Started(investigation_id=INV, kind="alert", conversation_id="c"))
    await progress.finish(FakeOutcome(conclusion=conclusion()))
    for post in fake.calls_to("chat.postMessage"):
        assert not any("Open in socbot" in t for t in context_texts(post.args["blocks"]))


@pytest.mark.parametrize(
    "base",
    ["javascript:alert(1)", "https://x.example|<!channel>", "https://a b", "", None],
)
def test_a_base_url_that_would_break_the_link_is_not_linked(base: str | None) -> None:
    assert page_link(base, INV) == []
