"""The ATT&CK techniques a conclusion claims, as the scorer reads them.

The conclusion carries ``techniques: [{id, name, tactic}]`` (``agent.concluder.Technique``,
docs/attack.md): ids the bundled catalogue knows as current. Records written before the
field existed have none, which reads as "no technique claimed". Only this module knows
the field's shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def claimed_techniques(conclusion: Mapping[str, Any]) -> list[str]:
    """Technique ids in ``conclusion`` (``T1110.003``), upper-cased; none if absent."""
    ids: list[str] = []
    for item in conclusion.get("techniques") or []:
        tid = item.get("id") if isinstance(item, Mapping) else item
        if isinstance(tid, str) and tid.strip():
            ids.append(tid.strip().upper())
    return ids


def technique_match(expected: Iterable[str], claimed: Iterable[str]) -> bool:
    """Whether a claimed id is an expected one, its parent or one of its sub-techniques."""
    wanted = [e.upper() for e in expected]
    return any(
        c == e or c.split(".")[0] == e or e.split(".")[0] == c for c in claimed for e in wanted
    )
