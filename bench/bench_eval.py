"""The eval harness's own speed: the default pack at --concurrency 4, 300 ms per model call.

::

    .venv/bin/python -m bench.bench_eval [--pack core] [--concurrency 4] [--latency 0.3]

**Pack load**: ``load_pack`` (every scenario.toml, alert and table checked), the first
time and the best of three more; the pack's size on disk.

The model is the scripted eval model (``tests/fakes/eval_model.py``: each call sleeps
``--latency``; the google-genai client is not in the loop), behind a wrapper that
records each call's interval under the attempt it belongs to (``evals.recording.ATTEMPT``);
tool calls are timed the same way around ``ToolRegistry.dispatch``. A scenario's
**critical path** is the union of its model and tool intervals; the target is
``wall <= 1.15 x sum(critical paths) / concurrency`` (the harness keeps every slot
busy). ``wall`` is the whole ``run_eval`` (runtime opened, schema migrated, closed);
``span`` runs from the first model call to the last, without that fixed cost. The
scorer's time per scenario is the report built from the run's attempts
(``evals.report.report``: every gate and the summary), repeated, divided by the
scenarios (target <= 50 ms). Writes ``<results>/eval.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from google.genai import types

from bench.common import print_table, union_length, write_json
from cli.eval.run import run_eval
from config.settings import Settings
from evals.recording import ATTEMPT
from evals.report import report
from evals.results import RunFolder
from evals.scenario import load_pack, pack_folder
from tests.fakes.eval_model import KINDS, Answer, eval_model
from tools.base import ToolRegistry, ToolResult

Intervals = dict[str, list[tuple[float, float]]]


class TimedModel:
    """Records every call's (start, end) under its attempt, then answers from ``inner``."""

    def __init__(self, inner: Any, intervals: Intervals) -> None:
        self.inner = inner
        self.intervals = intervals

    async def generate_content(
        self, *, model: str, contents: list[types.Content], config: types.GenerateContentConfig
    ) -> types.GenerateContentResponse:
        start = time.monotonic()
        try:
            return await self.inner.generate_content(model=model, contents=contents, config=config)  # type: ignore[no-any-return]
        finally:
            self.intervals[ATTEMPT.get()].append((start, time.monotonic()))


@contextmanager
def time_tools(intervals: Intervals) -> Iterator[None]:
    """Wrap ``ToolRegistry.dispatch`` (every registry) to record tool intervals."""
    inner = ToolRegistry.dispatch

    async def dispatch(self: ToolRegistry, *args: Any, **kwargs: Any) -> ToolResult:
        start = time.monotonic()
        try:
            return await inner(self, *args, **kwargs)
        finally:
            intervals[ATTEMPT.get()].append((start, time.monotonic()))

    ToolRegistry.dispatch = dispatch  # type: ignore[method-assign]
    try:
        yield
    finally:
        ToolRegistry.dispatch = inner  # type: ignore[method-assign]


def load_times(pack_name: str | None, only: str | None) -> dict[str, Any]:
    """How long the pack takes to load (first, best of three more), and its size."""
    times = []
    for _ in range(4):
        t0 = time.perf_counter()
        load_pack(pack_name, only)
        times.append(time.perf_counter() - t0)
    folder = pack_folder(pack_name)
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    return {
        "pack": folder.name,
        "pack_load_first_s": round(times[0], 3),
        "pack_load_best_s": round(min(times[1:]), 3),
        "pack_mb": round(size / 1e6, 2),
    }


@contextmanager
def count_runtimes() -> Iterator[list[int]]:
    """Count the runtimes ``run_eval`` opens (``cli.runtime.open_runtime``)."""
    import cli.eval.run as module

    inner, opened = getattr(module, "open_runtime"), [0]  # noqa: B009

    def counted(*args: Any, **kwargs: Any) -> Any:
        opened[0] += 1
        return inner(*args, **kwargs)

    setattr(module, "open_runtime", counted)  # noqa: B010
    try:
        yield opened
    finally:
        setattr(module, "open_runtime", inner)  # noqa: B010


async def run(
    concurrency: int,
    latency: float,
    tmp: Path,
    only: str | None = None,
    pack_name: str | None = None,
) -> dict[str, Any]:
    loading = load_times(pack_name, only)
    pack = load_pack(pack_name, only)
    answers = {s.id: Answer(KINDS[i % len(KINDS)]) for i, s in enumerate(pack)}
    calls: Intervals = defaultdict(list)
    tools: Intervals = defaultdict(list)
    model = TimedModel(eval_model(pack, answers, delay=latency), calls)
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp / 'eval.db'}")
    folder = RunFolder(tmp / "run")
    started = time.monotonic()
    cpu_before = _cpu_s()
    with time_tools(tools), count_runtimes() as opened:
        work = [(s, 0) for s in pack]
        await run_eval(settings, work, folder, backend=model, concurrency=concurrency)
    wall = time.monotonic() - started
    cpu = _cpu_s() - cpu_before
    critical = {key: union_length([*spans, *tools[key]]) for key, spans in calls.items()}
    every = [span for spans in (*calls.values(), *tools.values()) for span in spans]
    span = max(e for _, e in every) - min(s for s, _ in every)
    ideal = sum(critical.values()) / concurrency
    attempts = folder.attempts()
    rounds = 20
    t0 = time.perf_counter()
    for _ in range(rounds):
        report(pack, attempts)
    scorer_ms = (time.perf_counter() - t0) * 1000 / rounds / len(pack)
    latencies = [a.latency_s for a in attempts]
    return {
        **loading,
        "runtimes_opened": opened[0],  # target 1: one runtime for every attempt
        "scenarios": len(pack),
        "concurrency": concurrency,
        "latency_per_call_s": latency,
        "wall_s": round(wall, 3),
        "sum_critical_paths_s": round(sum(critical.values()), 3),
        "ideal_s": round(ideal, 3),
        "wall_over_ideal": round(wall / ideal, 4),
        "span_s": round(span, 3),
        "span_over_ideal": round(span / ideal, 4),
        "target_wall_over_ideal": 1.15,
        "mean_attempt_latency_s": round(sum(latencies) / len(latencies), 3),
        "mean_critical_path_s": round(sum(critical.values()) / len(critical), 3),
        "model_calls": sum(a.calls for a in attempts),
        "tool_calls": sum(len(spans) for spans in tools.values()),
        "scorer_ms_per_scenario": round(scorer_ms, 3),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpu_s": round(cpu, 2),
        "cpu_s_per_scenario": round(cpu / len(pack), 3),
        "target_scorer_ms_per_scenario": 50,
    }


def _cpu_s() -> float:
    """CPU seconds of this process and its finished children (the DuckDB workers)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--only", help="scenario ids matching these patterns")
    parser.add_argument("--pack", help="a bundled pack or a folder (default: the default pack)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = asyncio.run(run(args.concurrency, args.latency, Path(tmp), args.only, args.pack))
    print_table(
        f"eval pack, concurrency {out['concurrency']}, {out['latency_per_call_s']} s per call",
        [
            ["pack (MB on disk)", f"{out['pack']} ({out['pack_mb']})"],
            [
                "pack load s: first · best of 3",
                f"{out['pack_load_first_s']} · {out['pack_load_best_s']}",
            ],
            ["scenarios · runtimes opened", f"{out['scenarios']} · {out['runtimes_opened']}"],
            ["wall s", out["wall_s"]],
            ["sum of critical paths / concurrency s", out["ideal_s"]],
            ["wall / ideal (target <= 1.15)", out["wall_over_ideal"]],
            ["span: first call to last s", out["span_s"]],
            ["span / ideal", out["span_over_ideal"]],
            ["mean critical path s", out["mean_critical_path_s"]],
            ["mean attempt latency s", out["mean_attempt_latency_s"]],
            ["scorer ms per scenario (target <= 50)", out["scorer_ms_per_scenario"]],
            ["CPU s per scenario (socbot + DuckDB workers)", out["cpu_s_per_scenario"]],
            ["load average (1 min)", out["load_average_1m"]],
        ],
        ["figure", "value"],
    )
    print(f"written: {write_json('eval', out)}")


if __name__ == "__main__":
    main()
