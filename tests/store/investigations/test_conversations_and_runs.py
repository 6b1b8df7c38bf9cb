"""Conversations, investigations and the trace on a real SQLite file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import update

from core.events import FanOut, PlanCreated, StepStarted, ToolCalled
from store.db.engine import Database
from store.investigations.conversations import ConversationStore
from store.investigations.runs import InvestigationStore
from store.schema import Message


async def test_investigation_lifecycle(db: Database) -> None:
    store = InvestigationStore(db)
    await store.create("inv1", "conv1", "alert", '{"title": "x"}')

    row = await store.get("inv1")
    assert row is not None
    assert (row.status, row.kind, row.conversation_id) == ("running", "alert", "conv1")
    assert row.finished_at is None

    await store.finish(
        "inv1",
        status="concluded",
        mode="planned",
        objective="Decide whether the login is malicious",
        verdict="benign",
        record={"objective": "Decide whether the login is malicious", "steps": []},
        usage={"llm_calls": 3},
        error=None,
    )
    row = await store.get("inv1")
    assert row is not None
    assert (row.status, row.mode, row.verdict) == ("concluded", "planned", "benign")
    assert row.record == {"objective": "Decide whether the login is malicious", "steps": []}
    assert row.usage == {"llm_calls": 3}
    assert row.finished_at is not None
    assert await store.get("nope") is None


async def test_trace_is_written_as_it_happens_and_survives_reopen(
    db: Database, tmp_path: Path
) -> None:
    store = InvestigationStore(db)
    await store.create("inv2", "conv1", "question", "is 1.2.3.4 bad?")
    recorder = store.recorder("inv2")
    sink = FanOut(recorder)
    await sink.emit(PlanCreated(investigation_id="inv2", plan={"objective": "o", "steps": []}))
    await sink.emit(StepStarted(investigation_id="inv2", step_id="s1", description="look up"))
    await sink.emit(
        ToolCalled(
            investigation_id="inv2",
            step_id="s1",
            tool="lookup_ip",
            args={"ip": "1.2.3.4"},
            ok=True,
            duration_ms=12.5,
            result_chars=40_000,
            truncated=True,
            result_preview='{"asn": 1}',
        )
    )
    # The background writer drains as events come (no finish(): a crash now loses
    # nothing already written); a fresh connection then sees every event.
    await recorder.flush()
    reopened = Database(str(db.engine.url))
    try:
        trace = await InvestigationStore(reopened).trace("inv2")
        row = await InvestigationStore(reopened).get("inv2")
    finally:
        await reopened.close()
    assert [e["type"] for e in trace] == ["plan_created", "step_started", "tool_called"]
    assert trace[2]["payload"]["args"] == {"ip": "1.2.3.4"}
    assert trace[2]["payload"]["truncated"] is True
    assert "investigation_id" not in trace[2]["payload"]
    assert row is not None and row.status == "running"


async def test_concurrent_events_all_recorded_in_emit_order(db: Database) -> None:
    store = InvestigationStore(db)
    await store.create("inv3", "conv1", "alert", "{}")
    recorder = store.recorder("inv3")
    await asyncio.gather(
        *(
            recorder.emit(StepStarted(investigation_id="inv3", step_id=f"s{i}", description="d"))
            for i in range(20)
        )
    )
    await recorder.flush()  # writes happen in the background; emit never waits for the disk
    trace = await store.trace("inv3")
    assert [e["payload"]["step_id"] for e in trace] == [f"s{i}" for i in range(20)]
    assert await store.trace("other") == []


async def test_conversations_keep_messages_in_order(db: Database) -> None:
    conversations = ConversationStore(db)
    assert not await conversations.exists("C1:1700000000.1")
    await conversations.ensure("C1:1700000000.1")
    await conversations.ensure("C1:1700000000.1")  # idempotent
    assert await conversations.exists("C1:1700000000.1")

    await conversations.append("C1:1700000000.1", "user", "first question")
    await conversations.append_many(
        "C1:1700000000.1", [("user", "second"), ("model", "answer two")], "inv9"
    )
    await conversations.append("other", "user", "not mine")

    messages = await conversations.messages("C1:1700000000.1")
    assert [(m.role, m.content) for m in messages] == [
        ("user", "first question"),
        ("user", "second"),
        ("model", "answer two"),
    ]
    assert [m.investigation_id for m in messages] == [None, "inv9", "inv9"]
    assert await conversations.count("C1:1700000000.1") == 3
    assert await conversations.exists("other")


async def test_write_watchers_hear_committed_writes_only(any_db: Database) -> None:
    heard: list[str | None] = []
    store = ConversationStore(any_db)

    async def latest() -> str | None:
        messages = await store.messages("conv1")
        return messages[-1].content if messages else None

    any_db.watch_writes(lambda: heard.append("write"))
    await store.append("conv1", "user", "is 185.220.101.42 bad?")
    assert heard == ["write"]
    assert await latest() == "is 185.220.101.42 bad?"
    assert heard == ["write"]  # reading is not a write
    with pytest.raises(RuntimeError):
        async with any_db.session() as session:
            await session.execute(update(Message).values(content="never kept"))
            raise RuntimeError("rolled back")
    assert await latest() == "is 185.220.101.42 bad?"
    assert heard == ["write"]  # nor is a write rolled back (nor a read after it)


async def test_runs_share_one_trace_writer_and_a_bad_run_loses_only_its_own(
    db: Database,
) -> None:
    store = InvestigationStore(db)
    for inv in ("good1", "good2"):
        await store.create(inv, "conv1", "alert", "{}")
    batches: list[int] = []
    inner = store.append_events

    async def counted(events: list[tuple[str, str, dict[str, object]]]) -> None:
        batches.append(len(events))
        if any(inv == "ghost" for inv, _, _ in events):  # a write the database refuses
            raise RuntimeError("refused")
        await inner(events)

    store.append_events = counted  # type: ignore[method-assign]
    one, two, ghost = store.recorder("good1"), store.recorder("good2"), store.recorder("ghost")
    async with db.session():  # the writer cannot write while this session holds the turn
        for i in range(3):
            for recorder, inv in ((one, "good1"), (two, "good2"), (ghost, "ghost")):
                step = StepStarted(investigation_id=inv, step_id=f"s{i}", description="d")
                await recorder.emit(step)
        await asyncio.sleep(0.05)
    await one.flush()
    await two.flush()
    await ghost.flush()  # the batch of all three failed: retried run by run
    assert batches[0] == 9 and sorted(batches[1:]) == [3, 3, 3]
    assert [e["payload"]["step_id"] for e in await store.trace("good1")] == ["s0", "s1", "s2"]
    assert [e["payload"]["step_id"] for e in await store.trace("good2")] == ["s0", "s1", "s2"]
    assert await store.trace("ghost") == []
