"""``bot.slack.post_once`` on its own: the intent recorded before each post, the thread search
that adopts socbot's earlier posts, the status replaced once, the outcome delivered in
order. Driven against the local Slack Web API fake with a recording ``record`` (no
worker, no database), each rule asserted exactly, so that the mutation group
``post_once`` (``scripts/mutation.py``) runs in seconds per mutant. The end-to-end
takeovers (a replica killed mid-post) are in ``test_post_once.py``."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.client import build_client
from bot.slack.pacer import Pacer
from bot.slack.post_once import MAX_PAGES, RunPosts, ThreadSearch, post_metadata
from bot.work.contracts import RowLost, ThreadRef
from tests.fakes.slack_api import BOT_ID, Call, FakeSlackAPI
from tests.slack_support import make_settings

SOC = "CSOC00001"
THREAD = ThreadRef(SOC, "1700000100.000100")
REFUSED = "channel_not_found"  # an answer the client does not retry


class Recorder:
    """The row's ``record``: every (key, value) asked, answering ``keep``."""

    def __init__(self, keep: bool | None = True) -> None:
        self.keep = keep
        self.calls: list[tuple[str, Any]] = []

    async def __call__(self, key: str, value: Any) -> bool | None:
        self.calls.append((key, value))
        return self.keep


@pytest.fixture
def client(fake: FakeSlackAPI, tmp_path: Path) -> AsyncWebClient:
    fake.add_message(SOC, THREAD.thread_ts, "root")
    return build_client(make_settings(tmp_path, fake.base_url).slack, max_retries=0)


def runs(
    client: AsyncWebClient,
    *,
    work_id: int | None = 7,
    posted: dict[str, Any] | None = None,
    record: Recorder | None = None,
    search: ThreadSearch | None = None,
) -> RunPosts:
    return RunPosts(
        client,
        Pacer(rate_per_s=500, updates_per_min=60_000),
        search or ThreadSearch(client),
        THREAD,
        work_id=work_id,
        posted=posted or {},
        record=record,
    )


def seed(fake: FakeSlackAPI, ts: str, work_id: int, token: str, **extra: Any) -> str:
    """socbot's own earlier post of ``work_id`` with ``token`` in the thread."""
    full = f"1700000100.{ts}"
    fake.add_message(
        SOC,
        full,
        "earlier",
        thread_ts=THREAD.thread_ts,
        bot_id=BOT_ID,
        metadata=post_metadata(work_id, token),
        **extra,
    )
    return full


def posts(fake: FakeSlackAPI) -> list[tuple[Any, Any]]:
    """(text, metadata) of every chat.postMessage, in order."""
    return [(c.args.get("text"), c.args.get("metadata")) for c in fake.calls_to("chat.postMessage")]


# -- ThreadSearch


async def test_find_returns_the_first_ts_of_each_token_of_socbots_posts_for_the_row(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    a = seed(fake, "000201", 7, "a")
    seed(fake, "000202", 7, "a")  # a second copy: the first is the one
    b = seed(fake, "000203", 7, "b")
    seed(fake, "000204", 8, "c")  # another row's
    search = ThreadSearch(client)
    assert await search.find(THREAD, 7, {"a", "b", "c"}) == {"a": a, "b": b}
    [call] = fake.calls_to("conversations.replies")
    assert call.args["channel"] == SOC and call.args["ts"] == THREAD.thread_ts
    assert call.args["include_all_metadata"] in ("1", "true", True)
    assert str(call.args["limit"]) == "200" and "cursor" not in call.args


async def test_find_refuses_every_post_not_socbots_own_for_the_row(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    ours = post_metadata(7, "t")
    odd: list[tuple[dict[str, Any], Any]] = [
        ({}, ours),  # a person
        ({"bot_id": "BOTHER001"}, ours),  # another app
        ({"bot_id": BOT_ID}, "not a dict"),
        ({"bot_id": BOT_ID}, {**ours, "event_type": "socbot_other"}),
        ({"bot_id": BOT_ID}, {"event_type": "socbot_post"}),  # no payload
        ({"bot_id": BOT_ID}, {"event_type": "socbot_post", "event_payload": "7"}),
        ({"bot_id": BOT_ID}, post_metadata(8, "t")),
        ({"bot_id": BOT_ID}, {"event_type": "socbot_post", "event_payload": {"work_id": 7}}),
        (
            {"bot_id": BOT_ID},
            {"event_type": "socbot_post", "event_payload": {"work_id": 7, "post": 5}},
        ),
        (  # a token that is no text: not even compared (a list cannot be)
            {"bot_id": BOT_ID},
            {"event_type": "socbot_post", "event_payload": {"work_id": 7, "post": ["t"]}},
        ),
    ]
    for i, (who, metadata) in enumerate(odd):
        fake.add_message(
            SOC,
            f"1700000100.0003{i:02d}",
            "x",
            thread_ts=THREAD.thread_ts,
            metadata=metadata,
            **who,
        )
    search = ThreadSearch(client)
    assert await search.find(THREAD, 7, {"t", "5"}) == {}
    ok = seed(fake, "000500", 7, "t")
    assert await search.find(THREAD, 7, {"t"}) == {"t": ok}


async def test_find_skips_a_message_whose_ts_is_not_text(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    message = {"bot_id": BOT_ID, "ts": 17.5, "metadata": post_metadata(7, "t")}
    fake.set_handler("conversations.replies", lambda _c: {"ok": True, "messages": [message, "x"]})
    assert await ThreadSearch(client).find(THREAD, 7, {"t"}) == {}


async def test_find_without_tokens_asks_slack_nothing(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    seed(fake, "000201", 7, "a")
    assert await ThreadSearch(client).find(THREAD, 7, set()) == {}
    assert fake.methods() == []


async def test_the_bot_id_is_asked_once_and_a_failure_asked_again(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    a = seed(fake, "000201", 7, "a")
    search = ThreadSearch(client)
    fake.fail_next("auth.test", error="invalid_auth")
    assert await search.find(THREAD, 7, {"a"}) == {}  # fails open: not found
    assert fake.methods() == ["auth.test"]
    assert await search.bot_id() == BOT_ID
    assert await search.find(THREAD, 7, {"a"}) == {"a": a}
    assert await search.find(THREAD, 7, {"a"}) == {"a": a}
    assert fake.methods().count("auth.test") == 2


async def test_no_bot_id_from_slack_finds_nothing(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    seed(fake, "000201", 7, "a")
    fake.set_handler("auth.test", lambda _c: {"ok": True, "bot_id": ""})
    assert await ThreadSearch(client).find(THREAD, 7, {"a"}) == {}
    assert await ThreadSearch(client).bot_id() is None
    assert "conversations.replies" not in fake.methods()


def paged(pages: list[list[dict[str, Any]]], *, endless: bool = False) -> Any:
    """conversations.replies answering ``pages`` in turn by cursor ("p1", "p2", ...)."""

    def answer(call: Call) -> dict[str, Any]:
        index = int(str(call.args.get("cursor") or "p0")[1:])
        more = endless or index + 1 < len(pages)
        page = pages[index] if index < len(pages) else []
        meta = {"next_cursor": f"p{index + 1}" if more else ""}
        return {"ok": True, "messages": page, "response_metadata": meta}

    return answer


def ours(ts: str, token: str) -> dict[str, Any]:
    return {"ts": ts, "bot_id": BOT_ID, "metadata": post_metadata(7, token)}


async def test_find_reads_the_next_pages_until_every_token_is_found(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    fake.set_handler(
        "conversations.replies", paged([[ours("1.1", "a")], [], [ours("1.3", "b")], []])
    )
    assert await ThreadSearch(client).find(THREAD, 7, {"a", "b"}) == {"a": "1.1", "b": "1.3"}
    cursors = [c.args.get("cursor") for c in fake.calls_to("conversations.replies")]
    assert cursors == [None, "p1", "p2"]  # all found: the fourth page is not read


async def test_find_stops_at_the_last_page(fake: FakeSlackAPI, client: AsyncWebClient) -> None:
    fake.set_handler("conversations.replies", paged([[ours("1.1", "a")], []]))
    assert await ThreadSearch(client).find(THREAD, 7, {"a", "b"}) == {"a": "1.1"}
    assert len(fake.calls_to("conversations.replies")) == 2


async def test_find_reads_ten_pages_at_most(fake: FakeSlackAPI, client: AsyncWebClient) -> None:
    pages: list[list[dict[str, Any]]] = [[] for _ in range(MAX_PAGES - 1)] + [
        [ours("1.9", "a")],
        [ours("2.0", "b")],
    ]
    fake.set_handler("conversations.replies", paged(pages, endless=True))
    assert await ThreadSearch(client).find(THREAD, 7, {"a", "b"}) == {"a": "1.9"}
    assert len(fake.calls_to("conversations.replies")) == MAX_PAGES == 10


async def test_a_failed_page_keeps_what_earlier_pages_found(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    search = ThreadSearch(client)
    assert await search.bot_id() == BOT_ID
    fake.fail_next("conversations.replies", error="ratelimited")
    assert await search.find(THREAD, 7, {"a", "b"}) == {}
    first = paged([[ours("1.1", "a")], [ours("1.2", "b")]])

    def then_fail(call: Call) -> dict[str, Any]:
        if call.args.get("cursor"):
            return {"ok": False, "error": "ratelimited"}
        return dict(first(call))

    fake.set_handler("conversations.replies", then_fail)
    assert await search.find(THREAD, 7, {"a", "b"}) == {"a": "1.1"}


# -- RunPosts: record, status


async def test_record_keeps_the_value_and_a_lost_row_raises(client: AsyncWebClient) -> None:
    recorder = Recorder()
    run = runs(client, posted={"old": 1}, record=recorder)
    await run.record("k", [1])
    assert run.posted == {"old": 1, "k": [1]} and recorder.calls == [("k", [1])]
    await runs(client, record=Recorder(keep=None)).record("k", 1)  # None is not a refusal
    lost = runs(client, record=Recorder(keep=False))
    with pytest.raises(RowLost, match="work 7 is run by another replica now"):
        await lost.record("k", 2)
    untracked = runs(client, record=None)
    await untracked.record("k", 3)
    assert untracked.posted == {"k": 3}


async def test_tracked_needs_a_row_and_a_record(client: AsyncWebClient) -> None:
    assert runs(client, record=Recorder()).tracked
    assert not runs(client, work_id=None, record=Recorder()).tracked
    assert not runs(client, record=None).tracked
    assert runs(client, posted={"outcome": {}}).has_outcome
    assert not runs(client, posted={"outcome": "x"}).has_outcome


async def test_status_writes_its_intent_once_then_says_how_to_post(client: AsyncWebClient) -> None:
    assert await runs(client, record=None).status() == (None, None)
    assert await runs(client, work_id=None, record=Recorder()).status() == (None, None)
    recorder = Recorder()
    run = runs(client, record=recorder)
    ts, metadata = await run.status()
    [(key, token)] = recorder.calls
    assert (ts, key, metadata) == (None, "status_post", post_metadata(7, token))
    assert len(token) == 16 and int(token, 16) >= 0
    again = await run.status()  # the intent is written: the same token, no new record
    assert again == (None, post_metadata(7, token)) and len(recorder.calls) == 1
    await run.status_posted("1.5")
    assert recorder.calls[-1] == ("status_ts", "1.5")
    assert await run.status() == ("1.5", None)


async def test_status_adopts_the_message_its_intent_posted(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    posted_ts = seed(fake, "000201", 7, "tok")
    recorder = Recorder()
    run = runs(client, posted={"status_post": "tok", "status_ts": 5}, record=recorder)
    assert await run.status() == (posted_ts, None)
    assert recorder.calls == [("status_ts", posted_ts)]
    missing = runs(client, posted={"status_post": "gone"}, record=Recorder())
    assert await missing.status() == (None, post_metadata(7, "gone"))
    assert await runs(client, posted={"status_post": 3}).posted_status() is None
    assert await runs(client, work_id=None, posted={"status_post": "tok"}).posted_status() is None


# -- RunPosts: replace_status


async def test_replace_status_edits_the_status_message_once(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    status = await client.chat_postMessage(channel=SOC, thread_ts=THREAD.thread_ts, text="working")
    recorder = Recorder()
    run = runs(client, posted={"status_ts": status["ts"]}, record=recorder)
    message = {
        "text": "gave up",
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "gave up"}}],
    }
    assert await run.replace_status("gave_up", message, what="w7") == status["ts"]
    [(key, token)] = recorder.calls
    assert key == "gave_up" and len(token) == 16
    [update] = fake.calls_to("chat.update")
    assert (update.args["channel"], update.args["ts"], update.args["text"]) == (
        SOC,
        status["ts"],
        "gave up",
    )
    assert update.args["blocks"] == message["blocks"]
    assert await run.replace_status("gave_up", message, what="w7") is None  # once
    assert len(fake.calls_to("chat.update")) == 1 and len(recorder.calls) == 1
    assert await runs(client, work_id=None).replace_status("k", message, what="w") is None
    assert fake.methods() == ["chat.postMessage", "chat.update"]


async def test_replace_status_posts_in_the_thread_without_a_status_message(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    recorder = Recorder()
    run = runs(client, record=recorder)
    ts = await run.replace_status("gave_up", {"text": "gave up"}, what="w7")
    [(key, token)] = recorder.calls
    assert key == "gave_up"
    assert posts(fake) == [("gave up", post_metadata(7, token))]
    assert ts == fake.messages[-1].ts
    [call] = fake.calls_to("chat.postMessage")
    assert (call.args["channel"], call.args["thread_ts"]) == (SOC, THREAD.thread_ts)


async def test_replace_status_says_nothing_when_the_edit_is_refused(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    recorder = Recorder()
    run = runs(client, posted={"status_ts": "1.1"}, record=recorder)
    fake.fail_next("chat.update", error="cant_update_message")
    assert await run.replace_status("gave_up", {"text": "x"}, what="w7") is None
    assert [k for k, _ in recorder.calls] == ["gave_up"]  # the intent stays: never repeated
    assert "chat.postMessage" not in fake.methods()


async def test_a_lost_row_replaces_nothing(fake: FakeSlackAPI, client: AsyncWebClient) -> None:
    run = runs(client, posted={"status_ts": "1.1"}, record=Recorder(keep=False))
    with pytest.raises(RowLost):
        await run.replace_status("gave_up", {"text": "x"}, what="w7")
    assert fake.methods() == []


# -- RunPosts: the outcome


MESSAGES = [{"text": "one"}, {"text": "two"}, {"text": "three"}]


async def test_the_outcome_is_recorded_then_posted_in_order(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    recorder = Recorder()
    run = runs(client, record=recorder)
    assert await run.outcome(MESSAGES, what="w7", attempts=1, backoff_s=0.0) == 0
    key, plan = recorder.calls[0]
    assert key == "outcome" and plan["messages"] == MESSAGES and len(set(plan["posts"])) == 3
    sent = [c.args for c in fake.calls_to("chat.postMessage")]
    assert [(a["text"], a["metadata"]) for a in sent] == [
        (m["text"], post_metadata(7, t)) for m, t in zip(MESSAGES, plan["posts"], strict=True)
    ]
    ts = [m.ts for m in fake.messages if m.thread_ts == THREAD.thread_ts]
    assert recorder.calls[1:] == [
        ("outcome_ts", [None, None, None]),
        ("outcome_ts", [ts[0], None, None]),
        ("outcome_ts", [ts[0], ts[1], None]),
        ("outcome_ts", ts),
    ]
    assert run.posted["outcome_ts"] == ts


async def test_slack_refusing_a_message_stops_the_outcome_there(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    recorder = Recorder()
    run = runs(client, record=recorder)
    fake.set_handler("chat.postMessage", refuse_text(fake, "two"))
    assert await run.outcome(MESSAGES, what="w7", attempts=2, backoff_s=0.0) == 2
    assert [c.args["text"] for c in fake.calls_to("chat.postMessage")] == ["one", "two", "two"]
    fake.set_handler("chat.postMessage", fake._post_message)
    again = runs(client, posted=run.posted, record=recorder)
    assert await again.outcome(None, what="w7", attempts=1, backoff_s=0.0) == 0
    texts = [c.args["text"] for c in fake.calls_to("chat.postMessage")]
    assert texts == ["one", "two", "two", "two", "three"]


def refuse_text(fake: FakeSlackAPI, text: str) -> Any:
    """chat.postMessage refusing every message whose text is ``text``."""

    def answer(call: Call) -> dict[str, Any]:
        if call.args.get("text") == text:
            return {"ok": False, "error": REFUSED}
        return fake._post_message(call)

    return answer


async def test_a_recorded_outcome_adopts_what_the_thread_holds_and_posts_the_rest(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    plan = {"messages": MESSAGES, "posts": ["p1", "p2", "p3"]}
    second = seed(fake, "000202", 7, "p2")
    recorder = Recorder()
    run = runs(client, posted={"outcome": plan, "outcome_ts": ["1.1"]}, record=recorder)
    assert await run.outcome(None, what="w7", attempts=1, backoff_s=0.0) == 0
    assert posts(fake) == [("three", post_metadata(7, "p3"))]
    third = fake.messages[-1].ts
    found = ("outcome_ts", ["1.1", second, None])
    assert recorder.calls == [found, found, ("outcome_ts", ["1.1", second, third])]


async def test_a_delivered_outcome_posts_and_records_nothing(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    plan = {"messages": MESSAGES[:2], "posts": ["p1", "p2"]}
    recorder = Recorder()
    run = runs(client, posted={"outcome": plan, "outcome_ts": ["1.1", "1.2"]}, record=recorder)
    assert await run.outcome(None, what="w7", attempts=1, backoff_s=0.0) == 0
    assert fake.methods() == [] and recorder.calls == []


async def test_a_recorded_outcome_not_found_in_the_thread_is_posted_again(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    plan = {"messages": MESSAGES[:2], "posts": ["p1", "p2"]}
    recorder = Recorder()
    # an older row's plain list, with an entry that is not a ts and one too many
    run = runs(client, posted={"outcome": plan, "outcome_ts": [5, "1.2", "1.3"]}, record=recorder)
    assert await run.outcome(None, what="w7", attempts=1, backoff_s=0.0) == 0
    assert posts(fake) == [("one", post_metadata(7, "p1"))]
    [ts] = [m.ts for m in fake.messages if m.text == "one"]
    assert recorder.calls == [("outcome_ts", [None, "1.2"]), ("outcome_ts", [ts, "1.2"])]
    other = runs(client, posted={"outcome": plan, "outcome_ts": "1.1"}, record=Recorder())
    assert await other.outcome(None, what="w7", attempts=1, backoff_s=0.0) == 0
    # not a list: nothing recorded as delivered; "one" is found in the thread, "two" posted
    assert posts(fake)[1:] == [("two", post_metadata(7, "p2"))]


async def test_a_lost_row_posts_no_outcome(fake: FakeSlackAPI, client: AsyncWebClient) -> None:
    run = runs(client, record=Recorder(keep=False))
    with pytest.raises(RowLost):
        await run.outcome(MESSAGES, what="w7", attempts=1, backoff_s=0.0)
    plan = {"messages": MESSAGES[:1], "posts": ["p1"]}
    lost = runs(client, posted={"outcome": plan}, record=Recorder(keep=False))
    with pytest.raises(RowLost):  # asked again before the first post
        await lost.outcome(None, what="w7", attempts=1, backoff_s=0.0)
    assert fake.methods() == ["auth.test", "conversations.replies"]


async def test_an_untracked_outcome_posts_without_metadata_or_records(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    run = runs(client, work_id=None, record=None)
    assert await run.outcome(MESSAGES[:2], what="chat", attempts=1, backoff_s=0.0) == 0
    assert posts(fake) == [("one", None), ("two", None)]
    assert "outcome" not in run.posted
    no_record = runs(client, record=None)
    assert await no_record.outcome(MESSAGES[:1], what="w7", attempts=1, backoff_s=0.0) == 0
    text, metadata = posts(fake)[-1]
    token = metadata["event_payload"]["post"]
    assert (text, metadata, len(token)) == ("one", post_metadata(7, token), 16)
    assert no_record.posted == {"outcome_ts": [fake.messages[-1].ts]}


async def test_failures_are_logged_with_what_and_why(
    fake: FakeSlackAPI,
    client: AsyncWebClient,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_sleep = asyncio.sleep

    async def no_wait(delay: float, *args: Any) -> Any:
        return await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", no_wait)  # the default backoff of replace_status
    caplog.set_level(logging.WARNING)
    search = ThreadSearch(client)
    fake.fail_next("auth.test", error="invalid_auth")
    assert await search.bot_id() is None
    fake.fail_next("conversations.replies", error="ratelimited")
    assert await search.find(THREAD, 7, {"a"}) == {}
    run = runs(client, posted={"status_ts": "1.1"}, record=Recorder())
    fake.fail_next("chat.update", error="cant_update_message")
    assert await run.replace_status("gave_up", {"text": "x"}, what="w7") is None
    fake.fail_next("chat.postMessage", error=REFUSED, times=4)
    fresh = runs(client, record=Recorder())
    assert await fresh.replace_status("gave_up", {"text": "x"}, what="w8") is None
    fake.fail_next("chat.postMessage", error=REFUSED)
    assert await fresh.outcome(MESSAGES[:1], what="w9", attempts=1, backoff_s=0.0) == 1

    def failed(method: str, error: str = REFUSED) -> str:
        return (
            f"The request to the Slack API failed. (url: {fake.base_url}{method}, status: 200)"
            f"\nThe server responded with: {{'ok': False, 'error': '{error}'}}"
        )

    assert caplog.messages == [
        "auth.test failed; cannot recognise earlier posts: " + failed("auth.test", "invalid_auth"),
        f"could not read {SOC} for earlier posts: "
        + failed("conversations.replies", "ratelimited"),
        "could not edit the status message of w7: " + failed("chat.update", "cant_update_message"),
        *(
            f"could not post the outcome of w8 ({i}/4): " + failed("chat.postMessage")
            for i in range(1, 5)
        ),
        "could not post the outcome of w9 (1/1): " + failed("chat.postMessage"),
    ]


async def test_the_outcome_waits_the_backoff_it_is_given(
    fake: FakeSlackAPI, client: AsyncWebClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    delays: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(delay: float, *args: Any) -> Any:
        delays.append(delay)
        return await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    fake.fail_next("chat.postMessage", error=REFUSED)
    run = runs(client, record=Recorder())
    assert await run.outcome(MESSAGES[:1], what="w7", attempts=2, backoff_s=0.125) == 0
    assert 0.25 in delays and max(delays) < 1.0  # 0.125 * 2: not the default 1 s * 2


async def test_an_outcome_without_a_row_searches_nothing(
    fake: FakeSlackAPI, client: AsyncWebClient
) -> None:
    plan = {"messages": MESSAGES[:1], "posts": ["p1"]}
    run = runs(client, work_id=None, posted={"outcome": plan}, record=None)
    assert await run.outcome(None, what="chat", attempts=1, backoff_s=0.0) == 0
    assert fake.methods() == ["chat.postMessage"]


async def test_an_outcome_needs_messages_or_a_recorded_plan(client: AsyncWebClient) -> None:
    with pytest.raises(AssertionError, match=r"^no outcome recorded and none given$"):
        await runs(client, record=Recorder()).outcome(None, what="w7", attempts=1, backoff_s=0)
