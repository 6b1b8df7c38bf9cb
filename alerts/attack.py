"""The ATT&CK Enterprise catalogue: is a technique id real and current, and what is it called?

The catalogue, ``alerts/mitre/enterprise-attack.json``, is generated from MITRE's STIX data
by ``scripts/make_attack_catalogue.py`` (MITRE's terms of use: ``alerts/mitre/NOTICE``) and
read once, on first use. ``enterprise()`` is the bundled catalogue; ``Catalogue.judge``
answers for any text a model or an alert wrote: the current technique it names, or why it
names none (not an id, unknown, deprecated, revoked and by what). Names and tactics only
ever come from here, never from the text that named the id. Imports nothing of socbot.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

CATALOGUE_FILE = Path(__file__).parent / "mitre" / "enterprise-attack.json"
ID_RE = re.compile(r"T[0-9]{4}(?:\.[0-9]{3})?", re.ASCII)
MAX_ID_CHARS = 24  # longer text is never an id (and is not worth quoting back)


@dataclass(frozen=True)
class Entry:
    """One technique or sub-technique of the catalogue."""

    id: str  # T1110.003
    name: str  # Password Spraying
    tactics: tuple[str, ...]  # display names in the matrix's order: ("Credential Access",)
    deprecated: bool = False
    revoked: bool = False
    replaced_by: str = ""  # for a revoked technique: the id that replaced it, when known

    @property
    def current(self) -> bool:
        """Neither deprecated nor revoked: a technique an analyst should be told about."""
        return not self.deprecated and not self.revoked

    @property
    def tactic(self) -> str:
        """``Defense Evasion, Persistence``: the tactics as one line."""
        return ", ".join(self.tactics)


@dataclass(frozen=True)
class Judgement:
    """What the catalogue says about a claimed id: the current technique, or why not."""

    entry: Entry | None
    problem: str = ""


class Catalogue:
    """Techniques by id, read from a catalogue file's content."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.version = str(data["attack_version"])
        self.modified = str(data.get("modified", ""))
        names = {short: name for _id, short, name in data["tactics"]}
        order = {short: n for n, (_id, short, _name) in enumerate(data["tactics"])}
        self.entries: dict[str, Entry] = {}
        for tid, raw in data["techniques"].items():
            shorts = sorted(raw.get("tactics", []), key=lambda s: order.get(s, len(order)))
            self.entries[tid] = Entry(
                id=tid,
                name=str(raw["name"]),
                tactics=tuple(names.get(s, s) for s in shorts),
                deprecated=bool(raw.get("deprecated", False)),
                revoked=bool(raw.get("revoked", False)),
                replaced_by=str(raw.get("replaced_by", "")),
            )

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def label(self) -> str:
        """``ATT&CK Enterprise v18.1``."""
        return f"ATT&CK Enterprise v{self.version}"

    def get(self, raw: object) -> Entry | None:
        """The entry ``raw`` names (current or not), or None."""
        tid = normalize_id(raw)
        return self.entries.get(tid) if tid is not None else None

    def judge(self, raw: object) -> Judgement:
        """The current technique ``raw`` names, or a one-line reason it names none."""
        tid = normalize_id(raw)
        if tid is None:
            return Judgement(None, f"{_quote(raw)} is not an ATT&CK technique id")
        entry = self.entries.get(tid)
        if entry is None:
            return Judgement(None, f"{tid} is not a technique of {self.label}")
        if entry.revoked:
            instead = f"; use {entry.replaced_by}" if entry.replaced_by else ""
            return Judgement(None, f"{tid} ({entry.name}) is revoked in {self.label}{instead}")
        if entry.deprecated:
            return Judgement(None, f"{tid} ({entry.name}) is deprecated in {self.label}")
        return Judgement(entry)


def normalize_id(raw: object) -> str | None:
    """``' t1110.003 '`` → ``T1110.003``; None for anything that is not a technique id."""
    if not isinstance(raw, str) or len(raw) > MAX_ID_CHARS:
        return None
    text = raw.strip().upper()
    return text if ID_RE.fullmatch(text) else None


@cache
def enterprise() -> Catalogue:
    """The bundled ATT&CK Enterprise catalogue (read once)."""
    return Catalogue(json.loads(CATALOGUE_FILE.read_text(encoding="utf-8")))


def _quote(raw: object) -> str:
    text = raw if isinstance(raw, str) else type(raw).__name__
    text = "".join(c if c.isprintable() else "?" for c in text)
    return repr(text if len(text) <= MAX_ID_CHARS else text[: MAX_ID_CHARS - 1] + "…")
