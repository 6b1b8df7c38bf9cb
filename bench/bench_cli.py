"""Start-up benchmark (issue 12): how long ``socbot`` takes before it does anything.

::

    .venv/bin/python -m bench.bench_cli --runs 5      # ~1 min

Each command runs as a fresh process (``.venv/bin/socbot``), several times; the
median wall time is reported (and the CPU time of the process, which a loaded
machine disturbs less). ``investigate`` is timed from the process start to the
first request the fake Gemini server (``bench.fake_gemini``, reached through
``SOCBOT_GEMINI_BASE_URL``) receives, then left to finish; its first run creates the
database and is reported apart (the others find it migrated). The CPU seconds the
process had used when that request arrived (``/proc/PID/stat``, Linux) are reported
too: on a loaded machine they move much less than the wall time. The load average
before and after is recorded beside the figures. Python's bytecode cache
matters a lot (``PYTHONDONTWRITEBYTECODE`` with no ``__pycache__`` compiles every
module on every start): the result says whether it was present.

``--compare TREE...`` times only ``investigate``, from each source tree in turn (its
``cli.main`` entry point on this virtualenv), runs interleaved so that every tree sees
the same load: an A/B of a change, e.g. ``--compare . /tmp/main-worktree``.

Writes ``var/bench/cli_startup.json`` (``cli_startup_compare.json``;
``SOCBOT_BENCH_RESULTS`` to change).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

from bench import scripts
from bench.common import REPO, print_table, write_json
from bench.fake_gemini import FakeGemini

SOCBOT = Path(sys.executable).with_name("socbot")
ALERT = REPO / "examples" / "alerts" / "leveret-scc.json"
TARGETS_S = {"--help": 0.3, "--version": 0.3, "tools list": 1.5, "investigate": 2.0}


def _env(tmp: Path, base_url: str = "") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOCBOT_", "GEMINI_"))}
    env["SOCBOT_DATABASE_URL"] = f"sqlite:///{tmp / 'socbot.db'}"
    env["SOCBOT_CHAT_HISTORY_FILE"] = ""
    if base_url:
        env["SOCBOT_GEMINI_BASE_URL"] = base_url
        env["GEMINI_API_KEY"] = "bench-not-a-real-key"
    return env


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds process ``pid`` has used so far (None off Linux)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state is fields[0]
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _FirstRequestCPU(FakeGemini):
    """The fake Gemini, noting the CPU time of the ``socbot`` process at its first request."""

    pid: int = 0
    cpu_at_first_request: float | None = None

    async def _serve(self, request: web.Request) -> web.Response:
        if self.pid and self.cpu_at_first_request is None:
            self.cpu_at_first_request = process_cpu_s(self.pid)
        return await super()._serve(request)


def time_command(args: list[str], runs: int, tmp: Path) -> dict[str, Any]:
    """Median wall and CPU seconds of ``socbot ARGS`` to its exit."""
    walls, cpus = [], []
    for _ in range(runs):
        cpu0, start = _children_cpu_s(), time.monotonic()
        subprocess.run(
            [str(SOCBOT), *args], env=_env(tmp), cwd=REPO, capture_output=True, check=True
        )
        walls.append(time.monotonic() - start)
        cpus.append(_children_cpu_s() - cpu0)
    return {"median_wall_s": statistics.median(walls), "median_cpu_s": statistics.median(cpus)}


def _launch(tree: Path | None) -> list[str]:
    """``socbot`` itself, or (to compare trees) ``tree``'s entry point on this venv."""
    if tree is None:
        return [str(SOCBOT)]
    entry = (
        "import sys, cli.main as m; sys.argv[0] = 'socbot'; sys.exit(getattr(m, 'run', m.app)())"
    )
    return [sys.executable, "-c", entry]


async def time_investigate(
    runs: int, tmp: Path, trees: Sequence[Path | None] = (None,)
) -> list[dict[str, Any]]:
    """Median seconds from the process start to the fake Gemini's first request.

    The first run creates and migrates the database; the measured runs find it at the
    newest revision, as every start after the first does. Several ``trees`` (source
    checkouts, ``None``: this one's ``socbot``) run in turn against one fake, under the
    same load; one result each.
    """
    fake = _FirstRequestCPU(scripts.chain(2), latency_s=0.01)  # log tools only: no intel
    env = _env(tmp, await fake.start())
    firsts: list[list[float]] = [[] for _ in trees]
    totals: list[list[float]] = [[] for _ in trees]
    cpus: list[list[float]] = [[] for _ in trees]
    first_cpus: list[list[float | None]] = [[] for _ in trees]
    try:
        for _ in range(runs + 1):
            for i, tree in enumerate(trees):
                fake.reset()
                fake.cpu_at_first_request = None
                cpu0, start = _children_cpu_s(), time.monotonic()
                process = await asyncio.create_subprocess_exec(
                    *_launch(tree), "investigate", "-q", str(ALERT), cwd=tree or REPO,
                    env=dict(env, PYTHONPATH=str(tree)) if tree else env,
                    stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
                )  # fmt: skip
                fake.pid = process.pid
                await process.wait()
                totals[i].append(time.monotonic() - start)
                cpus[i].append(_children_cpu_s() - cpu0)
                if not fake.calls:
                    raise RuntimeError(f"socbot investigate ({tree or REPO}) made no model request")
                firsts[i].append(min(c.start for c in fake.calls) - start)
                first_cpus[i].append(fake.cpu_at_first_request)
    finally:
        await fake.stop()
    return [_medians(firsts[i], first_cpus[i], totals[i], cpus[i]) for i in range(len(trees))]


def _medians(
    firsts: list[float], first_cpus: list[float | None], totals: list[float], cpus: list[float]
) -> dict[str, Any]:
    measured = [c for c in first_cpus[1:] if c is not None]
    return {
        "new_database_to_first_request_s": firsts[0],
        "median_to_first_request_s": statistics.median(firsts[1:]),
        "median_cpu_to_first_request_s": statistics.median(measured) if measured else None,
        "median_whole_run_s": statistics.median(totals[1:]),
        "median_cpu_s": statistics.median(cpus[1:]),  # of the whole run
    }


def bytecode_cached() -> dict[str, bool]:
    """Whether compiled bytecode is there to load: for the dependencies and for socbot."""
    import google.genai

    return {
        "dependencies": any(Path(google.genai.__file__).parent.glob("__pycache__/*.pyc")),
        "socbot": any((REPO / "agent").glob("__pycache__/*.pyc")),
    }


def main(runs: int) -> dict[str, Any]:
    results: dict[str, Any] = {"runs": runs, "bytecode_cached": bytecode_cached()}
    results["loadavg_before"] = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for name in ("--help", "--version", "tools list"):
            results[name] = time_command(name.split(), runs, tmp)
        [results["investigate"]] = asyncio.run(time_investigate(runs, tmp))
    results["loadavg_after"] = os.getloadavg()
    return results


def compare(runs: int, trees: list[Path]) -> dict[str, Any]:
    """``investigate``'s start in each source tree, runs interleaved (an A/B under one load)."""
    results: dict[str, Any] = {"runs": runs, "loadavg_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as folder:
        measured = asyncio.run(time_investigate(runs, Path(folder), trees))
    results["investigate"] = dict(zip(map(str, trees), measured, strict=True))
    results["loadavg_after"] = os.getloadavg()
    return results


def _rows(results: dict[str, Any]) -> list[list[object]]:
    rows: list[list[object]] = []
    for name in ("--help", "--version", "tools list"):
        r, target = results[name], TARGETS_S[name]
        met = "yes" if r["median_wall_s"] < target else "NO"
        rows.append([name, r["median_wall_s"], r["median_cpu_s"], target, met])
    r, target = results["investigate"], TARGETS_S["investigate"]
    wall, cpu = r["median_to_first_request_s"], r["median_cpu_to_first_request_s"]
    met = "yes" if wall < target else "NO"
    rows.append(["investigate, to the first request", wall, cpu or "-", target, met])
    rows.append(["  new database (1 run)", r["new_database_to_first_request_s"], "-", "-", "-"])
    rows.append(["  whole run", r["median_whole_run_s"], r["median_cpu_s"], "-", "-"])
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per command (median)")
    parser.add_argument(
        "--compare", type=Path, nargs="+", metavar="TREE",
        help="only investigate, in each source tree (e.g. . and a worktree of main)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.compare:
        out = compare(args.runs, [tree.resolve() for tree in args.compare])
        rows = [
            [tree, r["median_to_first_request_s"], r["median_cpu_to_first_request_s"] or "-"]
            for tree, r in out["investigate"].items()
        ]
        print_table("investigate, to the first request", rows, ["tree", "wall s", "cpu s"])
    else:
        out = main(args.runs)
        header = ["command", "median wall s", "median cpu s", "target s", "met"]
        print_table("socbot start-up", _rows(out), header)
        print(f"bytecode cached: {out['bytecode_cached']}")
    load = " → ".join(
        ", ".join(f"{x:.2f}" for x in out[k]) for k in ("loadavg_before", "loadavg_after")
    )
    print(f"load average (1, 5, 15 min) before → after: {load}")
    print(f"wrote {write_json('cli_startup_compare' if args.compare else 'cli_startup', out)}")
