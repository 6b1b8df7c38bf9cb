"""Pseudonymisation benchmark (issue 33): the cost of ``[privacy]`` per tool result, and
the tokens it adds (or saves) per investigation.

::

    .venv/bin/python -m bench.bench_pseudonyms --runs 30      # ~10 s

1. A ``query_logs`` result of about 100 kB (700 rows of sign-ins: time, user, e-mail,
   full name, internal and public IPs, user agent; 40 people; invented), fenced as the
   executor sends it, with ``user_name``, ``email`` and ``full_name`` marked personal.
   Timed: pseudonymising it the first time (every value new), again in the same
   conversation with one byte changed (values known, no memo), and restoring the
   pseudonymised text (the model quoting it all back). Wall and CPU (process) time,
   median and best of ``--runs``, with the default kinds, with ``ips = "all"``, and with
   every full name holding letters beyond ASCII (``accents``).
2. One investigation of a genuine sample alert (``bench.common.load_alert``) with a
   scripted model (``tests.fakes.model``; mechanics, not verdict quality), run with
   ``[privacy]`` off and on: the characters of every request the model receives, and
   the tokens at ~4 characters each (``bench.fake_gemini.tokens``), with the difference.

Writes ``var/bench/pseudonyms.json`` (``SOCBOT_BENCH_RESULTS`` to change); the load
average before and after is recorded beside the figures.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from pydantic import SecretStr

from agent.model.privacy import Pseudonymiser
from bench.common import load_alert, percentile, print_table, run_async, write_json
from bench.fake_gemini import tokens
from config.privacy_settings import PrivacySettings

MARKED = ("user_name", "email", "full_name")


def tool_result(accents: bool = False) -> str:
    """About 100 kB of log rows, as the model reads a query_logs result (invented); with
    ``accents``, every full name has letters beyond ASCII (``Zoë3 Müller3``)."""
    given, family = ("Zo\u00eb", "M\u00fcller") if accents else ("First", "Last")
    people = [(f"user{i:02d}", f"{given}{i} {family}{i}") for i in range(40)]
    rows = []
    for i in range(700):
        user, name = people[i % len(people)]
        rows.append(
            [
                f"2026-11-27T{i % 24:02d}:{i % 60:02d}:16Z",
                user,
                f"{user}@example.com",
                name,
                f"10.{i % 7}.{i % 30}.{i % 200 + 1}",
                f"203.0.113.{i % 50 + 1}",
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36",
                "SUCCESS" if i % 4 else "FAILURE",
            ]
        )
    columns = ["event_time", *MARKED[:2], "full_name", "src_ip", "dst_ip", "user_agent", "result"]
    data = {"columns": columns, "rows": rows, "row_count": len(rows), "truncated": False}
    body = json.dumps({"ref": "s1#1", "output": data}, ensure_ascii=False)
    return f"<<<DATA-0123456789abcdef result of query_logs\n{body}\nDATA-0123456789abcdef>>>"


def timed(fn: Callable[[int], object], runs: int) -> dict[str, float]:
    walls, cpus = [], []
    for i in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        fn(i)
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return {
        "wall_ms_median": round(statistics.median(walls), 2),
        "wall_ms_p95": round(percentile(walls, 0.95), 2),
        "wall_ms_best": round(min(walls), 2),
        "cpu_ms_median": round(statistics.median(cpus), 2),
    }


def result_figures(settings: PrivacySettings, text: str, runs: int) -> dict[str, Any]:
    def fresh() -> Pseudonymiser:
        return Pseudonymiser(settings, marked=MARKED)

    first = timed(lambda _i: fresh().pseudonymise(text), runs)
    warm = fresh()
    out = warm.pseudonymise(text)
    again = timed(lambda i: warm.pseudonymise(text + " " * (i + 1)), runs)
    restore = timed(lambda _i: warm.restore(out), runs)
    assert warm.restore(out) != out and "user07@example.com" not in out
    return {
        "bytes": len(text.encode()),
        "values": len(list(warm.map.values())),
        "first_time": first,
        "known_values": again,
        "restore": restore,
        "pseudonymise_and_restore_ms_median": round(
            again["wall_ms_median"] + restore["wall_ms_median"], 2
        ),
        "pseudonymise_and_restore_ms_p95": round(again["wall_ms_p95"] + restore["wall_ms_p95"], 2),
    }


async def investigation_chars(privacy: bool) -> dict[str, int]:
    """Characters the scripted model receives over one investigation (off or on)."""
    from agent.engine import Request
    from config.settings import Settings
    from core.events import NullSink
    from store.db.engine import Database
    from tests.engine_support import scripted_engine
    from tests.fakes.model import ScriptedModel
    from tests.playbook_support import planned_script, registry

    key = SecretStr(base64.b64encode(os.urandom(32)).decode())
    settings = Settings(privacy=PrivacySettings(enabled=privacy, key=key))
    db = Database("sqlite+aiosqlite:///:memory:")
    await db.create()
    try:
        model = ScriptedModel(planned_script())
        engine = scripted_engine(db, model, registry(), settings)
        alert = load_alert()
        request = Request("bench-privacy", f"Investigate this alert: {alert.title}", alert)
        outcome = await engine.run(request, NullSink())
        assert outcome.status == "concluded", outcome.error
        chars = 0
        for r in model.requests:
            chars += len(r.system) + sum(
                len(p.model_dump_json(exclude_none=True)) for c in r.contents for p in c.parts or []
            )
        counts = outcome.record.get("privacy", {}).get("pseudonymised", {})
        return {"requests": len(model.requests), "chars": chars, "values": sum(counts.values())}
    finally:
        await db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    load_before = os.getloadavg()
    text = tool_result()
    results = {
        "defaults": result_figures(PrivacySettings(enabled=True), text, args.runs),
        "ips_all": result_figures(PrivacySettings(enabled=True, ips="all"), text, args.runs),
        "accents": result_figures(PrivacySettings(enabled=True), tool_result(True), args.runs),
    }
    off = run_async(lambda: investigation_chars(False))
    on = run_async(lambda: investigation_chars(True))
    tokens_off, tokens_on = tokens(off["chars"]), tokens(on["chars"])
    figures: dict[str, Any] = {
        "tool_result": results,
        "investigation": {
            "off": off,
            "on": on,
            "tokens_off": tokens_off,
            "tokens_on": tokens_on,
            "extra_tokens": tokens_on - tokens_off,
        },
        "load_before": load_before,
        "load_after": os.getloadavg(),
    }
    rows = [
        [
            name,
            r["bytes"],
            r["values"],
            r["first_time"]["wall_ms_median"],
            r["known_values"]["wall_ms_median"],
            r["restore"]["wall_ms_median"],
            r["pseudonymise_and_restore_ms_median"],
            r["pseudonymise_and_restore_ms_p95"],
        ]
        for name, r in results.items()
    ]
    header = [
        "kinds",
        "bytes",
        "values",
        "first ms",
        "known ms",
        "restore ms",
        "known+restore",
        "p95",
    ]
    print_table("100 kB tool result (median wall ms)", rows, header)
    print(
        f"investigation: {tokens_off} tokens off, {tokens_on} on "
        f"({tokens_on - tokens_off:+d}); load {load_before} -> {figures['load_after']}"
    )
    print(write_json("pseudonyms", figures))


if __name__ == "__main__":
    main()
