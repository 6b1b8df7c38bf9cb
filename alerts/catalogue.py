"""The catalogue of alert formats: which payload is which, and where its fields are.

A format is a TOML file (``alerts/formats/*.toml``, plus any in the directory the
``alerts.formats_dir`` setting names, which override built-in ones of the same name):

* ``[match]``: ``all`` (every JMESPath expression truthy) and ``any`` (one of them,
  or one of ``envelope`` on an envelope around the payload: an EventBridge event's
  ``detail-type`` says what its ``detail`` is);
* ``[fields]``: ``title``, ``severity``, ``time``, ``description`` as JMESPath;
* ``[severity]``: the vendor's scale, ``words`` (case-insensitive) and ``ranges``
  (``[lower bound, severity]``); without ``ranges`` a number is read as a 0-10 or
  0-100 score;
* ``[[entities]]``: ``kind``, ``role`` and the JMESPath ``value`` of each entity.

``ignore_case = true`` lower-cases every key before the expressions run (one file
for a vendor that sends both ``Title`` and ``title``). Formats are tried by
``priority`` (lowest first; a hinted one before all), each on the innermost layer of
the payload and then on the envelopes around it (``alerts.envelopes``), so a vendor
format that fits an envelope wins over the catch-all generic one inside it.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from jmespath.parser import ParsedResult
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from alerts.entities import clean_entities, walk_entities
from alerts.envelopes import JSON, Unwrapped, unwrap
from alerts.jmes import (
    FormatError,
    compile_expression,
    flatten,
    lower_keys,
    number,
    scalar,
    search,
    text,
    truthy,
)
from alerts.model import (
    Entity,
    EntityKind,
    Severity,
    normalize_severity,
    parse_time,
    severity_word,
)

__all__ = ["Catalogue", "Fields", "Format", "FormatError", "Parsed", "load_catalogue"]

BUILTIN_DIR = Path(__file__).parent / "formats"
_SAFE_SOURCE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MatchSpec(_Spec):
    all: list[str] = Field(default_factory=list)
    any: list[str] = Field(default_factory=list)
    envelope: list[str] = Field(default_factory=list, description="`any` on an outer layer")


class FieldsSpec(_Spec):
    title: str
    source: str | None = None  # when the source depends on the payload (Graph serviceSource)
    severity: str | None = None
    time: str | None = None
    description: str | None = None


class SeveritySpec(_Spec):
    words: dict[str, Severity] = Field(default_factory=dict)
    ranges: list[tuple[float, Severity]] = Field(default_factory=list)


class EntitySpec(_Spec):
    kind: EntityKind
    value: str
    role: str | None = None


class FormatSpec(_Spec):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")
    source: str | None = None
    aliases: list[str] = Field(default_factory=list, description="other source hints")
    vendor: str = ""
    priority: int = 100
    ignore_case: bool = False
    match: MatchSpec
    fields: FieldsSpec
    severity: SeveritySpec = SeveritySpec()
    entities: list[EntitySpec] = Field(default_factory=list)


@dataclass
class Fields:
    """What a format (or the fallback) read from the alert."""

    source: str
    format: str | None
    title: str
    severity: Severity | None = None
    event_time: datetime | None = None
    description: str | None = None
    entities: list[Entity] = field(default_factory=list)


@dataclass
class Parsed:
    raw: JSON
    unwrapped: Unwrapped
    fields: Fields | None  # None: no format matched


class Format:
    """One format file; each expression is compiled the first time it is used.

    ``check=True`` (a user's file) compiles them all at once, so that a bad expression
    is reported when the file is loaded; the shipped ones are checked by the tests.
    """

    def __init__(self, spec: FormatSpec, origin: str, *, check: bool = True) -> None:
        self.spec, self.origin = spec, origin
        self.name, self.source = spec.name, spec.source or spec.name
        self.aliases = [a.lower() for a in spec.aliases]
        self._compiled: dict[str, ParsedResult] = {}
        self._words = {k.strip().lower(): v for k, v in spec.severity.words.items()}
        self._ranges = sorted(spec.severity.ranges)
        if check:
            self.check()

    def expressions(self) -> list[str]:
        """Every JMESPath expression in the file."""
        f = self.spec.fields
        optional = [f.source, f.severity, f.time, f.description]
        return [
            *self.spec.match.all,
            *self.spec.match.any,
            *self.spec.match.envelope,
            f.title,
            *(e for e in optional if e),
            *(e.value for e in self.spec.entities),
        ]

    def check(self) -> None:
        """Compile every expression now: ``FormatError`` names the first bad one."""
        for expression in self.expressions():
            self._compile(expression)

    def _compile(self, expression: str) -> ParsedResult:
        compiled = self._compiled.get(expression)
        if compiled is None:
            compiled = compile_expression(expression, origin=self.origin)
            self._compiled[expression] = compiled
        return compiled

    def _search(self, expression: str | None, doc: JSON) -> Any:
        return None if expression is None else search(self._compile(expression), doc)

    def matches(self, doc: JSON, around: Sequence[JSON] = ()) -> bool:
        """Does ``doc`` fit, inside the envelopes ``around`` it (innermost first)?"""
        doc = lower_keys(doc) if self.spec.ignore_case else doc
        match = self.spec.match
        if not all(truthy(self._search(e, doc)) for e in match.all):
            return False
        if not (match.any or match.envelope):
            return True
        if any(truthy(self._search(e, doc)) for e in match.any):
            return True
        outer = [lower_keys(o) if self.spec.ignore_case else o for o in around if match.envelope]
        return any(truthy(self._search(e, o)) for o in outer for e in match.envelope)

    def read(self, doc: JSON) -> Fields:
        lowered = lower_keys(doc) if self.spec.ignore_case else doc
        f = self.spec.fields
        named = [
            (spec.kind, value, spec.role)
            for spec in self.spec.entities
            for value in flatten(self._search(spec.value, lowered))
        ]
        return Fields(
            source=self._source_of(lowered),
            format=self.name,
            title=text(self._search(f.title, lowered)) or "",
            severity=self.severity(self._search(f.severity, lowered)),
            event_time=parse_time(scalar(self._search(f.time, lowered))),
            description=text(self._search(f.description, lowered)),
            entities=clean_entities([*named, *walk_entities(doc)]),
        )

    def _source_of(self, doc: JSON) -> str:
        """The format's source, or a safe name read from the payload (used in paths)."""
        found = (text(self._search(self.spec.fields.source, doc)) or "").lower()
        return found if _SAFE_SOURCE.match(found) else self.source

    def severity(self, value: Any) -> Severity | None:
        """The socbot severity of a vendor value, by this format's table."""
        value = scalar(value)
        if isinstance(value, str) and value.strip().lower() in self._words:
            return self._words[value.strip().lower()]
        score = number(value)
        if score is None:
            return severity_word(value)
        if not self._ranges:
            return normalize_severity(score)
        below = [sev for bound, sev in self._ranges if score >= bound]
        return below[-1] if below else None


class Catalogue:
    """Formats in the order they are tried."""

    def __init__(self, formats: Sequence[Format]) -> None:
        self.formats = sorted(formats, key=lambda f: (f.spec.priority, f.name))

    def parse(self, data: JSON, source_hint: str | None = None) -> Parsed:
        unwrapped = unwrap(data)
        hint = (source_hint or "").strip().lower()
        order = sorted(self.formats, key=lambda f: hint not in (f.name, f.source, *f.aliases))
        layers = list(reversed(unwrapped.layers))  # the alert itself first, then envelopes
        for fmt in order:
            doc = next((d for i, d in enumerate(layers) if fmt.matches(d, layers[i + 1 :])), None)
            if doc is not None:
                fields = fmt.read(doc)
                _finish(fields, unwrapped)
                return Parsed(unwrapped.raw, unwrapped, fields)
        return Parsed(unwrapped.raw, unwrapped, None)

    def get(self, name: str) -> Format | None:
        return next((f for f in self.formats if f.name == name), None)


def _finish(fields: Fields, unwrapped: Unwrapped) -> None:
    if not fields.title:
        fields.title = text(unwrapped.hints.get("title")) or f"{fields.source} alert"
    if fields.event_time is None:
        fields.event_time = parse_time(unwrapped.hints.get("time"))
    if unwrapped.more:
        noun = unwrapped.more_noun + ("s" if unwrapped.more > 1 else "")
        fields.title += f" (+{unwrapped.more} more {noun})"


def load_formats(directory: Path, *, check: bool = True) -> list[Format]:
    """Every ``*.toml`` format in ``directory``; FormatError on the first bad one
    (with ``check=False``, a bad expression only when it is first used)."""
    formats = []
    for path in sorted(directory.glob("*.toml")):
        try:
            spec = FormatSpec.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise FormatError(f"{path}: {exc}") from None
        except ValidationError as exc:
            err = exc.errors(include_input=False, include_url=False)[0]
            where = ".".join(str(p) for p in err["loc"])
            raise FormatError(f"{path}: {where}: {err['msg']}") from None
        formats.append(Format(spec, str(path), check=check))
    return formats


@functools.cache
def default_catalogue() -> Catalogue:
    """The formats shipped with socbot (checked by the tests, not at every start)."""
    return Catalogue(load_formats(BUILTIN_DIR, check=False))


def load_catalogue(extra_dir: Path | str | None) -> Catalogue:
    """Built-in formats plus those in ``extra_dir`` (same name: the user's wins)."""
    if not extra_dir:
        return default_catalogue()
    directory = Path(extra_dir).expanduser()
    if not directory.is_dir():
        raise FormatError(f"alert formats directory {str(directory)!r} is not a directory")
    own = load_formats(directory)
    names = {f.name for f in own}
    builtin = [f for f in default_catalogue().formats if f.name not in names]
    return Catalogue([*own, *builtin])
