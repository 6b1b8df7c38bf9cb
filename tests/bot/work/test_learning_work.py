"""Learning runs as work rows (``store.queue.learning``, ``bot.work.learning``) on SQLite and
PostgreSQL: one waiting row per investigation, after alerts and questions in a pool of
their own, never in the analyst's thread, handed over at shutdown, taken over after a
crash (continuing after a recorded reflection), retried when Gemini is unavailable, and
no ``learning_runs`` row left ``running``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import select

from agent.errors import LLMUnavailable
from bot.work.learning import LearningWork
from bot.work.worker import Coordinator, ThreadRef
from config.settings import Settings
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.playbook.bullets import PlaybookStore
from store.playbook.feedback import FeedbackStore
from store.playbook.learning import RESTARTED, LearningStore
from store.queue.learning import LearnQueue
from store.queue.work import Job, QueueLimits, WorkQueue, priority
from store.schema import WorkRow
from tests.bot.work.test_worker import GatedRunner, NoticeRecorder
from tests.fakes.model import ScriptedModel, json_response
from tests.fakes.signals import writes
from tests.playbook_support import QUALYS_OP, Lab, bullet, insight, load_alert, planned_script
from tests.queue_clock import LEASE_S, AheadQueue

SOC, TS = "CSOC00001", "1700000100.000100"


def reflection(evaluations: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {
        "insights": [insight("203.0.113.0/24 is Qualys", "escalated")],
        "bullet_evaluations": evaluations or [],
    }


def hanging(gate: asyncio.Event) -> Callable[[Any], Awaitable[Any]]:
    """A model call that waits for ``gate`` (a run in progress)."""

    async def respond(_request: Any) -> Any:
        await gate.wait()
        raise LLMUnavailable("released")

    return respond


async def voted(lab: Lab, *, cite: list[str] | None = None) -> str:
    """A concluded investigation in SOC/TS with an analyst's correction."""
    outcome, _ = await lab.investigate(
        load_alert("leveret-guardduty-finding.json"), planned_script(plan_cites=cite)
    )
    await FeedbackStore(lab.db).vote(
        outcome.investigation_id, "UANALYST1", "incorrect", verdict="false_positive"
    )
    return outcome.investigation_id


def replica(
    db: Database,
    lab: Lab,
    model: ScriptedModel,
    name: str,
    *,
    max_attempts: int = 3,
    ahead_s: float = 0.0,
) -> tuple[Coordinator, LearningWork, NoticeRecorder]:
    """A replica; one ``ahead_s`` on the others' clock sees their leases (``LEASE_S``) over."""
    queue = AheadQueue(db, QueueLimits(running=1), lease_s=LEASE_S, max_attempts=max_attempts)
    queue.move(ahead_s)
    told = NoticeRecorder()
    coordinator = Coordinator(1, told, queue, replica=name, poll_s=0.05, retry_backoff_s=0.05)
    return coordinator, LearningWork(lab.learner(model), LearnQueue(db), coordinator), told


async def die(coordinator: Coordinator) -> None:
    """The replica stops claiming and renewing leases, as if killed: its loop waits for
    its next claim and its lease loop ends after the renewal in progress (cancelling
    either instead could cut a transaction short)."""
    await coordinator._claiming.acquire()
    coordinator._leases_done.set()
    assert coordinator._renewer is not None
    await coordinator._renewer


async def revive_to_shut_down(coordinator: Coordinator) -> None:
    coordinator._claiming.release()  # its run is no longer its own: stopped on renewal
    await coordinator.shutdown()


async def learn_rows(db: Database) -> list[tuple[str, int]]:
    async with db.session() as session:
        rows = await session.scalars(
            select(WorkRow).where(WorkRow.kind == "learn").order_by(WorkRow.id)
        )
        return [(r.state, r.attempts) for r in rows]


async def rows_are(db: Database, *rows: tuple[str, int]) -> bool:
    return await learn_rows(db) == list(rows)


async def statuses(db: Database, investigation_id: str) -> list[str]:
    return [r["status"] for r in await LearningStore(db).runs(investigation_id)]


async def statuses_are(db: Database, investigation_id: str, *expected: str) -> bool:
    return await statuses(db, investigation_id) == list(expected)


def lab_on(db: Database) -> Lab:
    return Lab(db, Settings(), PlaybookStore(db), InvestigationStore(db))


async def test_votes_before_the_run_join_one_waiting_row(any_db: Database) -> None:
    learn = LearnQueue(any_db)
    ids = await asyncio.gather(*(learn.request("inv-1") for _ in range(8)))
    assert len(set(ids)) == 1
    row = await WorkQueue(any_db).get(ids[0])
    assert row is not None and (row.thread, row.request["requests"]) == ("learn:inv-1", 8)

    queue = WorkQueue(any_db)
    assert [w.id for w in (await queue.claim("r1", 1)).started] == [ids[0]]
    later = await learn.request("inv-1")  # a vote during the run: learned from next
    assert later != ids[0] and await learn.request("inv-1") == later
    assert (await queue.claim("r1", 1)).started == []  # one run per investigation at a time
    assert await learn_rows(any_db) == [("running", 1), ("queued", 0)]


async def test_learning_waits_for_alerts_and_questions_and_has_its_own_pool(
    any_db: Database,
) -> None:
    queue = WorkQueue(any_db, QueueLimits(running=1, running_background=1))
    learn = LearnQueue(any_db)
    alert = Job("alert", "CALERT", "1.0", alert_id="a1", priority=priority("alert", "low"))
    await queue.submit(alert)
    await queue.submit(Job("mention", SOC, TS, "is it bad?", requester="U1"))
    first, second = await learn.request("inv-1"), await learn.request("inv-2")

    started = (await queue.claim("r1", 1)).started
    assert [w.kind for w in started] == ["alert"]  # the mention waits, so learning waits
    await queue.finish(started[0].id, "r1", "done")
    started = (await queue.claim("r1", 1)).started
    assert [(w.kind, w.id) for w in started[1:]] == [("learn", first)]  # not a slot: both run
    mention = started[0]
    assert mention.kind == "mention"

    await queue.finish(first, "r1", "done")
    await queue.submit(Job("alert", "CALERT", "2.0", alert_id="a2"))
    assert (await queue.claim("r1", 1)).started == []  # the alert waits: no learning either
    await queue.finish(mention.id, "r1", "done")
    started = (await queue.claim("r1", 1)).started
    assert [(w.kind, w.id if w.kind == "learn" else 0) for w in started] == [
        ("alert", 0),
        ("learn", second),
    ]


async def test_a_follow_up_is_not_held_up_by_learning_in_its_thread(any_db: Database) -> None:
    lab = lab_on(any_db)
    inv = await voted(lab)
    gate = asyncio.Event()
    model = ScriptedModel({"playbook_reflector": hanging(gate)})
    coordinator, learning, told = replica(any_db, lab, model, "r1")
    chat = GatedRunner()
    coordinator.register({"followup": chat})
    thread = ThreadRef(SOC, TS)  # where the investigation concluded and was voted on

    await learning.request(inv)
    await model.changes.until(lambda: bool(model.requests_for("playbook_reflector")))
    assert not coordinator.busy(thread)
    followup = Job("followup", SOC, TS, "and the other host?", requester="UANALYST1")
    assert await coordinator.submit(thread, followup)  # limit 1, and learning is running
    await chat.ran_once(thread)
    assert await statuses(any_db, inv) == ["running"]  # both run at once
    chat.gate.set()
    await chat.changes.until(lambda: bool(chat.finished))
    assert chat.finished == [thread]
    await coordinator.shutdown()
    assert await statuses(any_db, inv) == ["interrupted"]
    assert told.said == []


async def test_shutdown_hands_the_run_back_and_the_next_start_finishes_it(
    any_db: Database,
) -> None:
    lab = lab_on(any_db)
    inv = await voted(lab)
    gate = asyncio.Event()
    first = ScriptedModel({"playbook_reflector": hanging(gate)})
    a, learning, told = replica(any_db, lab, first, "a")
    await learning.request(inv)
    await first.changes.until(lambda: bool(first.requests_for("playbook_reflector")))
    await asyncio.wait_for(a.shutdown(grace_s=0), 10)  # the held run is not waited for
    assert await learn_rows(any_db) == [("queued", 0)]  # handed back, not an attempt
    assert await statuses(any_db, inv) == ["interrupted"]

    second = ScriptedModel(
        {
            "playbook_reflector": [json_response(reflection())],
            "playbook_curator": [json_response({"operations": [QUALYS_OP]})],
        }
    )
    b, _, told_b = replica(any_db, lab, second, "b")
    b.start()
    await writes(any_db).until(lambda: rows_are(any_db, ("done", 1)))
    assert await statuses(any_db, inv) == ["interrupted", "done"]
    (proposal,) = await lab.store.bullets(["proposed"])
    assert proposal.content == QUALYS_OP["content"]
    assert told.said == told_b.said == []
    await b.shutdown()


async def test_a_dead_replicas_run_is_taken_over_after_its_reflection(any_db: Database) -> None:
    lab = lab_on(any_db)
    cited = await lab.store.add(bullet("GuardDuty port scans: check the scanner schedule."))
    inv = await voted(lab, cite=[cited.id])
    gate = asyncio.Event()
    helpful = [{"bullet_id": cited.id, "tag": "helpful", "reason": "pointed at the scanner"}]
    first = ScriptedModel(
        {
            "playbook_reflector": [json_response(reflection(helpful))],
            "playbook_curator": hanging(gate),
        }
    )
    a, learning, _ = replica(any_db, lab, first, "a")
    await learning.request(inv)
    await first.changes.until(lambda: bool(first.requests_for("playbook_curator")))
    await die(a)  # replica a dies mid-run: nothing renews its lease any more

    second = ScriptedModel({"playbook_curator": [json_response({"operations": [QUALYS_OP]})]})
    b, _, told_b = replica(any_db, lab, second, "b", ahead_s=LEASE_S + 1)  # a's lease is over
    b.start()
    await writes(any_db).until(lambda: rows_are(any_db, ("done", 2)))
    assert second.requests_for("playbook_reflector") == []  # went on from the reflection
    runs = await LearningStore(any_db).runs(inv)
    assert [(r["status"], r["error"]) for r in runs] == [("interrupted", RESTARTED), ("done", None)]
    assert runs[1]["result"]["resumed"] is True
    tagged = await lab.store.get(cited.id)
    assert tagged is not None and tagged.helpful == 1  # counted once
    assert told_b.said == []  # "socbot restarted" is not said in the analyst's thread
    await b.shutdown()
    await revive_to_shut_down(a)


async def test_gemini_unavailable_retries_with_backoff_then_fails_the_run(
    any_db: Database,
) -> None:
    lab = lab_on(any_db)
    inv = await voted(lab)
    down = ScriptedModel({"playbook_reflector": [LLMUnavailable("quota"), LLMUnavailable("quota")]})
    coordinator, learning, told = replica(any_db, lab, down, "r1", max_attempts=2)
    await learning.request(inv)
    await writes(any_db).until(lambda: rows_are(any_db, ("failed", 2)))
    runs = await LearningStore(any_db).runs(inv)
    assert [(r["status"], r["error"]) for r in runs] == [
        ("interrupted", "quota"),
        ("failed", "quota"),
    ]
    assert told.said == []
    await coordinator.shutdown()


async def test_a_run_given_up_after_crashes_is_failed_not_running(any_db: Database) -> None:
    lab = lab_on(any_db)
    inv = await voted(lab)
    gate = asyncio.Event()
    first = ScriptedModel({"playbook_reflector": hanging(gate)})
    a, learning, _ = replica(any_db, lab, first, "a", max_attempts=1)
    await learning.request(inv)
    await first.changes.until(lambda: bool(first.requests_for("playbook_reflector")))
    await die(a)
    b, _, told_b = replica(
        any_db, lab, ScriptedModel({}), "b", max_attempts=1, ahead_s=LEASE_S + 1
    )  # a's lease is over
    b.start()
    await writes(any_db).until(lambda: rows_are(any_db, ("failed", 1)))
    await writes(any_db).until(lambda: statuses_are(any_db, inv, "failed"))  # by b
    assert told_b.said == []
    await b.shutdown()
    await revive_to_shut_down(a)
    assert await statuses(any_db, inv) == ["failed"]  # a's cancelled attempt changes nothing


async def test_runs_orphaned_by_dead_replicas_are_swept(any_db: Database) -> None:
    queue, runs = WorkQueue(any_db, max_attempts=1), LearningStore(any_db)
    requeued = await LearnQueue(any_db).request("inv-1")
    given_up = await LearnQueue(any_db).request("inv-2")
    for work_id, investigation in ((requeued, "inv-1"), (given_up, "inv-2")):
        await runs.start(investigation, work_id=work_id)  # then the replica died
    await queue.claim("dead", 2)
    await queue.release("dead")  # inv-1's row is queued again
    async with any_db.session() as session:
        row = await session.get(WorkRow, given_up)
        assert row is not None
        row.state = "failed"  # given up by a replica that died before settling its runs
    assert await runs.sweep() == 2
    assert await statuses(any_db, "inv-1") == ["interrupted"]
    assert await statuses(any_db, "inv-2") == ["failed"]
    assert await runs.sweep() == 0


async def test_learning_switched_off_queues_nothing(db: Database) -> None:
    queue = WorkQueue(db)
    coordinator = Coordinator(1, NoticeRecorder(), queue, replica="r1")
    learning = LearningWork(
        lab_on(db).learner(ScriptedModel({})), LearnQueue(db), coordinator, enabled=False
    )
    await learning.request("inv-1")
    assert await learn_rows(db) == []
    assert await queue.counts() == {"queued": 0, "running": 0}
    await coordinator.shutdown()
