"""Start-up benchmark (issue 12): how long ``socbot`` takes before it does anything.

::

    .venv/bin/python -m bench.bench_cli --runs 5      # ~1 min

Each command runs as a fresh process (``.venv/bin/socbot``), several times; the
median wall time is reported (and the CPU time of the process, which a loaded
machine disturbs less). ``investigate`` is timed from the process start to the
first request the fake Gemini server (``bench.fake_gemini``, reached through
``SOCBOT_GEMINI_BASE_URL``) receives, then left to finish; its first run creates the
database and is reported apart (the others find it migrated). Python's bytecode cache
matters a lot (``PYTHONDONTWRITEBYTECODE`` with no ``__pycache__`` compiles every
module on every start): the result says whether it was present.

Writes ``var/bench/cli_startup.json`` (``SOCBOT_BENCH_RESULTS`` to change).
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
from pathlib import Path
from typing import Any

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


async def time_investigate(runs: int, tmp: Path) -> dict[str, Any]:
    """Median seconds from the process start to the fake Gemini's first request.

    The first run creates and migrates the database; the measured runs find it at the
    newest revision, as every start after the first does.
    """
    fake = FakeGemini(scripts.chain(2), latency_s=0.01)  # log tools only: no intel needed
    base_url = await fake.start()
    env = _env(tmp, base_url)
    firsts, totals, cpus = [], [], []
    try:
        for _ in range(runs + 1):
            fake.reset()
            cpu0, start = _children_cpu_s(), time.monotonic()
            process = await asyncio.create_subprocess_exec(
                str(SOCBOT), "investigate", "-q", str(ALERT), env=env, cwd=REPO,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
            )  # fmt: skip
            await process.wait()
            totals.append(time.monotonic() - start)
            cpus.append(_children_cpu_s() - cpu0)
            if not fake.calls:
                raise RuntimeError("socbot investigate made no model request")
            firsts.append(min(c.start for c in fake.calls) - start)
    finally:
        await fake.stop()
    return {
        "new_database_to_first_request_s": firsts.pop(0),
        "median_to_first_request_s": statistics.median(firsts),
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
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for name in ("--help", "--version", "tools list"):
            results[name] = time_command(name.split(), runs, tmp)
        results["investigate"] = asyncio.run(time_investigate(runs, tmp))
    return results


def _rows(results: dict[str, Any]) -> list[list[object]]:
    rows: list[list[object]] = []
    for name, target in TARGETS_S.items():
        r = results[name]
        wall = r.get("median_wall_s", r.get("median_to_first_request_s"))
        rows.append(
            [name, wall, r.get("median_cpu_s", "-"), target, "yes" if wall < target else "NO"]
        )
    first = results["investigate"]["new_database_to_first_request_s"]
    rows.append(["investigate (new database, 1 run)", first, "-", "-", "-"])
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per command (median)")
    args = parser.parse_args()
    out = main(args.runs)
    header = ["command", "median wall s", "median cpu s", "target s", "met"]
    print_table("socbot start-up", _rows(out), header)
    print(f"bytecode cached: {out['bytecode_cached']}")
    print(f"wrote {write_json('cli_startup', out)}")
