"""Speculative conclusion: the concluder runs beside the last reflection when nothing is pending.

Real engine, gateway, tools and SQLite; the scripted model times each reflector and
concluder call so overlap is measured, not assumed.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from google.genai import types

from core.events import LLMCalled
from store.db.engine import Database
from tests.agent.test_engine import (
    CONCLUSION,
    Harness,
    harness,
    json_response,
    plan,
    reflection,
    simple_planned_script,
    step,
    user_text,
)
from tests.fakes.model import ModelRequest, text_response
from tests.fakes.signals import WAIT_S

CALL_S = 0.15  # model latency of the timed stages


@dataclass
class Timed:
    """Serves queued responses after a latency and keeps (start, end) of every call.

    Calls whose index is in ``hang`` never answer (until cancelled). With ``until`` a
    call answers only once that event is set (or after ``WAIT_S``, for a run in which it
    never is): overlap then comes from the run's order, not from a loaded machine's pace.
    """

    responses: list[types.GenerateContentResponse]
    seconds: float = CALL_S
    hang: set[int] = field(default_factory=set)
    spans: list[tuple[float, float]] = field(default_factory=list)
    calls: int = 0
    cancelled: int = 0
    entered: asyncio.Event = field(default_factory=asyncio.Event)
    until: asyncio.Event | None = None

    async def __call__(self, request: ModelRequest) -> types.GenerateContentResponse:
        start, index = time.monotonic(), self.calls
        self.calls += 1
        self.entered.set()
        response = self.responses.pop(0)
        try:
            await asyncio.sleep(self.seconds)
            if self.until is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.until.wait(), WAIT_S)
            if index in self.hang:
                await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        self.spans.append((start, time.monotonic()))
        return response


def concluded(summary: str) -> types.GenerateContentResponse:
    return json_response({**CONCLUSION, "summary": summary})


def one_step_script(reflector: Timed, concluder: Timed, **extra: Any) -> dict[str, Any]:
    return simple_planned_script(reflector=reflector, concluder=concluder, **extra)


ADD_S2 = {
    "type": "add_step",
    "step_id": "",
    "reason": "a new lead",
    "step": {
        "description": "Logins from 203.0.113.7 as alice",
        "tools": ["query_logs"],
        "expected": "counts",
        "depends_on": ["s1"],
    },
}


def overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    return min(a[1], b[1]) - max(a[0], b[0])


def stages(h: Harness) -> list[str]:
    return [e.stage for e in h.sink.events if isinstance(e, LLMCalled)]


async def test_conclusion_overlaps_the_last_reflection_when_nothing_is_pending(
    db: Database,
) -> None:
    concluder = Timed([concluded("written during the reflection")])
    # the reflection answers once the conclusion has begun: a conclusion that waited for
    # the reflection would begin after it ended (WAIT_S later), without any overlap
    reflector = Timed(
        [reflection(achieved=True, insights=("late insight",))], until=concluder.entered
    )
    h = harness(db, one_step_script(reflector, concluder))

    outcome = await h.run()

    assert outcome.status == "concluded" and outcome.conclusion is not None
    assert outcome.conclusion.summary == "written during the reflection"
    assert overlap(reflector.spans[0], concluder.spans[0]) > 0
    assert outcome.usage["stages"]["concluder"]["calls"] == 1
    assert "concluder_speculative" not in outcome.usage["stages"]
    assert (
        outcome.usage["llm_calls"] == 6
    )  # classifier, planner, 2 step turns, reflector, conclusion
    # events: the call is labelled speculative while it runs; one Concluded, after Reflected
    assert "concluder_speculative" in stages(h)
    kinds = h.sink.types()
    assert kinds.count("concluded") == 1 and kinds.index("reflected") < kinds.index("concluded")
    # honest record: that reflection's insight was not in the conclusion's prompt
    assert "late insight" not in user_text(h.model.requests_for("concluder")[0])
    assert outcome.record["speculative_conclusions"] == [
        {
            "after_wave": 1,
            "outcome": "used",
            "reason": "",
            "insights_not_seen": ["late insight"],
            "llm_calls": 1,
            "total_tokens": outcome.usage["stages"]["concluder"]["prompt_tokens"]
            + outcome.usage["stages"]["concluder"]["output_tokens"],
        }
    ]


async def test_reflection_adding_a_step_discards_the_speculative_conclusion(
    db: Database,
) -> None:
    reflector = Timed(
        [reflection(updates=[ADD_S2]), reflection(achieved=True)], seconds=0.02
    )  # the first conclusion is still in flight when it is discarded
    concluder = Timed([concluded("STALE: before s2"), concluded("FINAL: with s2")])
    script = one_step_script(
        reflector, concluder, **{"step s2": [text_response("finding-s2: 3 logins as alice")]}
    )
    h = harness(db, script)

    outcome = await h.run()

    assert outcome.conclusion is not None and outcome.conclusion.summary == "FINAL: with s2"
    assert outcome.plan is not None
    assert [(s.id, s.status) for s in outcome.plan.steps] == [("s1", "done"), ("s2", "done")]
    stale, final = h.model.requests_for("concluder")
    assert "finding-s2" not in user_text(stale) and "finding-s2" in user_text(final)
    done = [e.model_dump() for e in h.sink.events if e.type == "concluded"]
    assert [d["conclusion"]["summary"] for d in done] == ["FINAL: with s2"]
    # the discarded call finished during wave 2 and its tokens are counted on their own
    assert outcome.usage["stages"]["concluder_speculative"]["calls"] == 1
    assert outcome.usage["stages"]["concluder"]["calls"] == 1
    record = outcome.record["speculative_conclusions"]
    assert [(r["after_wave"], r["outcome"], r["reason"]) for r in record] == [
        (1, "discarded", "the reflection added steps"),
        (2, "used", ""),
    ]
    assert record[0]["total_tokens"] > 0


async def test_a_discarded_call_still_in_flight_is_cancelled_when_the_run_ends(
    db: Database,
) -> None:
    reflector = Timed([reflection(updates=[ADD_S2]), reflection(achieved=True)], seconds=0.01)
    concluder = Timed([concluded("hangs"), concluded("FINAL")], seconds=0.01, hang={0})
    script = one_step_script(reflector, concluder, **{"step s2": [text_response("finding-s2")]})
    h = harness(db, script)

    outcome = await asyncio.wait_for(h.run(), WAIT_S)  # a bound for a run that would hang

    assert outcome.conclusion is not None and outcome.conclusion.summary == "FINAL"
    assert concluder.cancelled == 1
    first = outcome.record["speculative_conclusions"][0]
    assert (first["outcome"], first["llm_calls"]) == ("discarded", 0)  # cancelled: no usage


async def test_setting_off_runs_reflection_and_conclusion_one_after_the_other(
    db: Database,
) -> None:
    reflector = Timed([reflection(achieved=True)])
    concluder = Timed([concluded("sequential")])
    h = harness(db, one_step_script(reflector, concluder), speculative_conclusion=False)

    outcome = await h.run()

    assert outcome.conclusion is not None and outcome.conclusion.summary == "sequential"
    assert overlap(reflector.spans[0], concluder.spans[0]) < 0
    assert "speculative_conclusions" not in outcome.record
    assert "concluder_speculative" not in stages(h)


async def test_no_speculation_while_steps_are_pending(db: Database) -> None:
    reflector = Timed([reflection(), reflection(achieved=True)], seconds=0.01)
    concluder = Timed([concluded("after s2")], seconds=0.01)
    script = one_step_script(reflector, concluder, **{"step s2": [text_response("finding-s2")]})
    script["planner"] = [plan(step("s1", ["lookup_ip"]), step("s2", ["query_logs"], ["s1"]))]
    h = harness(db, script)

    outcome = await h.run()

    assert outcome.conclusion is not None and outcome.conclusion.summary == "after s2"
    # one speculation, after wave 2 (wave 1 left s2 pending), and it was used
    assert [(r["after_wave"], r["outcome"]) for r in outcome.record["speculative_conclusions"]] == [
        (2, "used")
    ]
    assert concluder.spans[0][0] > reflector.spans[0][1]


async def test_deadline_during_the_last_reflection_keeps_the_speculative_conclusion(
    db: Database,
) -> None:
    reflector = Timed([reflection(achieved=True)], hang={0})  # never answers
    concluder = Timed([concluded("written in time")], seconds=0.05)
    # 3 s: the steps must be done within the work's 2.4 s, loaded or not (0.5 s left 0.4 s)
    h = harness(db, one_step_script(reflector, concluder), deadline_s=3.0)

    outcome = await asyncio.wait_for(h.run(), WAIT_S)  # a bound for a run that would hang

    assert outcome.conclusion is not None and outcome.conclusion.summary == "written in time"
    assert outcome.limits_hit[0].startswith("deadline:")
    assert len(h.model.requests_for("concluder")) == 1
    assert reflector.cancelled == 1
    # the conclusion started with the reflection, not after the deadline stopped it
    assert outcome.record["speculative_conclusions"][0]["outcome"] == "used"


async def test_cancelling_the_run_cancels_the_speculative_call(db: Database) -> None:
    reflector = Timed([reflection(achieved=True)], hang={0})
    concluder = Timed([concluded("never used")], hang={0})
    h = harness(db, one_step_script(reflector, concluder))

    task = asyncio.create_task(h.run())
    both = asyncio.gather(reflector.entered.wait(), concluder.entered.wait())
    await asyncio.wait_for(both, WAIT_S)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert (reflector.cancelled, concluder.cancelled) == (1, 1)
    assert "concluded" not in h.sink.types() and h.sink.types()[-1] == "failed"
