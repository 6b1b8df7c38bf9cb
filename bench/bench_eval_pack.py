"""The bundled eval pack's size and load time (issue 31).

::

    .venv/bin/python -m bench.bench_eval_pack [--pack org] [--runs 5]

Measures, on the pack as shipped: bytes on disk (background ``data/``, ``scenarios/``,
total), rows per shared table (background) and injected rows, the pack's balance
(scenarios, attacks, non-attacks, genuine, pairs, per category), the time
``evals.scenario.load_pack`` takes (every scenario read and checked; median of
``--runs``), and the time to open one scenario's tables the way the sandbox does
(links to the shared Parquet plus the injected file, one DuckDB view each) and count
every table's rows (median over the first ``--sample`` scenarios). Writes
``<results>/eval_pack.json``; the load average is printed with it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb

from bench.common import print_table, write_json
from evals.sandbox import _path
from evals.scenario import load_pack, pack_folder


def count(sql: str) -> int:
    con = duckdb.connect()
    try:
        return int(con.execute(sql).fetchone()[0])  # type: ignore[index]
    finally:
        con.close()


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def open_tables(scenario: Any) -> int:
    """Views over the scenario's tables as the sandbox links them; total rows counted."""
    rows = 0
    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect()
        for n, table in enumerate(scenario.tables):
            path = _path(list(table.files), Path(tmp) / str(n))
            con.execute(f"CREATE VIEW t{n} AS SELECT * FROM read_parquet('{path}')")
            rows += con.execute(f"SELECT count(*) FROM t{n}").fetchone()[0]  # type: ignore[index]
        con.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pack", default="org")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sample", type=int, default=20)
    args = parser.parse_args()
    folder = pack_folder(args.pack)
    loads = []
    for _ in range(args.runs):
        start = time.perf_counter()
        pack = load_pack(args.pack)
        loads.append(time.perf_counter() - start)
    opens = []
    for scenario in pack[: args.sample]:
        start = time.perf_counter()
        open_tables(scenario)
        opens.append(time.perf_counter() - start)
    background = (
        {
            t.name: count(f"SELECT count(*) FROM read_parquet('{folder}/data/{t.name}/*.parquet')")
            for t in sorted((folder / "data").iterdir())
        }
        if (folder / "data").is_dir()
        else {}
    )
    injected = sum(
        count(f"SELECT count(*) FROM read_parquet('{p}')")
        for p in folder.glob("scenarios/*/inject/*.parquet")
    )
    attacks = sum(s.truth.attack for s in pack)
    result = {
        "pack": args.pack,
        "load_average": os.getloadavg(),
        "bytes": {
            "total": size(folder),
            "data": size(folder / "data") if (folder / "data").is_dir() else 0,
            "scenarios": size(folder / "scenarios") if (folder / "scenarios").is_dir() else 0,
        },
        "background_rows": background,
        "background_total": sum(background.values()),
        "injected_rows": injected,
        "scenarios": len(pack),
        "attacks": attacks,
        "non_attacks": len(pack) - attacks,
        "genuine": sum(s.genuine for s in pack),
        "paired": sum(bool(s.pair) for s in pack),
        "per_category": dict(Counter(s.category for s in pack)),
        "load_pack_s": {"median": statistics.median(loads), "runs": loads},
        "open_scenario_tables_s": {
            "median": statistics.median(opens),
            "max": max(opens),
            "sample": len(opens),
        },
    }
    print_table(
        f"eval pack {args.pack!r}",
        [[k, v] for k, v in result.items() if not isinstance(v, dict)],
        ["figure", "value"],
    )
    print_table("background rows", sorted(background.items()), ["table", "rows"])
    print(
        f"load_pack median {result['load_pack_s']['median']:.2f} s; open tables median "
        f"{result['open_scenario_tables_s']['median']:.3f} s; load average {os.getloadavg()}"
    )
    write_json("eval_pack", result)


if __name__ == "__main__":
    main()
