"""What every benchmark shares: fake remotes in their own thread, settings, one timed
run of the engine, the critical path, medians, a printed table and the JSON result.

Timing: every interval is ``time.monotonic()`` seconds. Model calls are timed by the
fake Gemini server (handler entry to response ready); tool calls by wrapping the
runtime's ``ToolRegistry.dispatch`` (entry to return). The **critical path** of a run
is the length of the union of those intervals: the time in which at least one model
or tool call was in flight. ``wall / critical_path - 1`` is the orchestration
overhead: everything our code, the google-genai client, httpx, SQLite and the event
loop add on top of the remote latency.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import threading
import time
import tomllib
import uuid
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Mapping,
    Sequence,
)
from concurrent.futures import Future
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx

from agent.engine import Outcome, Request
from alerts.parse import Alert, parse_alert
from bench.fake_gemini import CallRecord, FakeGemini, Responder
from bench.fake_intel import FakeIntel, RedirectTransport
from cli.runtime import Runtime, open_runtime
from config.settings import Settings
from core.events import Event, ToolCalled
from tools.base import ToolRegistry, ToolResult

REPO = Path(__file__).resolve().parent.parent
# Results go to an ignored folder so that running a benchmark leaves the tree clean;
# SOCBOT_BENCH_RESULTS=bench/results updates the committed reference results.
RESULTS = Path(os.environ.get("SOCBOT_BENCH_RESULTS") or REPO / "var" / "bench")
ALERT_FILE = REPO / "examples" / "alerts" / "leveret-scc.json"
FAKE_KEY = "bench-fake-gemini-key"
T = TypeVar("T")
Interval = tuple[float, float]


class LoopThread:
    """An event loop in a daemon thread: the 'remote side' (fake Gemini, intel, Slack)."""

    def __init__(self, name: str = "bench-remote") -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def submit(self, coro: Awaitable[T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(_wrap(coro), self.loop)

    async def run(self, coro: Awaitable[T]) -> T:
        """Run ``coro`` on the thread's loop; await it from another loop."""
        return await asyncio.wrap_future(self.submit(coro))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        self.loop.close()


async def _wrap(coro: Awaitable[T]) -> T:
    return await coro


@dataclass
class Remote:
    """The fake Gemini and threat-intel servers, running in a ``LoopThread``."""

    thread: LoopThread
    gemini: FakeGemini
    intel: FakeIntel

    def records_between(self, start: float, end: float) -> list[CallRecord]:
        return [c for c in list(self.gemini.calls) if c.start >= start and c.end <= end]


@asynccontextmanager
async def remote(
    script: Mapping[str, Responder],
    *,
    latency_s: float | Mapping[str, float] = 0.3,
    intel_latency_s: float = 0.15,
) -> AsyncIterator[Remote]:
    """Start the fakes in their own thread for the duration of the block."""
    thread = LoopThread()
    gemini = FakeGemini(script, latency_s=latency_s)
    intel = FakeIntel(latency_s=intel_latency_s)
    try:
        await thread.run(gemini.start())
        await thread.run(intel.start())
        yield Remote(thread, gemini, intel)
    finally:
        await thread.run(gemini.stop())
        await thread.run(intel.stop())
        thread.close()


def bench_settings(
    db_path: Path,
    gemini_url: str,
    *,
    review: Mapping[str, Any] | None = None,
    gemini: Mapping[str, Any] | None = None,
    **limits: Any,
) -> Settings:
    """``config/socbot.toml`` (log tables on the DuckDB sample) + fakes + a fresh SQLite;
    ``review`` sets ``[review]`` (default: the built-in review settings), ``gemini`` adds
    to ``[gemini]`` (e.g. ``{"context_cache": {"enabled": True}}``)."""
    config = tomllib.loads((REPO / "config" / "socbot.toml").read_text())
    logs = dict(config.get("logs", {}))
    logs["runbooks_dir"] = str(REPO / str(logs.get("runbooks_dir", "examples/runbooks")))
    logs["tables"] = [
        {**t, "path": str(REPO / t["path"])} if t.get("path") else t for t in logs["tables"]
    ]
    return Settings(
        database_url=f"sqlite+aiosqlite:///{db_path}",
        gemini={  # type: ignore[arg-type]
            "api_key": FAKE_KEY,
            "base_url": gemini_url,
            "max_retries": 0,
            "timeout_s": 60.0,
            **(gemini or {}),
        },
        intel={"abuseipdb_api_key": "bench-fake-abuseipdb", "otx_api_key": "bench-fake-otx"},  # type: ignore[arg-type]
        logs=logs,  # type: ignore[arg-type]
        limits=limits,  # type: ignore[arg-type]
        review=dict(review or {}),  # type: ignore[arg-type]
    )


class ToolTimer:
    """Wraps a registry's ``dispatch`` to record each tool call's interval."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.intervals: list[tuple[str, float, float]] = []
        inner = registry.dispatch

        async def dispatch(name: str, args: dict[str, Any], **options: Any) -> ToolResult:
            start = time.monotonic()
            try:
                return await inner(name, args, **options)
            finally:
                self.intervals.append((name, start, time.monotonic()))

        registry.dispatch = dispatch  # type: ignore[method-assign]


class RecordingSink:
    """Keeps every progress event with its arrival time (cheap: a list append)."""

    def __init__(self) -> None:
        self.events: list[tuple[float, Event]] = []

    async def emit(self, event: Event) -> None:
        self.events.append((time.monotonic(), event))

    def tool_calls(self) -> list[ToolCalled]:
        return [e for _, e in self.events if isinstance(e, ToolCalled)]


@asynccontextmanager
async def runtime(
    rem: Remote,
    tmp: Path,
    *,
    review: Mapping[str, Any] | None = None,
    gemini: Mapping[str, Any] | None = None,
    **limits: Any,
) -> AsyncIterator[tuple[Runtime, ToolTimer]]:
    """A real runtime (``cli.runtime.open_runtime``) against the fakes, fresh database."""
    db_path = tmp / f"socbot-{uuid.uuid4().hex[:8]}.db"
    settings = bench_settings(db_path, rem.gemini.base_url, review=review, gemini=gemini, **limits)
    http = httpx.AsyncClient(
        transport=RedirectTransport(rem.intel.base_url), timeout=httpx.Timeout(60.0)
    )
    try:
        async with open_runtime(settings, http=http) as rt:
            yield rt, ToolTimer(rt.registry)
    finally:
        await http.aclose()


def load_alert() -> Alert:
    return parse_alert(json.loads(ALERT_FILE.read_text()))


def alert_request(conversation_id: str | None = None) -> Request:
    alert = load_alert()
    return Request(
        conversation_id=conversation_id or f"bench-{uuid.uuid4().hex}",
        text=f"Investigate this {alert.source} alert: {alert.title}",
        alert=alert,
    )


@dataclass
class RunResult:
    """One measured investigation."""

    wall_s: float
    outcome: Outcome
    calls: list[CallRecord]
    tools: list[tuple[str, float, float]]
    critical_s: float = 0.0
    start: float = 0.0
    end: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def gaps(self, min_s: float = 0.002) -> list[dict[str, Any]]:
        """Where this run had no model or tool call in flight (see ``gaps``)."""
        labelled = [(f"llm {c.stage}", c.start, c.end) for c in self.calls] + [
            (f"tool {n}", s, e) for n, s, e in self.tools
        ]
        return gaps(labelled, self.start, self.end, min_s)

    def summary(self) -> dict[str, Any]:
        """Per-stage model usage, tool calls and the timing figures of this run."""
        return {
            "wall_s": round(self.wall_s, 4),
            "critical_path_s": round(self.critical_s, 4),
            "overhead_ratio": round(self.wall_s / self.critical_s, 4) if self.critical_s else None,
            "llm_calls": len(self.calls),
            "stages": stage_table(self.calls),
            "tool_calls": len(self.tools),
            "tool_time_s": round(sum(e - s for _, s, e in self.tools), 4),
            "tools": _tool_table(self.tools),
            "status": self.outcome.status,
            "engine_usage": {k: v for k, v in self.outcome.usage.items() if k != "stages"},
            **self.extra,
        }


async def measure(rt: Runtime, timer: ToolTimer, rem: Remote, request: Request) -> RunResult:
    """Run one investigation; wall time from ``Engine.run`` call to return."""
    timer.intervals.clear()
    sink = RecordingSink()
    start = time.monotonic()
    outcome = await rt.engine.run(request, sink)
    end = time.monotonic()
    calls = rem.records_between(start, end)
    tools = [t for t in timer.intervals if t[1] >= start]
    intervals = [(c.start, c.end) for c in calls] + [(s, e) for _, s, e in tools]
    return RunResult(
        end - start,
        outcome,
        calls,
        tools,
        critical_s=union_length(intervals),
        start=start,
        end=end,
    )


def union_length(intervals: Iterable[Interval]) -> float:
    """Total length covered by at least one interval."""
    total, current_start, current_end = 0.0, None, None
    for start, end in sorted(intervals):
        if current_end is None or start > current_end:
            if current_end is not None and current_start is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_end is not None and current_start is not None:
        total += current_end - current_start
    return total


def stage_table(calls: Sequence[CallRecord]) -> dict[str, dict[str, Any]]:
    """Per stage (``step s1`` folded into ``step``): calls, tokens, latency."""
    out: dict[str, dict[str, Any]] = {}
    for c in calls:
        stage = c.stage.split(" ", 1)[0] or "?"
        row = out.setdefault(
            stage,
            {
                "calls": 0,
                "prompt_tokens": 0,
                "output_tokens": 0,
                "thinking_tokens": 0,
                "cached_tokens": 0,
                "max_prompt_tokens": 0,
                "latency_s": 0.0,
            },
        )
        row["calls"] += 1
        row["prompt_tokens"] += c.prompt_tokens
        row["output_tokens"] += c.output_tokens
        row["thinking_tokens"] += c.thoughts_tokens
        row["cached_tokens"] += c.cached_tokens
        row["max_prompt_tokens"] = max(row["max_prompt_tokens"], c.prompt_tokens)
        row["latency_s"] = round(row["latency_s"] + (c.end - c.start), 4)
    return out


def _tool_table(tools: Sequence[tuple[str, float, float]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, start, end in tools:
        row = out.setdefault(name, {"calls": 0, "time_s": 0.0})
        row["calls"] += 1
        row["time_s"] = round(row["time_s"] + end - start, 4)
    return out


def median(values: Iterable[float]) -> float:
    return float(statistics.median(list(values)))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) with linear interpolation."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def print_table(title: str, rows: Sequence[Sequence[object]], header: Sequence[str]) -> None:
    """A plain fixed-width table on stdout."""
    cells = [[str(h) for h in header], *[[_fmt(v) for v in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}")
    for i, row in enumerate(cells):
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def write_json(name: str, data: Mapping[str, Any], results_dir: Path = RESULTS) -> Path:
    """Write ``<RESULTS>/<name>.json`` (with the time it was taken)."""
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"{name}.json"
    payload = {"benchmark": name, "taken_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    path.write_text(json.dumps({**payload, **data}, indent=2, default=str) + "\n")
    return path


def run_async(main: Callable[[], Awaitable[T]]) -> T:
    """``asyncio.run`` for a benchmark's entry point."""
    return asyncio.run(_wrap(main()))


def gaps(
    labelled: Sequence[tuple[str, float, float]], start: float, end: float, min_s: float = 0.002
) -> list[dict[str, Any]]:
    """Stretches of the run in which no model or tool call was in flight (orchestration).

    Each gap names the call that ended before it and the one that started after it.
    """
    out: list[dict[str, Any]] = []
    covered_until, last = start, "run start"
    for label, s, e in sorted(labelled, key=lambda x: x[1]):
        if s - covered_until >= min_s:
            out.append({"after": last, "before": label, "ms": round((s - covered_until) * 1000, 1)})
        if e > covered_until:
            covered_until, last = e, label
    if end - covered_until >= min_s:
        out.append(
            {"after": last, "before": "run end", "ms": round((end - covered_until) * 1000, 1)}
        )
    return out


async def clear_intel_cache(rt: Runtime) -> None:
    """Forget cached threat-intel answers, so every run pays the lookup latency."""
    from sqlalchemy import delete

    from store.schema import IntelCache

    async with rt.db.session() as session:
        await session.execute(delete(IntelCache))


class TraceTimer:
    """Measures (or, for a diagnostic variant, skips) the trace recorder's SQLite writes.

    The recorder writes in the background, so this time overlaps the run: it is
    reported to show what the engine no longer waits for.
    """

    def __init__(self, rt: Runtime, *, disabled: bool = False) -> None:
        self.spent: list[float] = []
        inner = rt.investigations.append_events

        async def append_events(events: list[tuple[str, str, dict[str, Any]]]) -> None:
            start = time.monotonic()
            try:
                if not disabled:
                    await inner(events)
            finally:
                self.spent.append(time.monotonic() - start)

        rt.investigations.append_events = append_events  # type: ignore[method-assign]


def on_each_database(
    name: str, measure: Callable[[str], Coroutine[Any, Any, T]], only: str | None = None
) -> dict[str, T]:
    """``measure(url)`` on a new SQLite file, then on a new PostgreSQL database ``name``
    (a server of its own, stopped after); ``only`` ("sqlite" or "postgresql"): that one."""
    from tests import pg_server  # the server only when PostgreSQL is measured

    result: dict[str, T] = {}
    if only != "postgresql":
        with tempfile.TemporaryDirectory() as folder:
            result["sqlite"] = asyncio.run(
                measure(f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}")
            )
    if only != "sqlite":
        server = pg_server.start()
        try:
            result["postgresql"] = asyncio.run(measure(server.create_database(name)))
        finally:
            server.stop()
    return result
