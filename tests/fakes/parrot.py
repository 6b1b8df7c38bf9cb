"""The parroting answer of issue 31: every distinct value of every tool result it saw,
pasted into findings that cite those results, with eight ATT&CK parent ids.

What it "saw" is generous: per table of the scenario, the rows that matter (a pack's
injected rows plus a sample of the background; an old-layout table's rows, as a
``SELECT *`` would return them, up to the row limit), and the recorded intel answers.
Its verdict and severity are the keyword guess's (``evals.guesser``): parroting knows
no more than the alert about what the rows mean.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb

from evals.guesser import guess
from evals.results import Attempt
from evals.scenario import Scenario

PARENTS = ["T1110", "T1078", "T1059", "T1021", "T1003", "T1071", "T1486", "T1566"]
ROW_LIMIT = 200  # logs.row_limit's default: what one query returns at most
BACKGROUND_SAMPLE = 20
PER_FINDING = 6


def _rows(con: duckdb.DuckDBPyConnection, files: list[Any], limit: int) -> list[list[Any]]:
    reader = "read_parquet" if files[0].suffix == ".parquet" else "read_json_auto"
    listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
    sql = f"SELECT COLUMNS(*)::VARCHAR FROM {reader}([{listed}]) LIMIT {limit}"
    return [[str(v) for v in row if v is not None] for row in con.sql(sql).fetchall()]


def seen(scenario: Scenario) -> dict[str, str]:
    """The tool results the parrot saw, by reference (as ``Attempt.evidence`` keeps them)."""
    results: dict[str, str] = {}
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    for n, table in enumerate(scenario.tables, start=1):
        injected = [f for f in table.files if "inject" in f.parts]
        if injected:
            background = [f for f in table.files if f not in injected]
            rows = _rows(con, injected, ROW_LIMIT)
            rows += _rows(con, background, BACKGROUND_SAMPLE) if background else []
        else:
            rows = _rows(con, table.files, ROW_LIMIT)
        results[f"s{n}#1"] = json.dumps({"table": table.name, "rows": rows}, ensure_ascii=False)
    con.close()
    for n, lookup in enumerate(scenario.intel, start=1):
        results[f"i#{n}"] = json.dumps(lookup, ensure_ascii=False)
    return results


def _values(results: dict[str, str]) -> list[str]:
    found: dict[str, None] = {}

    def walk(item: Any) -> None:
        if isinstance(item, dict):
            for value in item.values():
                walk(value)
        elif isinstance(item, list):
            for value in item:
                walk(value)
        elif item is not None and str(item).strip():
            found[str(item)] = None

    for text in results.values():
        walk(json.loads(text))
    return list(found)


def parrot(scenario: Scenario) -> Attempt:
    """The parroting attempt on ``scenario``."""
    results = seen(scenario)
    values = _values(results)
    refs = list(results)
    findings = [
        {"finding": ", ".join(chunk), "evidence": ", ".join(chunk), "evidence_refs": refs}
        for chunk in (values[i : i + PER_FINDING] for i in range(0, len(values), PER_FINDING))
    ]
    conclusion = {
        **guess(scenario.alert),
        "confidence": "medium",
        "summary": "Every value the investigation returned.",
        "key_findings": findings,
        "techniques": [{"id": t} for t in PARENTS],
    }
    return Attempt(
        scenario=scenario.id,
        status="concluded",
        conclusion=conclusion,
        evidence=results,
        review_findings=len(findings),  # generous: as if the review verified every finding
        review_verified=len(findings),
    )
