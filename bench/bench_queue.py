"""The work queue on real PostgreSQL with 1, 2 and 3 replicas (separate processes).

Each replica process runs a claim loop like the worker's (``WorkQueue.claim`` with
its free slots, ``finish`` when done) over rows that "investigate" for ``WORK_S``
seconds. Measured: rows per minute, claim latency (one ``claim`` call) p50/p99,
rows run twice (must be 0), and the takeover time after ``kill -9`` of the replica
holding a row (lease ``LEASE_S``; the other replica's next claim after expiry).

    uv run python -m bench.bench_queue      # writes bench/results/queue.json
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import signal
import statistics
import sys
import time
from pathlib import Path

from store.db.engine import Database
from store.queue.work import Job, QueueLimits, WorkQueue
from tests import pg_server

ROWS = 120
WORK_S = 0.05
SLOTS = 3  # per replica
LEASE_S = 2.0
RESULTS = Path(__file__).parent / "results" / "queue.json"


async def _replica(url: str, name: str, out: str) -> None:
    db = Database(url)
    queue = WorkQueue(db, QueueLimits(running=SLOTS * 3), lease_s=LEASE_S)
    latencies: list[float] = []
    ran: list[int] = []
    running: set[asyncio.Task[None]] = set()

    async def run(work_id: int) -> None:
        await asyncio.sleep(WORK_S)
        await queue.finish(work_id, name, "done")

    idle = 0
    while idle < 20:
        started = time.perf_counter()
        claimed = await queue.claim(name, SLOTS - len(running))
        latencies.append(time.perf_counter() - started)
        idle = 0 if claimed.started or running else idle + 1
        for work in claimed.started:
            ran.append(work.id)
            task = asyncio.create_task(run(work.id))
            running.add(task)
            task.add_done_callback(running.discard)
        await asyncio.sleep(0.01)
    await asyncio.to_thread(Path(out).write_text, json.dumps({"latencies": latencies, "ran": ran}))
    await db.close()


def _replica_main(url: str, name: str, out: str) -> None:
    asyncio.run(_replica(url, name, out))


async def _fill(url: str, rows: int) -> None:
    db = Database(url)
    await db.create()
    queue = WorkQueue(db, QueueLimits(queued_per_channel=rows, queued_per_user=rows))
    for i in range(rows):
        await queue.submit(Job("mention", f"C{i % 7}", f"{i}.0", "q", requester=f"U{i % 11}"))
    await db.close()


def throughput(server: pg_server.PostgresServer, replicas: int, folder: Path) -> dict[str, float]:
    url = server.create_database(f"bench_{replicas}")
    asyncio.run(_fill(url, ROWS))
    outs = [str(folder / f"r{replicas}_{i}.json") for i in range(replicas)]
    started = time.perf_counter()
    procs = [
        multiprocessing.Process(target=_replica_main, args=(url, f"r{i}", outs[i]))
        for i in range(replicas)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    wall = time.perf_counter() - started
    data = [json.loads(Path(o).read_text()) for o in outs]
    ran = [i for d in data for i in d["ran"]]
    lat = sorted(x for d in data for x in d["latencies"])
    return {
        "replicas": replicas,
        "rows": len(set(ran)),
        "run_twice": len(ran) - len(set(ran)),
        "rows_per_min": round(len(set(ran)) / wall * 60),
        "claim_p50_ms": round(statistics.median(lat) * 1000, 2),
        "claim_p99_ms": round(lat[int(len(lat) * 0.99) - 1] * 1000, 2),
    }


async def _hold(url: str) -> None:
    db = Database(url)
    queue = WorkQueue(db, lease_s=LEASE_S)
    await queue.claim("victim", 1)
    await asyncio.sleep(3600)  # killed with SIGKILL long before


async def _take_over(url: str, killed_at: float) -> float:
    db = Database(url)
    queue = WorkQueue(db, lease_s=LEASE_S)
    for _ in range(1200):  # polls for at most a minute
        if (await queue.claim("survivor", 1)).started:
            break
        await asyncio.sleep(0.05)
    await db.close()
    return time.time() - killed_at


def takeover(server: pg_server.PostgresServer) -> float:
    url = server.create_database("bench_takeover")
    asyncio.run(_fill(url, 1))
    victim = multiprocessing.Process(target=lambda: asyncio.run(_hold(url)))
    victim.start()
    time.sleep(1.0)  # it has claimed the row
    assert victim.pid is not None
    os.kill(victim.pid, signal.SIGKILL)
    killed_at = time.time()
    victim.join()
    return asyncio.run(_take_over(url, killed_at))


def main() -> None:
    multiprocessing.set_start_method("fork")
    server = pg_server.start()
    folder = Path(server.folder)
    try:
        rows = [throughput(server, n, folder) for n in (1, 2, 3)]
        took = takeover(server)
    finally:
        server.stop()
    result = {"work_s": WORK_S, "slots_per_replica": SLOTS, "lease_s": LEASE_S, "runs": rows}
    result["takeover_after_kill_s"] = round(took, 2)
    for row in rows:
        print(row)
    print(f"takeover after kill -9: {took:.2f} s (lease {LEASE_S} s)")
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    sys.exit(0 if all(r["run_twice"] == 0 and r["rows"] == ROWS for r in rows) else 1)


if __name__ == "__main__":
    main()
