"""A scenario: one folder with an alert, its own logs and intel, and the ground truth.

::

    <pack>/<scenario-id>/
        scenario.toml   title, category, origin, licence, [truth], [[tables]]
        alert.json      the alert as it would arrive
        logs/…          JSON lines or Parquet, one file (or glob) per table
        intel.json      optional recorded threat-intel answers, served offline

``load_pack`` reads every folder of a pack; a bad scenario raises ``ScenarioError``
with one line naming the folder and what is wrong (docs/eval.md has the format).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from alerts.attack import enterprise

Expected = Literal["true_positive", "false_positive", "benign"]
Category = Literal["cloud", "identity", "endpoint", "network"]
SEVERITIES = ("info", "low", "medium", "high", "critical")
PACKS_DIR = Path(__file__).resolve().parent / "packs"
DEFAULT_PACK = "core"


class ScenarioError(Exception):
    """A scenario or pack that cannot be used; the message is one line."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Truth(Strict):
    """What a right answer says (docs/eval.md, "Ground truth")."""

    verdict: Expected
    accept: list[Expected] = Field(default_factory=list, description="also right")
    severity: tuple[str, str] = Field(description="lowest and highest acceptable severity")
    must_establish: list[str] = Field(default_factory=list)
    min_recall: float = Field(1.0, ge=0, le=1)
    techniques: list[str] = Field(default_factory=list)
    forbidden: list[str] = Field(default_factory=list, description="claims that must not appear")

    @field_validator("severity")
    @classmethod
    def _band(cls, band: tuple[str, str]) -> tuple[str, str]:
        low, high = band
        if low not in SEVERITIES or high not in SEVERITIES:
            raise ValueError(f"severity band {list(band)} must use {', '.join(SEVERITIES)}")
        if SEVERITIES.index(low) > SEVERITIES.index(high):
            raise ValueError(f"severity band {list(band)} is upside down")
        return band

    @field_validator("techniques")
    @classmethod
    def _technique_ids(cls, ids: list[str]) -> list[str]:
        catalogue = enterprise()
        for tid in ids:
            problem = catalogue.judge(tid).problem
            if problem:
                raise ValueError(f"technique {tid!r}: {problem}")
        return [tid.strip().upper() for tid in ids]

    @property
    def accepted(self) -> frozenset[str]:
        return frozenset([self.verdict, *self.accept])


class TableFile(Strict):
    """One log table the scenario's investigation may query."""

    name: str = Field(description="project.dataset.table")
    description: str
    file: str = Field(description="path under the scenario folder (a glob is allowed)")
    time_column: str | None = None
    columns: dict[str, str] = Field(default_factory=dict)


class Scenario(Strict):
    """A scenario as loaded (``folder`` is where its files are)."""

    id: str
    title: str
    category: Category
    origin: str
    licence: str
    synthetic: bool
    truth: Truth
    tables: list[TableFile] = Field(default_factory=list)
    folder: Path

    @property
    def alert(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.folder / "alert.json").read_text("utf-8"))
        return data

    @property
    def intel(self) -> list[dict[str, Any]]:
        path = self.folder / "intel.json"
        if not path.is_file():
            return []
        lookups: list[dict[str, Any]] = json.loads(path.read_text("utf-8"))["lookups"]
        return lookups


def load_scenario(folder: Path) -> Scenario:
    """The scenario in ``folder``; ``ScenarioError`` (one line) when it is unusable."""
    where = folder.name
    try:
        meta = tomllib.loads((folder / "scenario.toml").read_text("utf-8"))
        scenario = Scenario.model_validate({**meta, "id": folder.name, "folder": folder})
        alert = scenario.alert
        _check_intel(scenario)
    except FileNotFoundError as exc:
        raise ScenarioError(f"scenario {where!r}: missing {Path(str(exc.filename)).name}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"scenario {where!r}: scenario.toml: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            f"scenario {where!r}: invalid JSON ({exc.msg}, line {exc.lineno})"
        ) from None
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "scenario.toml"
        raise ScenarioError(f"scenario {where!r}: {field}: {error['msg']}") from None
    except (KeyError, TypeError) as exc:
        raise ScenarioError(f"scenario {where!r}: intel.json: bad shape ({exc})") from None
    if not isinstance(alert, dict):
        raise ScenarioError(f"scenario {where!r}: alert.json must hold one JSON object")
    for table in scenario.tables:
        if table.name.count(".") != 2:
            raise ScenarioError(f"scenario {where!r}: table {table.name!r} is not p.d.t")
        if not sorted(folder.glob(table.file)):
            raise ScenarioError(f"scenario {where!r}: table {table.name!r}: no file {table.file!r}")
    return scenario


def _check_intel(scenario: Scenario) -> None:
    for item in scenario.intel:
        if not isinstance(item["indicator"], str) or not isinstance(item["services"], dict):
            raise TypeError("each lookup needs indicator (text) and services (object)")


def pack_folder(pack: str | None) -> Path:
    """A bundled pack by name (``core``), or a folder of scenarios."""
    name = pack or DEFAULT_PACK
    bundled = PACKS_DIR / name
    if "/" not in name and bundled.is_dir():
        return bundled
    path = Path(name).expanduser()
    if not path.is_dir():
        known = ", ".join(sorted(p.name for p in PACKS_DIR.iterdir() if p.is_dir()))
        raise ScenarioError(f"pack {name!r} is neither a bundled pack ({known}) nor a folder")
    return path


def load_pack(pack: str | None, only: str | None = None) -> list[Scenario]:
    """Every scenario of the pack (sorted by id), those matching ``only`` if given."""
    from fnmatch import fnmatchcase

    folder = pack_folder(pack)
    dirs = sorted(d for d in folder.iterdir() if (d / "scenario.toml").is_file())
    if only:
        patterns = [p if any(c in p for c in "*?[") else f"*{p}*" for p in only.split(",")]
        dirs = [d for d in dirs if any(fnmatchcase(d.name, p) for p in patterns)]
    if not dirs:
        raise ScenarioError(
            f"no scenarios in {str(folder)!r}" + (f" matching {only!r}" if only else "")
        )
    return [load_scenario(d) for d in dirs]
