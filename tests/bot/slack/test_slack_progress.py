"""The Slack progress sink and the pacer, against a real AsyncWebClient and a local fake API."""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from agent.concluder import Conclusion, KeyFinding
from agent.planner import Plan, Step
from agent.review.critic import Review
from bot.slack.pacer import Pacer
from bot.slack.progress import SlackProgress
from core.events import (
    Concluded,
    Event,
    LLMCalled,
    ModeChosen,
    PlanCreated,
    PlanUpdated,
    Reflected,
    Started,
    StepFinished,
    StepStarted,
    ToolCalled,
)
from tests.fakes.signals import WAIT_S
from tests.fakes.slack_api import Call, FakeSlackAPI

CHANNEL, THREAD = "C0ALERTS", "1700000000.000001"
INV = "inv-42"
INTERVAL = 0.15


def client_for(fake: FakeSlackAPI) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test", base_url=fake.base_url)


def sink(fake: FakeSlackAPI, pacer: Pacer | None = None, **kwargs: Any) -> SlackProgress:
    return SlackProgress(
        client_for(fake),
        channel=CHANNEL,
        thread_ts=THREAD,
        pacer=pacer or Pacer(rate_per_s=50),
        indicators=["185.220.101.42"],
        update_interval=INTERVAL,
        **kwargs,
    )


def the_plan(n: int = 3) -> Plan:
    return Plan(
        objective="Is 185.220.101.42 <!channel> malicious?",
        steps=[
            Step(id=f"s{i}", description=f"step {i}", tools=["query_logs"], expected="rows")
            for i in range(1, n + 1)
        ],
    )


def conclusion() -> Conclusion:
    return Conclusion(
        verdict="benign",
        severity="low",
        confidence="high",
        summary="Scheduled scanner run from 185.220.101.42.",
        key_findings=[KeyFinding(finding="Known scanner", evidence="asset inventory")],
        uncertainties=[],
        recommendations=["Allow-list the scanner."],
    )


@dataclass
class FakeOutcome:
    """Shaped like ``agent.engine.Outcome`` (the fields the sink reads)."""

    investigation_id: str = INV
    status: str = "concluded"
    answer: str | None = None
    conclusion: Conclusion | None = None
    plan: Plan | None = None
    limits_hit: list[str] = field(default_factory=list)
    error: str | None = None
    review: Review | None = None
    usage: dict[str, Any] = field(
        default_factory=lambda: {"llm_calls": 12, "cost_usd": 0.014642, "unpriced_calls": 0}
    )
    record: dict[str, Any] = field(default_factory=lambda: {"timings": {"total_ms": 83_400.0}})


def run_events(plan: Plan) -> list[Event]:
    """A burst of 20 events: a plan, three steps with tool calls, a plan update."""
    events: list[Event] = [
        Started(investigation_id=INV, kind="alert", conversation_id="c"),
        ModeChosen(investigation_id=INV, mode="planned", reason="alert"),
        PlanCreated(investigation_id=INV, plan=plan.model_dump()),
    ]
    for step in plan.steps:
        events.append(StepStarted(investigation_id=INV, step_id=step.id, description="d"))
        for tool in ("query_logs", "threat_intel"):
            events.append(
                ToolCalled(
                    investigation_id=INV,
                    step_id=step.id,
                    tool=tool,
                    args={},
                    ok=True,
                    duration_ms=120.0,
                    result_chars=10,
                    truncated=False,
                )
            )
        events.append(
            StepFinished(investigation_id=INV, step_id=step.id, status="done", summary="s")
        )
    events.append(Reflected(investigation_id=INV, wave=1, reflection={"achieved": True}))
    events.append(
        ToolCalled(
            investigation_id=INV,
            step_id=None,
            tool="past_alerts",
            args={},
            ok=False,
            duration_ms=5.0,
            result_chars=0,
            truncated=False,
        )
    )
    events.append(
        PlanUpdated(investigation_id=INV, plan=_all_done(plan).model_dump(), changes=["none"])
    )
    events.append(
        LLMCalled(
            investigation_id=INV,
            stage="concluder",
            model="m",
            prompt_tokens=1,
            output_tokens=1,
            thinking_tokens=0,
            cached_tokens=0,
            latency_ms=1.0,
            finish_reason="STOP",
        )
    )
    events.append(Concluded(investigation_id=INV, conclusion=conclusion().model_dump()))
    return events


def _all_done(plan: Plan) -> Plan:
    done = plan.model_copy(deep=True)
    for step in done.steps:
        step.status = "done"
    return done


def checklist(call: Call) -> str:
    return str(call.args["blocks"][1]["text"]["text"])


async def test_burst_of_events_is_coalesced_and_ends_correct(fake: FakeSlackAPI) -> None:
    progress = sink(fake)
    events = run_events(the_plan())
    assert len(events) == 20
    began = time.monotonic()
    for event in events:  # 20 events over ~0.2 s: the engine at full speed
        await progress.emit(event)
        await asyncio.sleep(0.01)
    await progress.finish(FakeOutcome(conclusion=conclusion(), plan=_all_done(the_plan())))
    took = time.monotonic() - began  # ~0.35 s; longer on a loaded machine

    status_posts = [
        c for c in fake.calls_to("chat.postMessage") if c.args["text"].startswith(("Inv", "soc"))
    ]
    updates = fake.calls_to("chat.update")
    assert len(status_posts) == 1
    assert 1 <= len(updates) <= took / INTERVAL + 1  # at most one edit per interval
    assert all(u.args["ts"] == progress.status_ts for u in updates)
    final = updates[-1]
    assert checklist(final) == "✅ *s1* step 1\n✅ *s2* step 2\n✅ *s3* step 3"
    assert "Done" in final.args["blocks"][-1]["elements"][0]["text"]
    assert "185.220.101[.]42" in final.args["text"] and "&lt;!channel&gt;" in final.args["text"]
    gaps = [b.at - a.at for a, b in itertools.pairwise(updates)]
    assert all(gap >= INTERVAL * 0.9 for gap in gaps)


async def test_status_and_outcome_posts_are_safe_threaded_and_paced(fake: FakeSlackAPI) -> None:
    progress = sink(fake, pacer=Pacer(rate_per_s=10))
    asked = time.monotonic()
    await progress.emit(Started(investigation_id=INV, kind="question", conversation_id="c"))
    await progress.finish(FakeOutcome(conclusion=conclusion()))
    posts = fake.calls_to("chat.postMessage")
    assert len(posts) == 2  # status message, then the conclusion
    for post in posts:
        assert post.args["channel"] == CHANNEL and post.args["thread_ts"] == THREAD
        assert post.args["unfurl_links"] is False and post.args["unfurl_media"] is False
        assert "link_names" not in post.args and "parse" not in post.args
        assert post.token == "xoxb-test"
    assert posts[1].args["blocks"][0]["text"]["text"] == "🟢 Benign · low severity"
    assert posts[1].args["blocks"][-1]["elements"][0]["action_id"] == "feedback_correct"
    footer = posts[1].args["blocks"][-2]["elements"]
    assert [e["text"] for e in footer] == [
        f"investigation `{INV}`",
        "⏱ 1 min 23 s · 12 model calls · $0.0146",
    ]
    # the pacer, 10 messages/s: the second post's turn came 0.1 s after the first's at the
    # earliest (arrival gaps alone would jitter on a loaded machine; this bound cannot)
    assert posts[1].at - asked >= 0.1 - 0.005


async def test_assistant_status_is_set_then_cleared(fake: FakeSlackAPI) -> None:
    progress = sink(fake)
    await progress.emit(Started(investigation_id=INV, kind="question", conversation_id="c"))
    await fake.wait_for(lambda: bool(fake.calls_to("assistant.threads.setStatus")))  # thinking
    await progress.finish(FakeOutcome(status="answered", answer="Yes, it is a **Tor** exit node."))
    statuses = [c.args for c in fake.calls_to("assistant.threads.setStatus")]
    assert statuses == [
        {"channel_id": CHANNEL, "thread_ts": THREAD, "status": "is investigating…"},
        {"channel_id": CHANNEL, "thread_ts": THREAD, "status": ""},
    ]
    # set after the status message (a new post in the thread clears it), cleared before the answer
    assert fake.methods() == [
        "chat.postMessage",
        "assistant.threads.setStatus",
        "chat.update",
        "assistant.threads.setStatus",
        "chat.postMessage",
    ]
    answer = fake.calls_to("chat.postMessage")[-1]
    assert answer.args["blocks"][0]["text"]["text"] == "Yes, it is a *Tor* exit node."


async def test_assistant_status_unavailable_is_tried_once(fake: FakeSlackAPI) -> None:
    fake.fail_next("assistant.threads.setStatus", error="not_allowed_token_type")
    progress = sink(fake)
    for event in run_events(the_plan())[:6]:
        await progress.emit(event)
        await asyncio.sleep(0.01)
    await fake.wait_for(lambda: bool(fake.calls_to("assistant.threads.setStatus")))
    await progress.emit(StepStarted(investigation_id=INV, step_id="s2", description="d"))
    await progress.finish(FakeOutcome(status="answered", answer="ok"))
    assert len(fake.calls_to("assistant.threads.setStatus")) == 1
    assert len(fake.calls_to("chat.postMessage")) == 2


async def test_rate_limited_update_is_retried_with_the_latest_state(fake: FakeSlackAPI) -> None:
    fake.fail_next("chat.update", status=429, retry_after=0)
    progress = sink(fake)
    plan = the_plan(2)
    await progress.emit(PlanCreated(investigation_id=INV, plan=plan.model_dump()))
    await asyncio.sleep(0.05)
    await progress.emit(StepStarted(investigation_id=INV, step_id="s1", description="d"))
    await progress.finish(
        FakeOutcome(status="failed", error="The token budget was reached.", plan=plan)
    )
    updates = fake.calls_to("chat.update")
    assert [u.status for u in updates] == [429, 200]
    assert checklist(updates[-1]) == "⏳ *s1* step 1\n⏳ *s2* step 2"
    assert (
        "Stopped: The token budget was reached."
        in updates[-1].args["blocks"][-1]["elements"][0]["text"]
    )
    error = fake.calls_to("chat.postMessage")[-1]
    assert error.args["text"] == "⚠️ The token budget was reached."


async def test_cancelled_run_strikes_out_unfinished_steps(fake: FakeSlackAPI) -> None:
    progress = sink(fake)
    plan = the_plan(2)
    await progress.emit(PlanCreated(investigation_id=INV, plan=plan.model_dump()))
    await asyncio.sleep(0.05)
    await progress.emit(StepStarted(investigation_id=INV, step_id="s1", description="d"))
    await progress.cancelled()
    final = fake.calls_to("chat.update")[-1]
    assert checklist(final) == "🚫 ~s1 step 1~\n🚫 ~s2 step 2~"
    assert len(fake.calls_to("chat.postMessage")) == 1  # the coordinator posts the notice


async def test_slack_failures_never_reach_the_engine(fake: FakeSlackAPI) -> None:
    fake.fail_next("chat.postMessage", status=500, times=10)
    fake.fail_next("chat.update", status=500, times=10)
    progress = sink(fake, post_attempts=2, post_backoff_s=0.01)
    for event in run_events(the_plan()):
        await progress.emit(event)  # must not raise
        await asyncio.sleep(0.005)
    posted = await progress.finish(FakeOutcome(conclusion=conclusion()))
    assert posted == []
    assert progress.status_ts is None
    assert progress.unposted >= 1  # the worker tells the run failed
    # bounded retries (status message, then each outcome message twice), then gives up
    assert 1 <= len(fake.calls_to("chat.postMessage")) <= 3 + 2 * progress.unposted


async def test_an_outcome_refused_by_slack_is_posted_again(fake: FakeSlackAPI) -> None:
    progress = sink(fake, post_backoff_s=0.01)
    for event in run_events(the_plan()):
        await progress.emit(event)
        await asyncio.sleep(0.005)
    fake.fail_next("chat.postMessage", status=429, retry_after=0, times=3)
    posted = await progress.finish(FakeOutcome(conclusion=conclusion()))
    assert posted and progress.unposted == 0
    assert set(posted) <= {m.ts for m in fake.messages}  # landed, each once


async def test_no_events_no_status_message(fake: FakeSlackAPI) -> None:
    progress = sink(fake)
    posted = await progress.finish(FakeOutcome(status="failed", error="The model is unavailable."))
    assert len(posted) == 1
    assert fake.methods() == ["chat.postMessage"]


async def test_pacer_spaces_posts_per_channel_in_fifo_order() -> None:
    pacer = Pacer(rate_per_s=20)
    started: list[tuple[str, int, float]] = []

    async def post(channel: str, n: int) -> None:
        async with pacer.slot(channel):
            started.append((channel, n, time.monotonic()))

    before = time.monotonic()
    posts = [asyncio.create_task(post("C1", n)) for n in range(4)]
    posts.append(asyncio.create_task(post("C2", 0)))
    await asyncio.sleep(0)  # every post asked for its slot once
    assert [(c, n) for c, n, _ in started] == [("C1", 0), ("C2", 0)]  # C2 did not wait
    await asyncio.gather(*posts)
    c1 = [(n, t - before) for c, n, t in started if c == "C1"]
    assert [n for n, _ in c1] == [0, 1, 2, 3]
    assert all(t >= n * 0.05 - 0.002 for n, t in c1)  # one slot every 1/20 s, in order


async def test_pacer_update_budget_allows_a_burst_then_spaces_edits() -> None:
    pacer = Pacer(updates_per_min=1200, update_burst=2)  # 20 edits/s after a burst of 2
    before = time.monotonic()
    done: list[float] = []

    async def edit() -> None:
        async with pacer.update_slot():
            done.append(time.monotonic() - before)

    edits = [asyncio.create_task(edit()) for _ in range(4)]
    await asyncio.sleep(0)  # every edit asked for its token once
    assert len(done) == 2  # the burst went through without waiting
    await asyncio.gather(*edits)
    assert done[2] >= 0.05 - 0.002 and done[3] >= 0.10 - 0.002


async def test_sinks_share_the_update_budget(fake: FakeSlackAPI) -> None:
    pacer = Pacer(rate_per_s=50, updates_per_min=600, update_burst=1)  # one edit per 0.1 s
    sinks = [sink(fake, pacer=pacer, assistant_status=False) for _ in range(3)]
    for progress in sinks:
        await progress.emit(Started(investigation_id=INV, kind="question", conversation_id="c"))
    await fake.wait_for(lambda: len(fake.calls_to("chat.postMessage")) == 3)  # the statuses
    asked = time.monotonic()
    await asyncio.gather(*(p.finish(FakeOutcome(status="answered", answer="a")) for p in sinks))
    edits = fake.calls_to("chat.update")
    assert len(edits) == 3
    # The n-th edit is let through n * 0.1 s after they were asked for at the earliest;
    # arrival gaps alone would jitter on a loaded machine, these lower bounds cannot.
    assert [e.at - asked >= n * 0.1 - 0.005 for n, e in enumerate(edits)] == [True] * 3


def test_pacer_rejects_a_nonpositive_rate() -> None:
    with pytest.raises(ValueError, match="rate_per_s"):
        Pacer(rate_per_s=0)
    with pytest.raises(ValueError, match="updates_per_min"):
        Pacer(updates_per_min=0)


async def test_worker_ends_when_idle_so_an_abandoned_sink_leaks_no_task(fake: FakeSlackAPI) -> None:
    progress = sink(fake)
    await progress.emit(Started(investigation_id=INV, kind="question", conversation_id="c"))
    assert progress._worker is not None
    await asyncio.wait([progress._worker], timeout=WAIT_S)  # posted, then nothing to do
    assert progress.status_ts is not None
    await progress.emit(StepStarted(investigation_id=INV, step_id="s9", description="d"))
    await asyncio.wait([progress._worker], timeout=WAIT_S)  # a new worker flushed the change
    assert progress._worker.done()
    assert fake.methods().count("chat.update") == 1
