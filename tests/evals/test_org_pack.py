"""The bundled ``org`` pack validates: scenarios load, twins share their alert and differ
in verdict, required values exist only in the data, balance figures hold, nothing the
model reads says where the data came from, and the builder is reproducible."""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import pytest

from alerts.attack import enterprise
from evals.normalise import contains
from scripts.eval_pack.org import network_bg, reference
from scripts.eval_pack.org.people import build_org
from scripts.eval_pack.org.schema import write_parquet

PACK = Path(__file__).resolve().parents[2] / "evals" / "packs" / "org"
VERDICTS = {"true_positive", "true_positive_no_impact", "false_positive", "benign", "inconclusive"}
ATTACKS = {"true_positive", "true_positive_no_impact"}
SEVERITIES = ["info", "low", "medium", "high", "critical"]
CATEGORIES = {"cloud", "identity", "endpoint", "network", "saas"}
TELLS = (
    "synthetic",
    "genuine",
    "otrf",
    "atomic",
    "security-datasets",
    "mordor",
    "simulated",
    "invented",
    "recorded",
    "recording",
    "written for",
    "eval pack",
    "splunk",
)
LAB = (
    "theshire",
    "mordor",
    "pgustavo",
    "wardog",
    "sbeavers",
    "atomicredteam",
    "cyb3rward0g",
    "otrf",
)


@cache
def pack() -> dict[str, Any]:
    return tomllib.loads((PACK / "pack.toml").read_text("utf-8"))


@cache
def scenarios() -> dict[str, dict[str, Any]]:
    out = {}
    for folder in sorted((PACK / "scenarios").iterdir()):
        meta = tomllib.loads((folder / "scenario.toml").read_text("utf-8"))
        meta["alert"] = json.loads((folder / "alert.json").read_text("utf-8"))
        meta["folder"] = folder
        out[folder.name] = meta
    return out


def attack(s: dict[str, Any]) -> bool:
    return s["truth"]["verdicts"][0] in ATTACKS


def files(table: str, folder: Path | None = None) -> list[str]:
    found = sorted(str(p) for p in (PACK / "data" / table).glob("*.parquet"))
    if folder is not None and (folder / "inject" / f"{table}.parquet").is_file():
        found.append(str(folder / "inject" / f"{table}.parquet"))
    return found


def columns(path: str) -> list[tuple[str, str]]:
    rows = duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()
    return [(r[0], r[1]) for r in rows]


def test_every_table_has_background_and_injections_match_its_schema() -> None:
    ids = {t["id"] for t in pack()["tables"]}
    assert ids >= {
        "sysmon",
        "windows_security",
        "entra_signin",
        "okta_system_log",
        "firewall",
        "dns",
        "proxy",
        "cloudtrail",
        "saas_audit",
    }
    schema = {t: columns(files(t)[0]) for t in ids}
    for s in scenarios().values():
        for inject in sorted((s["folder"] / "inject").glob("*.parquet")):
            assert inject.stem in ids, f"{s['folder'].name}: {inject.stem}"
            assert columns(str(inject)) == schema[inject.stem], f"{s['folder'].name}: {inject.stem}"


def test_scenarios_are_well_formed() -> None:
    catalogue = enterprise()
    for sid, s in scenarios().items():
        truth = s["truth"]
        assert s["category"] in CATEGORIES, sid
        assert truth["verdicts"] and set(truth["verdicts"]) <= VERDICTS, sid
        low, high = truth["severity"]
        assert SEVERITIES.index(low) <= SEVERITIES.index(high), sid
        assert truth["rationale"].strip(), sid
        for tid in truth["techniques"] + truth.get("techniques_accept", []):
            assert not catalogue.judge(tid).problem, f"{sid}: {tid}"
        assert attack(s) == bool(truth["techniques"]), (
            f"{sid}: attacks and only attacks list techniques"
        )
        assert (
            isinstance(s["alert"], dict)
            and s["provenance"]["origin"]
            and s["provenance"]["licence"]
        )


def test_twins_share_the_alert_and_differ_in_verdict() -> None:
    every = scenarios()
    paired = [sid for sid, s in every.items() if s.get("pair")]
    assert len(paired) / len(every) >= 0.9
    for sid in paired:
        twin = every[every[sid]["pair"]]
        assert twin["pair"] == sid
        assert twin["alert"] == every[sid]["alert"], sid
        assert attack(twin) != attack(every[sid]), sid


def test_required_values_are_in_the_data_and_not_in_the_alert() -> None:
    con = duckdb.connect()
    for sid, s in scenarios().items():
        must = s["truth"]["must_establish"]
        assert must, sid
        alert = json.dumps(s["alert"])
        for item in must:
            value, table = (
                (item["value"], item.get("table")) if isinstance(item, dict) else (item, None)
            )
            assert not contains(alert, value), f"{sid}: {value!r} is in the alert"
            tables = [table] if table else [t["id"] for t in pack()["tables"]]
            assert any(
                con.execute(
                    f"SELECT 1 FROM read_parquet({files(t, s['folder'])}) r "
                    "WHERE contains(lower(concat_ws(' ', *COLUMNS(*))), lower(?)) LIMIT 1",
                    [value],
                ).fetchone()
                for t in tables
            ), f"{sid}: {value!r} not in {tables}"


def test_balance() -> None:
    every = list(scenarios().values())
    attacks = [s for s in every if attack(s)]
    assert len(every) >= 150
    assert (len(every) - len(attacks)) / len(every) >= 0.40
    assert sum(s["genuine"] for s in every) / len(every) >= 0.30
    assert {s["category"] for s in every} == CATEGORIES
    catalogue = enterprise()
    tactics = Counter(
        tactic
        for s in attacks
        for tid in s["truth"]["techniques"]
        for tactic in catalogue.judge(tid).entry.tactics  # type: ignore[union-attr]
    )
    for tactic in (
        "Initial Access",
        "Execution",
        "Persistence",
        "Privilege Escalation",
        "Defense Evasion",
        "Credential Access",
        "Discovery",
        "Lateral Movement",
        "Collection",
        "Command and Control",
        "Exfiltration",
    ):
        assert tactics[tactic] > 0, tactic


def test_nothing_the_model_reads_names_the_source() -> None:
    readable = [
        t["name"] + " " + t["description"] + " " + json.dumps(t.get("columns", {}))
        for t in pack()["tables"]
    ]
    readable += [" ".join(c for c, _ in columns(files(t["id"])[0])) for t in pack()["tables"]]
    readable += [json.dumps(s["alert"]) for s in scenarios().values()]
    for text in readable:
        assert not [w for w in TELLS if w in text.lower()], text[:120]


def test_genuine_rows_keep_no_lab_names() -> None:
    con = duckdb.connect()
    injects = [
        str(p)
        for s in scenarios().values()
        if s["genuine"]
        for p in (s["folder"] / "inject").glob("*.parquet")
    ]
    for path in injects:
        hit = con.execute(
            f"SELECT concat_ws(' ', *COLUMNS(*)) AS t FROM read_parquet('{path}') "
            "WHERE regexp_matches(lower(concat_ws(' ', *COLUMNS(*))), ?) LIMIT 1",
            ["|".join(LAB)],
        ).fetchone()
        assert hit is None, f"{path}: {hit[0][:200] if hit else ''}"


def _digest(rows: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()


def test_builder_is_reproducible(tmp_path: Path) -> None:
    first, second = build_org(31), build_org(31)
    assert [p.__dict__ for p in first.people] == [p.__dict__ for p in second.people]
    assert _digest(reference.change_tickets(first)) == _digest(reference.change_tickets(second))
    assert _digest(network_bg.network(first)[1]) == _digest(network_bg.network(second)[1])
    assert _digest([p.__dict__ for p in build_org(32).people]) != _digest(
        [p.__dict__ for p in first.people]
    )
    rows = reference.assets(first)
    write_parquet(tmp_path / "a.parquet", "assets", rows)
    write_parquet(tmp_path / "b.parquet", "assets", rows)
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


@pytest.mark.parametrize("table", ["sysmon", "entra_signin", "okta_system_log", "proxy"])
def test_background_has_the_rhythm_of_a_working_week(table: str) -> None:
    by_weekday = dict(
        duckdb.sql(
            f"SELECT isodow(event_time) < 6, count(*) FROM read_parquet({files(table)}) GROUP BY 1"
        ).fetchall()
    )
    assert by_weekday[True] / 10 > 5 * by_weekday[False] / 4  # per day: weekdays much busier
