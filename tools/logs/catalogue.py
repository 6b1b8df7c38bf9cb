"""The catalogue of log tables from config: the only tables any query may touch."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from config.settings import TableSpec
from tools.base import ToolError

PROJECT_ROOT = Path(__file__).resolve().parents[2]


class Catalogue:
    """Fully qualified table name -> its spec (description, time column, notable columns)."""

    def __init__(self, tables: Iterable[TableSpec]) -> None:
        self.tables: dict[str, TableSpec] = {}
        for spec in tables:
            if spec.name.count(".") != 2:
                raise ValueError(
                    f"catalogue table {spec.name!r} must be fully qualified: project.dataset.table"
                )
            if spec.name in self.tables:
                raise ValueError(f"catalogue table {spec.name!r} is listed twice")
            self.tables[spec.name] = spec

    def names(self) -> list[str]:
        return sorted(self.tables)

    def get(self, name: str) -> TableSpec:
        """The spec for ``name`` (backticks tolerated), or a ToolError listing the tables."""
        spec = self.tables.get(name.strip().strip("`"))
        if spec is None:
            raise ToolError(
                f"table {name!r} is not in the catalogue; known tables: {', '.join(self.names())}"
            )
        return spec

    def describe(self) -> list[dict[str, Any]]:
        """What ``list_tables`` shows the model."""
        return [
            {
                "name": spec.name,
                "description": spec.description,
                "time_column": spec.time_column,
                "notable_columns": spec.columns,
            }
            for spec in self.tables.values()
        ]


def resolve_path(path: str) -> Path:
    """A configured path: as given if absolute or present from the working directory,
    else relative to the project root (so the sample works from any directory)."""
    candidate = Path(path).expanduser()
    if candidate.is_absolute() or candidate.exists():
        return candidate.resolve()
    return (PROJECT_ROOT / candidate).resolve()
