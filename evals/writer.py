"""Writing a scenario folder (``evals.scenario`` reads it): used by ``socbot eval capture``
and by the builder of the bundled pack (``scripts/eval_pack``)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class TableRows:
    name: str  # project.dataset.table
    description: str
    rows: list[dict[str, Any]]
    time_column: str | None = "event_time"
    columns: dict[str, str] = field(default_factory=dict)

    @property
    def file(self) -> str:
        return "logs/" + self.name.rsplit(".", 1)[-1] + ".jsonl"


@dataclass
class Draft:
    """Everything a scenario folder holds."""

    title: str
    category: str
    origin: str
    licence: str
    synthetic: bool
    truth: dict[str, Any]
    alert: dict[str, Any]
    tables: Sequence[TableRows]
    intel: list[dict[str, Any]] = field(default_factory=list)


def _toml(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)  # JSON strings, lists, numbers are TOML


def scenario_toml(draft: Draft) -> str:
    lines = [
        f"title = {_toml(draft.title)}",
        f"category = {_toml(draft.category)}",
        f"origin = {_toml(draft.origin)}",
        f"licence = {_toml(draft.licence)}",
        f"synthetic = {'true' if draft.synthetic else 'false'}",
        "",
        "[truth]",
        *(f"{key} = {_toml(value)}" for key, value in draft.truth.items()),
    ]
    for table in draft.tables:
        lines += [
            "",
            "[[tables]]",
            f"name = {_toml(table.name)}",
            f"description = {_toml(table.description)}",
            f"file = {_toml(table.file)}",
        ]
        if table.time_column:
            lines.append(f"time_column = {_toml(table.time_column)}")
        if table.columns:
            lines.append("[tables.columns]")
            lines += [f"{_toml(k)} = {_toml(v)}" for k, v in table.columns.items()]
    return "\n".join(lines) + "\n"


def write_scenario(folder: Path, draft: Draft, *, replace: bool = False) -> None:
    """Write ``draft`` into ``folder`` (which must not exist unless ``replace``)."""
    if folder.exists():
        if not replace:
            raise FileExistsError(f"{str(folder)!r} exists")
        shutil.rmtree(folder)
    (folder / "logs").mkdir(parents=True)
    for table in draft.tables:
        key = table.time_column or ""
        rows = sorted(table.rows, key=lambda r: str(r.get(key, "")))
        with (folder / table.file).open("w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    (folder / "scenario.toml").write_text(scenario_toml(draft), "utf-8")
    (folder / "alert.json").write_text(json.dumps(draft.alert, indent=2) + "\n", "utf-8")
    if draft.intel:
        text = json.dumps({"lookups": draft.intel}, indent=2) + "\n"
        (folder / "intel.json").write_text(text, "utf-8")
