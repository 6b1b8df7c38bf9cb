"""One log line when an investigation starts and one when it ends, for ``socbot serve``.

``logged_run`` wraps any engine run (mentions, follow-ups, alerts alike): the start
line comes with the engine's ``Started`` event (it carries the investigation id),
the end line with the outcome — id, thread, mode, status, verdict, duration,
model calls, tokens and list-price cost. Never the message or the alert itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Protocol

from agent.engine import Outcome, Request
from bot.observe import metrics, tracing
from core.events import Event, Sink, Started
from store.schema import InvestigationStatus

log = logging.getLogger("socbot.runs")


class _Engine(Protocol):
    async def run(self, request: Request, sink: Sink) -> Outcome: ...


class _StartLogger:
    """Forwards every event to ``sink``; logs the start line on ``Started``; counts the
    events in the metrics and the trace."""

    def __init__(self, sink: Sink, thread: str, trace: tracing.Trace) -> None:
        self.sink = sink
        self.thread = thread
        self.trace = trace
        self.investigation_id = "?"

    async def emit(self, event: Event) -> None:
        metrics.observe(event)
        self.trace.observe(event)
        if isinstance(event, Started):
            self.investigation_id = event.investigation_id or "?"
            log.info(
                "investigation %s started: thread=%s kind=%s",
                self.investigation_id,
                self.thread,
                event.kind,
            )
        await self.sink.emit(event)


async def logged_run(engine: _Engine, request: Request, sink: Sink) -> Outcome:
    """``engine.run(request, sink)`` with a start and an end line in the log, counted in
    the metrics (``bot.observe.metrics``) and traced when tracing is on
    (``bot.observe.tracing``)."""
    source = request.alert.source if request.alert is not None else "chat"
    with tracing.current().investigation(request, source) as trace:
        starts = _StartLogger(sink, request.conversation_id, trace)
        return await _run(engine, request, starts, source)


async def _run(engine: _Engine, request: Request, starts: _StartLogger, source: str) -> Outcome:
    started = time.monotonic()
    try:
        outcome = await engine.run(request, starts)
    except asyncio.CancelledError:
        _ended_early(starts, InvestigationStatus.CANCELLED, started)
        metrics.observe_outcome(
            None, InvestigationStatus.CANCELLED, source, time.monotonic() - started
        )
        raise
    except Exception as error:
        _ended_early(starts, f"error ({type(error).__name__})", started)
        metrics.observe_outcome(None, "error", source, time.monotonic() - started)
        raise
    elapsed = time.monotonic() - started
    log.info("%s", end_line(outcome, request.conversation_id, elapsed))
    metrics.observe_outcome(outcome, outcome.status, source, elapsed)
    return outcome


def _ended_early(starts: _StartLogger, status: str, started: float) -> None:
    log.info(
        "investigation %s ended: thread=%s status=%s duration=%.1fs",
        starts.investigation_id,
        starts.thread,
        status,
        time.monotonic() - started,
    )


def end_line(outcome: Outcome, thread: str, elapsed_s: float) -> str:
    """``investigation ID ended: thread=… mode=… status=… verdict=… duration=… …``."""
    usage: dict[str, Any] = outcome.usage or {}
    verdict = outcome.conclusion.verdict if outcome.conclusion is not None else "-"
    cost = usage.get("cost_usd")
    return (
        f"investigation {outcome.investigation_id} ended: thread={thread} "
        f"mode={outcome.mode or '-'} status={outcome.status} verdict={verdict} "
        f"duration={elapsed_s:.1f}s model_calls={usage.get('llm_calls', 0)} "
        f"tokens={usage.get('total_tokens', 0)}"
        + (f" cost=${cost:.4f}" if isinstance(cost, int | float) else "")
    )
