"""bench_home: one App Home render over 100,000 cases, on SQLite and PostgreSQL.

    python3 -m uv run python -m bench.bench_home [--cases 100000] [--runs 40] [--only sqlite]

For each database ``cases`` invented cases and their runs are inserted in bulk
(``tests/store/cases/listed_rows.py``, ``bench.bench_cases_page``'s population: 20
channels, 15 analysts, 70 % resolved, 18 % open without an owner, 12 % acknowledged),
spread over the last 30 days (about 23,000 in "this week"), with a work queue of 3,000
finished rows and 60 queued, 10 running and 30 held by policy. Timed ``runs`` times
after two warm-ups: ``bot.events.home.AppHome.view`` whole — the candidate channels, the
person's own cases' channels, every section, the queue and the week's figures — for an
analyst who is a member of 5 of the 20 channels (``member_of_5``) and of all 20
(``member_of_20``: the week's figures over every case of the week), and one who is a
member of none (``member_of_none``). Slack's channel members come from a local stand-in
(the cache, as after the first minute); what is timed is the database and the view.
``cpu_p50_ms`` is this process's CPU per render, which load does not inflate. Target:
p95 ≤ 150 ms. Results: ``var/bench/bench_home.json``, with the 1-minute load average
(2 shared cores).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from random import Random
from typing import Any

from sqlalchemy import insert, text

from bench.bench_cases_page import ANALYSTS, CHANNELS, population, timed
from bench.common import RESULTS, on_each_database
from bot.events.home import AppHome
from bot.slack.members import ChannelMembers
from config.settings import Settings
from store.db.engine import Database
from store.schema import WorkKind, WorkRow, WorkState
from tests.store.cases.listed_rows import START, store

DAYS = 30
QUEUE = (
    (WorkKind.ALERT, WorkState.DONE, 3000),
    (WorkKind.ALERT, WorkState.QUEUED, 60),
    (WorkKind.ALERT, WorkState.RUNNING, 10),
    (WorkKind.POLICY_DEFERRED, WorkState.QUEUED, 30),
)


class Members:
    """``conversations.members`` as a local stand-in: ``ANALYSTS[0]`` in the first five
    channels, ``ANALYSTS[1]`` in all twenty."""

    async def conversations_members(self, channel: str, **_: Any) -> dict[str, Any]:
        first = CHANNELS.index(channel) < 5 if channel in CHANNELS else False
        return {"ok": True, "members": [ANALYSTS[1], *([ANALYSTS[0]] if first else [])]}


def recent(n: int, now: datetime) -> list[Any]:
    """``bench_cases_page``'s population, opened within the last ``DAYS`` days."""
    rng, base = Random(5), (now - timedelta(days=DAYS) - START).total_seconds() / 60
    return [replace(s, minutes=base + rng.uniform(0, DAYS * 1440)) for s in population(n)]


async def queue(db: Database, now: datetime) -> None:
    rows = [
        {
            "kind": kind,
            "state": state,
            "priority": 1,
            "thread": f"slack:{CHANNELS[k % 20]}:{1_700_000_000 + k}.{kind}{state}",
            "channel": CHANNELS[k % 20],
            "thread_ts": f"{1_700_000_000 + k}.000200",
            "request": {},
            "attempts": 0,
            "stop_requested": False,
            "posted": {},
            "not_before": now,
            "created_at": now,
        }
        for kind, state, count in QUEUE
        for k in range(count)
    ]
    async with db.session() as session:
        await session.execute(insert(WorkRow), rows)


async def measure(url: str, cases: int, runs: int) -> dict[str, Any]:
    db = Database(url)
    await db.create()
    now = datetime.now(UTC)
    began = time.perf_counter()
    await store(db, recent(cases, now))
    await queue(db, now)
    if not db.is_sqlite:  # what autovacuum does after a bulk load
        async with db.engine.connect() as conn:
            conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(text("VACUUM ANALYZE cases"))
            await conn.execute(text("VACUUM ANALYZE work"))
    out: dict[str, Any] = {"cases": cases, "fill_s": round(time.perf_counter() - began, 1)}
    out["load_average_1m"] = round(os.getloadavg()[0], 2)
    settings = Settings(database_url=url)
    settings = settings.model_copy(
        update={"slack": settings.slack.model_copy(update={"alert_channels": CHANNELS})}
    )
    members = ChannelMembers(Members(), cache_s=3600)  # type: ignore[arg-type]
    home = AppHome(db, settings, members, Members())  # type: ignore[arg-type]
    for name, user in (
        ("member_of_5", ANALYSTS[0]),
        ("member_of_20", ANALYSTS[1]),
        ("member_of_none", "U0NOBODY"),
    ):
        out[name] = await timed(lambda user=user: home.view(user), runs)  # type: ignore[misc]
    shown = str(await home.view(ANALYSTS[1]))
    out["shown_member_of_20"] = shown.count("home_take"), "held by policy" in shown
    await db.close()
    out["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--only", choices=("sqlite", "postgresql"))
    args = parser.parse_args()
    result = on_each_database(
        "bench_home", lambda url: measure(url, args.cases, args.runs), args.only
    )
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_home.json").write_text(json.dumps(result, indent=2) + "\n")
    ok = all(v["p95_ms"] <= 150 for r in result.values() for v in r.values() if isinstance(v, dict))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
