"""bench_home: what reading one App Home costs the database over 100,000 cases (SQLite).

    python3 -m uv run python -m bench.bench_home [--cases 100000] [--runs 30]

The cases are ``bench.bench_quality``'s invented population (30 days, 10 % open, one
channel), stored in bulk. Measured, ``runs`` times each: ``channels_with_cases`` (the
channels worth asking Slack about) and ``home_data`` (the person's open cases, unowned
high/critical cases, this week's verdicts, the queue, this week's agreement and cost) —
what ``bot.events.home.AppHome.view`` reads besides Slack's channel members, which are
cached a minute. Results: ``var/bench/bench_home.json``, with the 1-minute load average
(2 shared cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from random import Random
from typing import Any

from bench.bench_quality import population
from bench.bench_web import summary
from bench.common import RESULTS
from store.cases.home import channels_with_cases, home_data
from store.db.engine import Database
from tests.store.cases.quality_rows import store

USER, CHANNEL = "U0ANALYST", "CALERTS1"  # the owner and channel of quality_rows' cases


async def measure(url: str, cases: int, runs: int) -> dict[str, Any]:
    db = Database(url)
    await db.create()
    now, rng = datetime.now(UTC), Random(7)
    found, times = population(cases, now)
    await store(
        db,
        found,
        at=times.__getitem__,
        ack_s=lambda k: rng.uniform(60, 4 * 3600),
        resolve_s=lambda k: rng.uniform(4 * 3600, 72 * 3600),
    )
    out: dict[str, Any] = {"cases": cases, "load_average_1m": round(os.getloadavg()[0], 2)}
    for name, read in (
        ("channels_with_cases", lambda: channels_with_cases(db)),
        ("home_data", lambda: home_data(db, USER, [CHANNEL])),
    ):
        walls = []
        for _ in range(runs):
            began = time.perf_counter()
            await read()
            walls.append((time.perf_counter() - began) * 1000)
        out[name] = {**summary(walls), "max_ms": round(max(walls), 1)}
    data = await home_data(db, USER, [CHANNEL])
    out["shown"] = {
        "mine": len(data.mine),
        "unowned": len(data.unowned),
        "verdicts": len(data.verdicts),
        "week_cases": data.week.cases,
    }
    await db.close()
    out["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}"
        result = {"sqlite": asyncio.run(measure(url, args.cases, args.runs))}
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_home.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
