"""bench_quality: ``socbot report`` and the web Quality page over 100,000 cases, on SQLite
and PostgreSQL.

    python3 -m uv run python -m bench.bench_quality [--cases 100000] [--requests 30]

For each database ``cases`` invented cases (and their runs) are inserted in bulk
(``tests/store/cases/quality_rows.py``), spread over the last 30 days. The attributes are
correlated as in a team's alert stream: the format follows the source, the policy rule
the source, most runs use one model; verdicts and decisions follow a confusion
distribution; 15 % of cases are auto-resolved (10 % of those audited), 10 % open, 60 %
used a bullet, 10 % ran as a holdout. ``--independent`` draws every attribute
independently instead (the worst case for the grouped query: a group per few cases).

Measured: the report (``store.cases.report.period_report``, what ``socbot report --json``
prints: it sums the daily tally, ``store.cases.tally``) ``runs`` times, wall and CPU; the
Quality page over HTTP (the real guard and templates on a loopback port, ``socbot web``'s
local user) ``requests`` times, each a first render: the page's 60 s cache of a period's
report is turned off here (``page``), and the very first request is also reported apart
(``page_first_render_ms``). The fill (``fill_s``) includes the tally's triggers. Targets:
the report ≤ 1 s, the page p95 ≤ 150 ms. Results: ``var/bench/bench_quality.json``, with
the 1-minute load average (2 shared cores).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from random import Random
from typing import Any

import aiohttp
from aiohttp import web
from sqlalchemy import text

from bench.bench_web import summary, timed_get
from bench.common import RESULTS, on_each_database
from bench.loopback import free_port
from bot.transport.server import start_site
from bot.web.guard import create_web, install
from bot.web.pages.quality import QualityPage
from config.settings import Settings
from core.quality import Outcome, iso_week
from store.cases.report import period_report
from store.db.engine import Database
from tests.store.cases.quality_rows import store

SOURCES = {  # source: (format, share, rule)
    "guardduty": ("aws_guardduty", 0.35, "auto-benign-guardduty"),
    "scc": ("gcp_scc", 0.2, "none"),
    "okta": ("okta_system_log", 0.2, "route-identity"),
    "crowdstrike": ("crowdstrike_detection", 0.15, "none"),
    "wazuh": ("wazuh_alert", 0.1, "auto-benign-wazuh"),
}
VERDICTS = ("true_positive", "false_positive", "benign", "inconclusive")
DECISIONS = ("true_positive", "false_positive", "benign", "duplicate")
SEVERITIES = ("low", "medium", "high", "critical")


def _decision(rng: Random, verdict: str) -> str:
    """The analyst agrees 85 % of the time; otherwise any other decision."""
    if verdict in DECISIONS and rng.random() < 0.85:
        return verdict
    return rng.choice(DECISIONS)


def population(
    n: int, now: datetime, *, independent: bool = False, seed: int = 32
) -> tuple[list[Outcome], list[datetime]]:
    """The cases, and when each opened (within the last 29.5 days)."""
    rng = Random(seed)
    names, weights = list(SOURCES), [s[1] for s in SOURCES.values()]
    out, times = [], []
    for k in range(n):
        times.append(now - timedelta(days=rng.uniform(0, 29.5)))
        source = rng.choices(names, weights)[0]
        fmt, _, rule = SOURCES[source]
        model = "gemini-2.5-pro" if rule == "route-identity" else "gemini-2.5-flash"
        if independent:
            fmt, rule = (
                rng.choice([s[0] for s in SOURCES.values()]),
                rng.choice(["none", "r1", "r2"]),
            )
            model = rng.choice(["gemini-2.5-flash", "gemini-2.5-pro"])
        verdict = rng.choices(VERDICTS, (0.2, 0.45, 0.3, 0.05))[0]
        auto = (
            rule.startswith("auto")
            and verdict in ("false_positive", "benign")
            and rng.random() < 0.5
        )
        audited = auto and rng.random() < 0.1
        opened = rng.random() < 0.1 and not auto
        holdout = rng.random() < 0.1
        out.append(
            Outcome(
                verdict=verdict,
                disposition=None if opened else (verdict if auto else _decision(rng, verdict)),
                source=source,
                format=fmt,
                model=model,
                rule=rule,
                severity=rng.choice(SEVERITIES),
                week=iso_week(times[-1].date()),
                auto_resolved=auto,
                audited=audited,
                audit_disposition=_decision(rng, verdict) if audited else None,
                bullets=not holdout and rng.random() < 0.6,
                holdout=holdout,
                tokens=rng.randrange(20_000, 120_000),
                seconds=rng.uniform(20, 240),
                cost_usd=rng.uniform(0.005, 0.2),
                case_id=k,
            )
        )
    return out, times


async def measure(
    url: str, cases: int, runs: int, requests: int, independent: bool
) -> dict[str, Any]:
    db = Database(url)
    await db.create()
    now = datetime.now(UTC)
    began = time.perf_counter()
    rng = Random(7)
    found, times = population(cases, now, independent=independent)
    await store(
        db,
        found,
        at=times.__getitem__,
        ack_s=lambda k: rng.uniform(60, 4 * 3600),
        resolve_s=lambda k: rng.uniform(4 * 3600, 72 * 3600),
    )
    if not db.is_sqlite:  # what autovacuum does after a bulk load
        async with db.engine.begin() as conn:
            await conn.execute(text("ANALYZE cases, investigations"))
    out: dict[str, Any] = {"cases": cases, "fill_s": round(time.perf_counter() - began, 1)}
    out["load_average_1m"] = round(os.getloadavg()[0], 2)
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        report = await period_report(db, now - timedelta(days=30), now + timedelta(seconds=1))
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    out["report"] = {
        **summary(walls),
        "max_ms": round(max(walls), 1),
        "cpu_p50_ms": summary(cpus)["p50_ms"],
    }
    out["report_cases"] = report["totals"]["cases"]
    # every request renders the report anew: no 60 s cache (the figure includes it)
    defaults = QualityPage.__init__.__kwdefaults__ or {}
    kept, defaults["cache_s"] = defaults["cache_s"], 0.0
    try:
        pages = create_web(Settings(database_url=url), db, None, local=True)
        app = web.Application()
        install(app, pages)
    finally:
        defaults["cache_s"] = kept
    runner = await start_site(app, "127.0.0.1", free_port())
    host, port = runner.addresses[0][:2]
    try:
        async with aiohttp.ClientSession() as session:
            first = time.perf_counter()
            async with session.get(f"http://{host}:{port}/web/quality") as response:
                await response.read()
            out["page_first_render_ms"] = round((time.perf_counter() - first) * 1000, 1)
            out["page"] = await timed_get(session, f"http://{host}:{port}/web/quality", requests)
    finally:
        await runner.cleanup()
        await db.close()
    out["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--independent", action="store_true")
    parser.add_argument("--only", choices=("sqlite", "postgresql"))
    args = parser.parse_args()
    wanted = (args.cases, args.runs, args.requests, args.independent)
    result = on_each_database("bench_quality", lambda url: measure(url, *wanted), args.only)
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_quality.json").write_text(json.dumps(result, indent=2) + "\n")
    ok = all(r["report"]["p50_ms"] <= 1000 and r["page"]["p95_ms"] <= 150 for r in result.values())
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
