"""The ATT&CK techniques a conclusion claims, and how precisely they match the truth.

The conclusion carries ``techniques: [{id, name, tactic}]`` (``agent.concluder.Technique``,
docs/attack.md): ids the bundled catalogue knows as current. Records written before the
field existed have none, which reads as "no technique claimed". Only this module knows
the field's shape.

Matching is for precision: a claim matches a listed id when it is that id, or a
sub-technique of a listed *parent* (``T1110.003`` matches a listed ``T1110``); a parent
never matches a listed sub-technique (``T1003`` does not match ``T1003.001``) unless the
parent is itself listed. Every claim that matches nothing listed costs precision.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def claimed_techniques(conclusion: Mapping[str, Any]) -> list[str]:
    """Distinct technique ids in ``conclusion`` (``T1110.003``), upper-cased; none if absent."""
    ids: list[str] = []
    for item in conclusion.get("techniques") or []:
        tid = item.get("id") if isinstance(item, Mapping) else item
        if isinstance(tid, str) and tid.strip() and tid.strip().upper() not in ids:
            ids.append(tid.strip().upper())
    return ids


def matches(claim: str, listed: str) -> bool:
    """Whether ``claim`` is ``listed`` or a sub-technique of the parent ``listed``."""
    claim, listed = claim.upper(), listed.upper()
    return claim == listed or claim.split(".")[0] == listed  # a listed sub-id has a dot


def technique_match(expected: Iterable[str], claimed: Iterable[str]) -> bool:
    """Whether some claimed id matches some expected id."""
    wanted = list(expected)
    return any(matches(c, e) for c in claimed for e in wanted)


def precision(claimed: Sequence[str], right: Sequence[str]) -> float | None:
    """The share of ``claimed`` that matches an id of ``right``; ``None`` when none claimed."""
    if not claimed:
        return None
    return sum(any(matches(c, r) for r in right) for c in claimed) / len(claimed)


def technique_gate(
    truth: Sequence[str], accept: Sequence[str], claimed: Sequence[str], min_precision: float
) -> tuple[bool | None, float | None]:
    """(gate, precision). With techniques in the truth: one claim matches them and the
    precision over truth and ``accept`` reaches ``min_precision``. Without: every claim
    is in ``accept`` (``None`` when nothing is claimed)."""
    share = precision(claimed, [*truth, *accept])
    if not truth:
        return (None if share is None else share == 1.0), share
    held = technique_match(truth, claimed) and share is not None and share >= min_precision
    return held, share
