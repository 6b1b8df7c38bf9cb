"""The loaded scenario (``Scenario``) and the one-line error a bad one raises.

``evals.scenario`` (the old layout, and which layout a pack uses) and
``evals.pack_format`` (packs with ``pack.toml``) both build a ``Scenario`` here.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from evals.truth import Limits, Strict, Truth

Category = Literal["cloud", "identity", "endpoint", "network", "saas"]


class ScenarioError(Exception):
    """A scenario or pack that cannot be used; the message is one line."""


class Provenance(Strict):
    """Where a scenario's data came from: never shown to the model."""

    origin: str
    licence: str
    notes: str = ""


class TableRef(Strict):
    """One log table the scenario's investigation may query, and the files behind it."""

    name: str = Field(description="project.dataset.table, as the model writes it")
    description: str
    time_column: str | None = None
    columns: dict[str, str] = Field(default_factory=dict)
    files: list[Path] = Field(default_factory=list, description="the background, then injected")
    id: str = ""


class Scenario(Strict):
    """A scenario as loaded (``folder`` is where its alert and intel are)."""

    id: str
    title: str
    category: Category
    genuine: bool
    provenance: Provenance
    truth: Truth
    gates: Limits = Field(description="the pack's limits; ``limits`` adds the truth's")
    tables: list[TableRef] = Field(default_factory=list)
    folder: Path
    pack: str = ""
    pair: str | None = None
    window: tuple[str, str] | None = None

    @property
    def limits(self) -> Limits:
        return self.truth.limits(self.gates)

    @property
    def synthetic(self) -> bool:
        return not self.genuine

    @property
    def origin(self) -> str:
        return self.provenance.origin

    @property
    def licence(self) -> str:
        return self.provenance.licence

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


def guarded(where: str, build: Callable[[], Scenario]) -> Scenario:
    """``build()``, its failures as one-line ``ScenarioError``s naming ``where``."""
    try:
        scenario = build()
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
    return scenario


def _check_intel(scenario: Scenario) -> None:
    for item in scenario.intel:
        if not isinstance(item["indicator"], str) or not isinstance(item["services"], dict):
            raise TypeError("each lookup needs indicator (text) and services (object)")
