"""One SQLite file, many writers (issue 13): ``socbot serve`` answering a burst of
mentions while ``socbot investigate`` processes run on the same file.

::

    .venv/bin/python -m bench.bench_writers                  # 40 mentions + 4 terminals
    .venv/bin/python -m bench.bench_writers --mentions 40 --terminals 4

socbot serves in HTTP mode in this process (``bench.bench_slack.serving``: the real
app, coordinator and engine, Web API and Gemini faked on 127.0.0.1). The mentions
are POSTed at once (each a full three-step investigation); the terminal runs are
real ``socbot investigate`` processes on the same database file, their Gemini a
second fake. Measured: conclusions posted in the mentions' threads (each thread's
count, so a duplicate shows), terminal runs that exited 0 and are stored, "database
is locked" in socbot's log and the terminals' stderr, and the wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from bench import scripts
from bench.bench_slack import mention_event, paced_posts, serving, signed
from bench.common import LoopThread, print_table, run_async, write_json
from bench.fake_gemini import FakeGemini
from store.db.engine import Database
from store.schema import Investigation, WorkRow

REPO = Path(__file__).resolve().parent.parent
SOCBOT = Path(sys.executable).with_name("socbot")
ALERT = REPO / "examples" / "alerts" / "leveret-scc.json"
CONCLUDED = "A password spray from"  # bench.scripts.CONCLUSION's summary, as posted
LOCKED = "database is locked"
CHANNELS = tuple(f"CSOC{n:05d}" for n in range(4))  # 10 each: under max_queued_per_channel


class LockedLog(logging.Handler):
    """Counts log records (and their exceptions) that say the database was locked."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage() + (str(record.exc_info[1]) if record.exc_info else "")
        self.count += LOCKED in text


def terminal_env(db_path: Path, gemini_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOCBOT_", "GEMINI_"))}
    env["SOCBOT_DATABASE_URL"] = f"sqlite+aiosqlite:///{db_path}"
    env["SOCBOT_CHAT_HISTORY_FILE"] = ""
    env["SOCBOT_GEMINI_BASE_URL"] = gemini_url
    env["GEMINI_API_KEY"] = "bench-not-a-real-key"
    return env


async def terminal(env: dict[str, str]) -> tuple[int, str, str]:
    """One ``socbot investigate`` process: (exit code, its stderr, the investigation id)."""
    process = await asyncio.create_subprocess_exec(
        str(SOCBOT), "investigate", "-q", "--json", str(ALERT), env=env, cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    investigation = ""
    if process.returncode == 0:
        investigation = str(json.loads(out).get("investigation_id", ""))
    return (process.returncode or 0), err.decode(errors="replace"), investigation


async def run(mentions: int, terminals: int, latency_s: float, wait_s: float) -> dict[str, Any]:
    locked = LockedLog()
    logging.getLogger().addHandler(locked)
    load = LoopThread("bench-load")
    gemini = FakeGemini(scripts.chain(2), latency_s=0.01)  # the terminals' model
    gemini_url = await gemini.start()
    try:
        with tempfile.TemporaryDirectory(prefix="socbot-bench-") as d:
            async with serving(Path(d), latency_s) as (
                url,
                _rem,
                slack,
                db_path,
            ):
                run_id = uuid.uuid4().hex[:6]
                events = [_mention(i, run_id) for i in range(mentions)]
                bodies = [(body, signed(body)) for body in events]
                started = time.monotonic()
                env = terminal_env(db_path, gemini_url)
                runs = [asyncio.create_task(terminal(env)) for _ in range(terminals)]
                acks = await load.run(paced_posts(f"{url}/slack/events", bodies, 1000.0))
                ended = await asyncio.gather(*runs)
                threads = {f"{1_700_000_000 + i}.{i:06d}" for i in range(mentions)}
                deadline = time.monotonic() + wait_s
                while time.monotonic() < deadline:
                    posted = _conclusions(slack.calls, threads)
                    if sum(posted.values()) >= mentions and await _settled(db_path):
                        break
                    await asyncio.sleep(0.25)
                elapsed = time.monotonic() - started
                posted = _conclusions(slack.calls, threads)
                stored, work = await _database(db_path, [inv for _, _, inv in ended if inv])
    finally:
        await gemini.stop()
        load.close()
        logging.getLogger().removeHandler(locked)
    terminal_locked = sum(err.count(LOCKED) for _, err, _ in ended)
    out = {
        "mentions": mentions,
        "acks": dict(Counter(a[1] for a in acks)),
        "threads_with_a_conclusion": len(posted),
        "duplicate_conclusions": sum(n - 1 for n in posted.values() if n > 1),
        "terminal_runs": terminals,
        "terminal_exit_codes": dict(Counter(code for code, _, _ in ended)),
        "terminal_runs_stored": stored,
        "database_locked_in_serve_log": locked.count,
        "database_locked_in_terminals": terminal_locked,
        "work_rows": work,
        "seconds": round(elapsed, 1),
        "model_latency_s": latency_s,
    }
    out["met"] = (
        out["threads_with_a_conclusion"] == mentions
        and out["duplicate_conclusions"] == 0
        and stored == terminals
        and locked.count == terminal_locked == 0
    )
    print_table(
        f"{mentions} mentions + {terminals} terminal runs on one SQLite file",
        [[k, v] for k, v in out.items()],
        ["figure", "value"],
    )
    return out


def _mention(i: int, run_id: str) -> str:
    """A mention from its own analyst in one of ``CHANNELS`` (within the queue limits)."""
    event = json.loads(mention_event(i, run_id, CHANNELS[i % len(CHANNELS)]))
    event["event"]["user"] = f"UANALYST{i:03d}"
    return json.dumps(event)


def _conclusions(calls: list[Any], threads: set[str]) -> Counter[str]:
    found: Counter[str] = Counter()
    for call in list(calls):
        ts = call.args.get("thread_ts")
        if call.method == "chat.postMessage" and call.status == 200 and ts in threads:
            if call.args.get("channel") in CHANNELS and CONCLUDED in json.dumps(
                call.args.get("blocks")
            ):
                found[str(ts)] += 1
    return found


async def _settled(db_path: Path) -> bool:
    _stored, work = await _database(db_path, [])
    return not (work.get("queued") or work.get("running"))


async def _database(db_path: Path, investigations: list[str]) -> tuple[int, dict[str, int]]:
    db = Database(f"sqlite+aiosqlite:///{db_path}")
    try:
        async with db.session() as session:
            stored = await session.scalar(
                select(func.count()).where(Investigation.id.in_(investigations))
            )
            rows = await session.execute(
                select(WorkRow.state, func.count()).group_by(WorkRow.state)
            )
            return int(stored or 0), {state: int(n) for state, n in rows}
    finally:
        await db.close()


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mentions", type=int, default=40)
    parser.add_argument("--terminals", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per model call")
    parser.add_argument("--wait", type=float, default=180.0, help="upper bound for the end")
    args = parser.parse_args()
    result = run_async(lambda: run(args.mentions, args.terminals, args.latency, args.wait))
    write_json("sqlite_writers", result)


if __name__ == "__main__":
    cli()
