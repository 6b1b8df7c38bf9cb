"""Reading the rule files of ``policy.dir``: every good rule kept, every bad one named.

A file that cannot be read as TOML, or a rule in it that does not validate, gives one
line ``file: rule 'id': problem``; the other rules of that file and the other files
still apply (never silently: ``RuleFiles.errors`` is shown by ``socbot policy list``,
logged at load and counted in ``/healthz``). Two rules with one id: the later one is
an error. ``RuleFiles.current()`` re-reads the folder when a file was added, removed
or changed (by name, size and mtime), at most every ``reload_s`` seconds.
"""

from __future__ import annotations

import logging
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from alerts.policy.decide import CompiledRule
from alerts.policy.rules import Rule
from config.agent_settings import ModelPrice

log = logging.getLogger(__name__)

Stamp = tuple[tuple[str, int, int], ...]
Prices = Mapping[str, ModelPrice]  # gemini.prices: a rule's ``model`` must be priced there


@dataclass
class Loaded:
    """The rules of a folder, in order, and the errors met reading it."""

    rules: list[CompiledRule] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _problem(error: ValidationError | ValueError) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        return f"{where + ': ' if where else ''}{first['msg']}{more}"
    return str(error)


def parse_rules(
    text: str, origin: str, out: Loaded, seen: set[str], prices: Prices | None = None
) -> None:
    """Add the rules of one file's ``text`` to ``out`` (errors included)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        out.errors.append(" ".join(f"{origin}: not TOML: {error}".split()))
        return
    unknown = sorted(set(data) - {"rule"})
    if unknown:
        out.errors.append(f"{origin}: unknown top-level key(s) {unknown} (rules go in [[rule]])")
    items = data.get("rule", [])
    if not isinstance(items, list):
        out.errors.append(f"{origin}: rule must be an array of tables ([[rule]])")
        return
    for position, item in enumerate(items, 1):
        compiled = _compile(item, position, origin, out, prices)
        if compiled is None:
            continue
        if compiled.id in seen:
            name = _name(item, position)
            out.errors.append(f"{origin}: rule {name}: id already used by an earlier rule")
            continue
        seen.add(compiled.id)
        out.rules.append(compiled)


def parse_items(items: list[dict[str, Any]], origin: str) -> Loaded:
    """Rules given as data (e.g. suppressions approved in Slack), checked like a file's."""
    out = Loaded()
    for position, item in enumerate(items, 1):
        compiled = _compile(item, position, origin, out)
        if compiled is not None:
            out.rules.append(compiled)
    return out


def _compile(
    item: Any, position: int, origin: str, out: Loaded, prices: Prices | None = None
) -> CompiledRule | None:
    """One rule checked and compiled, or its one-line error added to ``out``."""
    try:
        return CompiledRule.of(Rule.model_validate(item, context={"prices": prices}), origin)
    except (ValidationError, ValueError) as error:
        name = _name(item, position)
        out.errors.append(" ".join(f"{origin}: rule {name}: {_problem(error)}".split()))
        return None


def _name(item: Any, position: int) -> str:
    if isinstance(item, dict) and isinstance(item.get("id"), str):
        return repr(item["id"][:80])
    return f"#{position}"


def load_folder(folder: Path, prices: Prices | None = None) -> Loaded:
    """Every ``*.toml`` of ``folder`` in name order (a missing folder: no rules);
    ``prices``: the table a rule's ``model`` is checked against."""
    out = Loaded()
    seen: set[str] = set()
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            out.errors.append(f"{path}: cannot read: {error}")
            continue
        parse_rules(text, str(path), out, seen, prices)
    return out


def _stamp(folder: Path) -> Stamp:
    if not folder.is_dir():
        return ()
    found = []
    for path in sorted(folder.glob("*.toml")):
        try:
            st = path.stat()
        except OSError:
            continue
        found.append((path.name, st.st_size, st.st_mtime_ns))
    return tuple(found)


class RuleFiles:
    """The rule files of one folder, re-read when they change."""

    def __init__(
        self, folder: Path | str, *, reload_s: float = 5.0, prices: Prices | None = None
    ) -> None:
        self.folder = Path(folder)
        self.reload_s = reload_s
        self.prices = prices
        self._stamp: Stamp | None = None
        self._checked = 0.0
        self.loaded = Loaded()
        self.loads = 0

    def current(self) -> Loaded:
        """The rules now (re-read if a file changed since the last look)."""
        now = time.monotonic()
        if self._stamp is not None and now - self._checked < self.reload_s:
            return self.loaded
        self._checked = now
        stamp = _stamp(self.folder)
        if stamp != self._stamp:
            self._stamp = stamp
            self.loaded = load_folder(self.folder, self.prices)
            self.loads += 1
            for error in self.loaded.errors:
                log.error("policy rule not loaded: %s", error)
            loaded, rejected = len(self.loaded.rules), len(self.loaded.errors)
            if loaded or rejected:  # a bot without rule files starts quietly
                log.info("policy: %d rules from %s, %d rejected", loaded, self.folder, rejected)
        return self.loaded
