"""A scenario: an alert, the log tables its investigation may query, its intel and truth.

Two layouts (docs/eval.md, "The scenario format"):

- a **pack** with ``pack.toml`` at its root: shared tables under ``data/`` and one folder
  per scenario under ``scenarios/`` holding ``scenario.toml``, ``alert.json``, optional
  ``inject/<table>.parquet`` and ``intel.json`` (``evals.pack_format`` reads it);
- the old layout (the ``core`` pack, captured cases): one folder per scenario with its
  own ``logs/``; its ``[truth]`` is adapted to the new shape (``evals.truth.from_legacy``).

``load_pack`` reads every scenario of a pack; a bad scenario raises ``ScenarioError``
with one line naming the folder and what is wrong.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from evals import pack_format
from evals.case import Scenario, ScenarioError, guarded
from evals.truth import LEGACY_LIMITS, SEVERITIES, from_legacy

__all__ = [
    "DEFAULT_PACK",
    "PACKS_DIR",
    "SEVERITIES",
    "Scenario",
    "ScenarioError",
    "load_pack",
    "load_scenario",
    "pack_folder",
]

PACKS_DIR = Path(__file__).resolve().parent / "packs"
DEFAULT_PACK = "org"
PACK_FILE = "pack.toml"


def load_scenario(folder: Path) -> Scenario:
    """The old-layout scenario in ``folder`` (its own ``logs/``), in the new shape."""

    def build() -> Scenario:
        meta = tomllib.loads((folder / "scenario.toml").read_text("utf-8"))
        tables = [_legacy_table(folder, t) for t in meta.get("tables") or []]
        provenance = {k: meta.get(k) for k in ("origin", "licence")}
        return Scenario.model_validate(
            {
                "id": folder.name,
                "title": meta.get("title"),
                "category": meta.get("category"),
                "genuine": not meta.get("synthetic", True),
                "provenance": provenance,
                "truth": from_legacy(meta.get("truth") or {}),
                "gates": LEGACY_LIMITS,
                "tables": tables,
                "folder": folder,
                "pack": folder.parent.name,
            }
        )

    return guarded(folder.name, build)


def _legacy_table(folder: Path, table: dict[str, Any]) -> dict[str, Any]:
    spec = dict(table)
    pattern = str(spec.pop("file", ""))
    files = sorted(folder.glob(pattern)) if pattern else []
    if not files:
        raise ScenarioError(
            f"scenario {folder.name!r}: table {spec.get('name')!r}: no file {pattern!r}"
        )
    return {**spec, "files": files}


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
    new = (folder / PACK_FILE).is_file()
    root = folder / "scenarios" if new else folder
    found = root.iterdir() if root.is_dir() else iter(())
    dirs = sorted(d for d in found if (d / "scenario.toml").is_file())
    if only:
        patterns = [p if any(c in p for c in "*?[") else f"*{p}*" for p in only.split(",")]
        dirs = [d for d in dirs if any(fnmatchcase(d.name, p) for p in patterns)]
    if not dirs:
        raise ScenarioError(
            f"no scenarios in {str(folder)!r}" + (f" matching {only!r}" if only else "")
        )
    if new:
        return pack_format.load(folder, dirs, whole=not only)
    return [load_scenario(d) for d in dirs]
