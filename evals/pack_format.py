"""Packs with ``pack.toml``: shared tables, scenarios that inject rows into them.

::

    <pack>/pack.toml                  name, description, [gates], [[tables]] (the catalogue)
    <pack>/data/<table-id>/*.parquet  the organisation's background rows (or data/<id>.parquet)
    <pack>/scenarios/<id>/            scenario.toml, alert.json, inject/<table-id>.parquet,
                                      intel.json (optional)

A scenario's table is the background files plus its own injected file: nothing is
copied. What the model reads (table names, descriptions, column notes, the alert) may not
say where data came from; a value the truth requires may not be in the alert; twins
(``pair``) share their alert exactly and sit on opposite sides. docs/eval.md has the format.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from pydantic import Field

from evals.case import Provenance, Scenario, ScenarioError, TableRef, guarded
from evals.normalise import contains, normalise
from evals.truth import Limits, Strict, Truth

TELLS = re.compile(
    r"synthetic|genuine|recorded|recording|otrf|security-datasets|attack_data|splunk attack"
    r"|\bbots\b|mordor|atomic|simulated|invented|written for|eval pack",
    re.IGNORECASE,
)


class PackTable(Strict):
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    name: str
    description: str
    time_column: str | None = None
    columns: dict[str, str] = Field(default_factory=dict)


class PackMeta(Strict):
    name: str
    description: str = ""
    gates: Limits = Limits()
    tables: list[PackTable] = Field(default_factory=list)


class ScenarioFile(Strict):
    """``scenario.toml`` of the new format."""

    title: str
    category: str
    genuine: bool
    provenance: Provenance
    truth: Truth
    tables: list[str] | None = None
    window: tuple[str, str] | None = None
    pair: str | None = None


def read_meta(folder: Path) -> PackMeta:
    where = folder.name
    try:
        return PackMeta.model_validate(tomllib.loads((folder / "pack.toml").read_text("utf-8")))
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        line = " ".join(str(exc).split())[:300]
        raise ScenarioError(f"pack {where!r}: pack.toml: {line}") from None


def load(folder: Path, dirs: list[Path], *, whole: bool) -> list[Scenario]:
    """The scenarios in ``dirs`` of the pack at ``folder``; pairs are checked when
    ``whole`` (the whole pack was asked for)."""
    meta = read_meta(folder)
    for table in meta.tables:
        told = TELLS.search(" ".join([table.name, table.description, *table.columns.values()]))
        if told:
            said = told.group(0).lower()
            raise ScenarioError(f"pack {meta.name!r}: table {table.id!r} says {said!r}")
    scenarios = [_scenario(folder, meta, d) for d in dirs]
    if whole:
        check_pairs(scenarios)
    return scenarios


def _scenario(folder: Path, meta: PackMeta, where: Path) -> Scenario:
    def build() -> Scenario:
        raw = tomllib.loads((where / "scenario.toml").read_text("utf-8"))
        spec = ScenarioFile.model_validate(raw)
        return Scenario.model_validate(
            {
                "id": where.name,
                "title": spec.title,
                "category": spec.category,
                "genuine": spec.genuine,
                "provenance": spec.provenance,
                "truth": spec.truth,
                "gates": meta.gates,
                "tables": _tables(folder, meta, where, spec.tables),
                "folder": where,
                "pack": meta.name,
                "pair": spec.pair,
                "window": spec.window,
            }
        )

    scenario = guarded(where.name, build)
    _check_truth(scenario)
    return scenario


def _tables(folder: Path, meta: PackMeta, where: Path, ids: list[str] | None) -> list[TableRef]:
    known = {t.id: t for t in meta.tables}
    wanted = list(known) if ids is None else ids
    inject = where / "inject"
    injected = {p.stem for p in inject.glob("*")} if inject.is_dir() else set()
    stray = sorted(injected - set(wanted))
    if stray:
        raise ScenarioError(f"scenario {where.name!r}: inject/ for unlisted table {stray[0]!r}")
    refs = []
    for tid in wanted:
        table = known.get(tid)
        if table is None:
            raise ScenarioError(f"scenario {where.name!r}: table {tid!r} is not in pack.toml")
        background = sorted((folder / "data" / tid).glob("*.parquet"))
        background += [p for p in [folder / "data" / f"{tid}.parquet"] if p.is_file()]
        own = [p for p in [where / "inject" / f"{tid}.parquet"] if p.is_file()]
        if not background + own:
            raise ScenarioError(f"scenario {where.name!r}: table {tid!r} has no Parquet file")
        refs.append(TableRef(**table.model_dump(), files=background + own))
    return refs


def _check_truth(scenario: Scenario) -> None:
    where = scenario.id
    alert_text = normalise(json.dumps(scenario.alert, ensure_ascii=False))
    told = TELLS.search(alert_text)
    if told:
        raise ScenarioError(f"scenario {where!r}: alert.json says {told.group(0).lower()!r}")
    if not scenario.truth.rationale.strip():
        raise ScenarioError(f"scenario {where!r}: truth.rationale is empty")
    ids = {t.id for t in scenario.tables}
    for item in scenario.truth.must_establish:
        if contains(alert_text, item.value):
            raise ScenarioError(
                f"scenario {where!r}: must_establish {item.value!r} is in the alert already"
            )
        if item.table is not None and item.table not in ids:
            raise ScenarioError(
                f"scenario {where!r}: must_establish {item.value!r}: "
                f"table {item.table!r} not listed"
            )


def check_pairs(scenarios: list[Scenario]) -> None:
    """Twins name each other, share their alert exactly and sit on opposite sides."""
    by_id = {s.id: s for s in scenarios}
    for s in scenarios:
        if s.pair is None:
            continue
        twin = by_id.get(s.pair)
        if twin is None or twin.pair != s.id:
            raise ScenarioError(f"scenario {s.id!r}: pair {s.pair!r} does not name it back")
        if twin.alert != s.alert:
            raise ScenarioError(f"scenario {s.id!r}: pair {s.pair!r} has another alert")
        if twin.truth.attack == s.truth.attack:
            raise ScenarioError(f"scenario {s.id!r}: pair {s.pair!r} is on the same side")
