"""Hostile queries against their limits, and what the worker process costs a normal query.

For each query that a prompt-injected model could send to the DuckDB log store: wall time
from dispatch to the error, against ``logs.query_timeout_s`` (target: limit + 1 s), and
the worker's peak resident memory (sampled every 5 ms from /proc), against
``logs.query_memory_mb`` (target: the cap plus a small overhead). Then the latency of a
normal query through the worker pool against the same query on an in-process DuckDB
connection (what the backend did before the pool), and a worker's cold start.

    uv run python -m bench.bench_hostile
    uv run python -m bench.bench_hostile --timeout 2 --memory-mb 512 --runs 30
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import tomllib
from pathlib import Path
from typing import Any

import duckdb

from bench.common import REPO, print_table, write_json
from config.settings import LogSettings, Settings
from tools.base import Budget, ToolRegistry
from tools.logs import register
from tools.logs.duckdb_backend import DuckDBBackend
from tools.logs.tools import LogDeps
from tools.sql.guard import check_sql

FLOWS = "`socbot-sample.logs.vpc_flow_logs`"
HOSTILE = {
    "edit_distance 100k": "SELECT EDIT_DISTANCE(REPEAT('a', 100000), REPEAT('b', 100000))",
    "generate_array 150M": "SELECT ARRAY_LENGTH(GENERATE_ARRAY(1, 150000000))",
    "unnest 1e9": "SELECT COUNT(*) FROM UNNEST(GENERATE_ARRAY(1, 1000000000)) AS x",
    "cross join x3": f"SELECT COUNT(*) FROM {FLOWS} a, {FLOWS} b, {FLOWS} c",
    "recursive cte": "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r) "
    "SELECT COUNT(*) FROM r",
    "regex x join": f"SELECT COUNT(REGEXP_EXTRACT(CONCAT(a.src_ip, b.dst_ip, REPEAT('x', 1000)), "
    rf"r'(\w+\W*)*z')) FROM {FLOWS} a, {FLOWS} b",
    "string_agg 400MB": f"SELECT STRING_AGG(REPEAT(src_ip, 100000), ',') FROM {FLOWS}",
    "wide rows": f"SELECT REPEAT(src_ip, 100000) AS wide FROM {FLOWS} LIMIT 200",
}
NORMAL = (
    f"SELECT dst_ip, COUNT(*) AS flows, SUM(bytes_sent) AS bytes FROM {FLOWS} "
    "WHERE dst_port = 443 GROUP BY dst_ip ORDER BY flows DESC LIMIT 20"
)


def registry(
    timeout_s: float, memory_mb: int, headroom_mb: int = 256
) -> tuple[ToolRegistry, DuckDBBackend]:
    raw = tomllib.loads((REPO / "config" / "socbot.toml").read_text())["logs"]
    raw.update(
        query_timeout_s=timeout_s, query_memory_mb=memory_mb, query_memory_headroom_mb=headroom_mb
    )
    reg = ToolRegistry(result_chars=8000)
    register(reg, Settings(logs=LogSettings(**raw)))
    deps = reg.tools["query_logs"].deps
    assert isinstance(deps, LogDeps) and isinstance(deps.backend, DuckDBBackend)
    return reg, deps.backend


async def query(reg: ToolRegistry, sql: str) -> dict[str, Any]:
    result = await reg.dispatch(
        "query_logs", {"sql": sql}, allowed=["query_logs"], investigation_id="b", budget=Budget()
    )
    return result.data


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


async def sample_peak(backend: DuckDBBackend, stop: asyncio.Event) -> float:
    peak = 0.0
    while not stop.is_set():
        for pid in backend.pool.pids():
            peak = max(peak, rss_mb(pid))
        await asyncio.sleep(0.005)
    return peak


async def hostile(
    reg: ToolRegistry, backend: DuckDBBackend, limit: float, queries: dict[str, str] = HOSTILE
) -> list[dict[str, Any]]:
    rows = []
    for name, sql in queries.items():
        await query(reg, "SELECT 1")  # a ready worker: start-up is not the query's time
        stop = asyncio.Event()
        sampler = asyncio.create_task(sample_peak(backend, stop))
        started = time.monotonic()
        data = await query(reg, sql)
        wall = time.monotonic() - started
        stop.set()
        peak = await sampler
        outcome = data.get("error", "")[:40] or f"{data['row_count']} rows, truncated"
        rows.append(
            {"query": name, "wall_s": round(wall, 2), "within": wall <= limit + 1.0,
             "peak_rss_mb": round(peak), "outcome": outcome}
        )  # fmt: skip
    return rows


async def latency(reg: ToolRegistry, backend: DuckDBBackend, runs: int) -> dict[str, Any]:
    for _ in range(3):
        await query(reg, NORMAL)
    through_pool = []
    for _ in range(runs):
        started = time.perf_counter()
        assert "rows" in await query(reg, NORMAL)
        through_pool.append((time.perf_counter() - started) * 1000)
    # Before the pool: the same guarded, transpiled query on an in-process connection.
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    for spec in backend_specs(backend):
        con.execute(spec)
    sql = backend.to_duckdb(check_sql(NORMAL, list(backend.local)))
    in_process = []
    for _ in range(runs):
        started = time.perf_counter()
        check_sql(NORMAL, list(backend.local))  # the guard runs either way
        await asyncio.to_thread(lambda: con.cursor().sql(sql).fetchall())
        in_process.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    fresh = DuckDBBackend([], row_limit=10, timeout_s=10, workers=1)
    await fresh.execute("SELECT 1")
    cold = (time.perf_counter() - started) * 1000
    fresh.close()
    pool_ms, before_ms = statistics.median(through_pool), statistics.median(in_process)
    return {
        "pool_median_ms": round(pool_ms, 2),
        "in_process_median_ms": round(before_ms, 2),
        "added_median_ms": round(pool_ms - before_ms, 2),
        "pool_p95_ms": round(sorted(through_pool)[int(0.95 * (runs - 1))], 2),
        "in_process_p95_ms": round(sorted(in_process)[int(0.95 * (runs - 1))], 2),
        "cold_start_ms": round(cold),
        "runs": runs,
    }


def backend_specs(backend: DuckDBBackend) -> list[str]:
    """The CREATE VIEW statements the workers run, for the in-process comparison."""
    specs = []
    for view, reader, files in backend.views:
        listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
        specs.append(f'CREATE VIEW "{view}" AS SELECT * FROM {reader}([{listed}])')
    return specs


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=2.0, help="logs.query_timeout_s")
    parser.add_argument("--memory-mb", type=int, default=512, help="logs.query_memory_mb")
    parser.add_argument("--runs", type=int, default=30, help="normal-query repetitions")
    parser.add_argument(
        "--headroom-mb", type=int, default=256, help="logs.query_memory_headroom_mb"
    )
    args = parser.parse_args()
    reg, backend = registry(args.timeout, args.memory_mb, args.headroom_mb)
    try:
        rows = await hostile(reg, backend, args.timeout)
        lat = await latency(reg, backend, args.runs)
    finally:
        backend.close()
    print_table(
        f"hostile queries (limit {args.timeout:g}s, cap {args.memory_mb} MB)",
        [[r["query"], r["wall_s"], r["within"], r["peak_rss_mb"], r["outcome"]] for r in rows],
        ["query", "wall s", "<= limit+1s", "peak RSS MB", "outcome"],
    )
    print_table("normal query latency (ms)", [[k, v] for k, v in lat.items()], ["", "value"])
    path = write_json(
        "hostile_sql",
        {
            "timeout_s": args.timeout,
            "memory_mb": args.memory_mb,
            "headroom_mb": args.headroom_mb,
            "hostile": rows,
            "latency": lat,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    asyncio.run(main())
