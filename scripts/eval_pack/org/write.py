"""Writing the org pack: pack.toml, the shared background Parquet and scenario folders
(format: docs/eval.md, "The org pack")."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripts.eval_pack.org.schema import SPECS, write_parquet

GATES = {
    "min_recall": 1.0,
    "min_verified": 0.5,
    "max_answer_chars": 4000,
    "min_technique_precision": 0.5,
}


@dataclass
class Scenario:
    id: str
    title: str  # never shown to the model
    category: str
    alert: dict[str, Any]
    verdicts: list[str]
    rationale: str
    severity: tuple[str, str]
    must: list[tuple[str, str | None]]  # (value, table id or None)
    inject: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    techniques: list[str] = field(default_factory=list)
    techniques_accept: list[str] = field(default_factory=list)
    forbidden: list[dict[str, str]] = field(default_factory=list)
    pair: str | None = None
    genuine: bool = False
    origin: str = "invented for the pack (seeded generator scripts/eval_pack/org)"
    licence: str = "Apache-2.0 (this repository)"
    notes: str = ""
    window: tuple[str, str] | None = None
    intel: list[dict[str, Any]] = field(default_factory=list)
    tables: list[str] | None = None

    @property
    def attack(self) -> bool:
        return self.verdicts[0] in ("true_positive", "true_positive_no_impact")


def q(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def pack_toml(name: str, description: str) -> str:
    lines = [f"name = {q(name)}", f"description = {q(description)}", "", "[gates]"]
    lines += [f"{k} = {q(v)}" for k, v in GATES.items()]
    for spec in SPECS:
        lines += [
            "",
            "[[tables]]",
            f"id = {q(spec.id)}",
            f"name = {q(spec.name)}",
            f"description = {q(spec.description)}",
            f"time_column = {q(spec.time_column)}",
        ]
        if spec.notes:
            lines.append("[tables.columns]")
            lines += [f"{q(k)} = {q(v)}" for k, v in spec.notes.items()]
    return "\n".join(lines) + "\n"


def scenario_toml(s: Scenario) -> str:
    lines = [f"title = {q(s.title)}", f"category = {q(s.category)}"]
    if s.tables is not None:
        lines.append(f"tables = {q(s.tables)}")
    if s.window:
        lines.append(f"window = {q(list(s.window))}")
    if s.pair:
        lines.append(f"pair = {q(s.pair)}")
    lines += [
        f"genuine = {'true' if s.genuine else 'false'}",
        "",
        "[provenance]",
        f"origin = {q(s.origin)}",
        f"licence = {q(s.licence)}",
    ]
    if s.notes:
        lines.append(f"notes = {q(s.notes)}")
    must = ", ".join(f"{{ value = {q(v)}, table = {q(t)} }}" if t else q(v) for v, t in s.must)
    forbidden = ", ".join(
        "{ " + ", ".join(f"{k} = {q(v)}" for k, v in f.items()) + " }" for f in s.forbidden
    )
    lines += [
        "",
        "[truth]",
        f"verdicts = {q(s.verdicts)}",
        f"rationale = {q(s.rationale)}",
        f"severity = {q(list(s.severity))}",
        f"must_establish = [{must}]",
        f"techniques = {q(s.techniques)}",
    ]
    if s.techniques_accept:
        lines.append(f"techniques_accept = {q(s.techniques_accept)}")
    lines.append(f"forbidden = [{forbidden}]")
    return "\n".join(lines) + "\n"


def write_scenario(pack: Path, s: Scenario) -> None:
    folder = pack / "scenarios" / s.id
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "scenario.toml").write_text(scenario_toml(s), "utf-8")
    (folder / "alert.json").write_text(
        json.dumps(s.alert, indent=2, sort_keys=True) + "\n", "utf-8"
    )
    for table, rows in sorted(s.inject.items()):
        if rows:
            key = "event_time" if "event_time" in rows[0] else next(iter(rows[0]))
            write_parquet(
                folder / "inject" / f"{table}.parquet",
                table,
                sorted(rows, key=lambda r: str(r.get(key))),
            )
    if s.intel:
        (folder / "intel.json").write_text(
            json.dumps({"lookups": s.intel}, indent=2) + "\n", "utf-8"
        )


def write_background(pack: Path, tables: dict[str, list[dict[str, Any]]]) -> dict[str, int]:
    counts = {}
    for spec in SPECS:
        rows = sorted(
            tables[spec.id],
            key=lambda r: (
                str(r.get(spec.time_column)),
                json.dumps(r, sort_keys=True, default=str),
            ),
        )
        folder = pack / "data" / spec.id
        if folder.exists():
            shutil.rmtree(folder)
        write_parquet(folder / "part-0.parquet", spec.id, rows)
        counts[spec.id] = len(rows)
    return counts
