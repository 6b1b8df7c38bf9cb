"""The code check of a conclusion: are its findings grounded in this run's tool results?

For each key finding: every cited reference must exist and name a call that
succeeded, and every concrete value the finding quotes (IP, domain, URL, hash,
email or ARN principal, timestamp, number with a count or size unit) must appear
in the arguments or results of the calls it cites, or in the alert or request
itself. Verdict rules code can judge are checked too (``true_positive`` with no
finding, ``high`` confidence while half the steps failed...).

Values come from ``alerts.indicators`` plus a few patterns here; matching is
literal after normalisation (case, refanging as ``alerts.defang`` reads it, ``T`` vs
space in timestamps, epoch seconds in results, thousands separators, byte units).
Durations and other derived figures are not checked: they are computed from values,
not quoted. The check is deliberately literal: a failure means "not found where it
says", which the concluder can fix by citing the right call or quoting the value exactly.

The ATT&CK techniques the conclusion names are looked up in the bundled catalogue
(``agent.review.techniques``): unknown, deprecated or revoked ids become notes. They
do not fail the check, because code drops those ids anyway (``with_catalogue``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from agent.concluder import Conclusion
from agent.planner import Step
from agent.review.evidence import ALERT_REF, Evidence, normalize_ref
from agent.review.techniques import resolve
from alerts.defang import refang
from alerts.indicators import extract_indicators

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_ADJ = (
    r"(?:failed|successful|distinct|unique|denied|allowed|blocked|outbound|inbound|sso|dns|"
    r"new|total|separate|api|ssh|rdp|http|https|malicious|suspicious|login|sign-in|network)"
)
_COUNT_UNITS = (
    r"(?:attempts?|events?|requests?|logins?|log-ins?|sign-?ins?|connections?|flows?|rows?|"
    r"records?|quer(?:y|ies)|calls?|failures?|errors?|alerts?|hosts?|users?|accounts?|"
    r"principals?|ips?|addresses|packets?|files?|sessions?|times|hits|detections?|engines?|"
    r"reports?|vendors?|domains?|ports?|instances?|buckets?|keys?|roles?|changes?|lookups?|"
    r"downloads?|uploads?|messages?|emails?|processes|commands?|occurrences?)"
)
_BYTE_UNITS = {"b": 0, "bytes": 0, "kb": 1, "kib": 1, "mb": 2, "mib": 2, "gb": 3, "gib": 3}
_BYTE_UNITS |= {"tb": 4, "tib": 4}
_COUNT_RE = re.compile(
    rf"(?<![\w.,:/#-])({_NUM})(?:\s+{_ADJ}){{0,2}}\s+{_COUNT_UNITS}\b|(?<![\w.,:/#-])({_NUM})\s?%",
    re.I,
)
_BYTES_RE = re.compile(
    rf"(?<![\w.,:/#-])({_NUM})\s?({'|'.join(sorted(_BYTE_UNITS, key=len, reverse=True))})\b",
    re.I,
)
_STAMP_RE = re.compile(
    r"\b(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?))?|(?<![\d:])(\d{2}:\d{2}:\d{2})\b"
)
_EPOCH_RE = re.compile(r"(?<![\d.])(1[0-9]{9})(?:\.\d+)?(?![\d])")
_NUMBER_RE = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\d])")
_IPV6_RE = re.compile(r"(?<![\w:.])(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}(?![\w:.])", re.I)


class FindingCheck(BaseModel):
    """The check of one key finding."""

    index: int
    verified: bool
    refs: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)


class CodeCheck(BaseModel):
    """The code check of one conclusion (or answer)."""

    findings: list[FindingCheck] = Field(default_factory=list)
    verdict_problems: list[str] = Field(default_factory=list)
    technique_notes: list[str] = Field(default_factory=list, description="ATT&CK ids dropped")

    @property
    def verified(self) -> int:
        return sum(f.verified for f in self.findings)

    @property
    def passed(self) -> bool:
        return not self.verdict_problems and all(f.verified for f in self.findings)

    @property
    def problem_count(self) -> int:
        problems = len(self.verdict_problems) + len(self.technique_notes)
        return problems + sum(len(f.problems) for f in self.findings)

    def issues(self) -> list[str]:
        """Every problem as one line, for the rewrite's feedback and the critic."""
        lines = [f"key_findings[{f.index}]: {p}" for f in self.findings for p in f.problems]
        return [*lines, *self.verdict_problems, *self.technique_notes]


class Haystack:
    """Normalised text values are looked up in."""

    def __init__(self, text: str) -> None:
        low = refang(text).lower()
        epochs = (
            datetime.fromtimestamp(int(m.group(1)), UTC).strftime("%Y-%m-%d %H:%M:%S")
            for m in _EPOCH_RE.finditer(low)
        )
        self.text = re.sub(r"(\d{4}-\d{2}-\d{2})t(\d{2}:)", r"\1 \2", low)
        self.stamps = self.text + "\n" + "\n".join(epochs)  # epochs count as times only
        self._numbers: list[float] | None = None
        self._ipv6: set[str] | None = None

    def has(self, value: str) -> bool:
        """``value`` occurs as a whole token (not inside a longer word or number)."""
        pattern = rf"(?<![\w.-]){re.escape(value.lower())}(?![\w-]|\.\w)"
        return re.search(pattern, self.text) is not None

    def has_number(self, value: float, power: int = 0) -> bool:
        if power == 0:
            return any(abs(n - value) < 1e-9 for n in self.numbers)
        decimals = len(str(value).split(".")[1]) if "." in str(value) else 0
        return any(
            round(n / base**power, decimals) == value for n in self.numbers for base in (1000, 1024)
        )

    def has_ipv6(self, value: str) -> bool:
        if self._ipv6 is None:
            self._ipv6 = set()
            for m in _IPV6_RE.finditer(self.text):
                try:
                    self._ipv6.add(str(ipaddress.IPv6Address(m.group(0))))
                except ValueError:
                    continue
        return value in self._ipv6

    @property
    def numbers(self) -> list[float]:
        if self._numbers is None:
            self._numbers = [float(m.group(0)) for m in _NUMBER_RE.finditer(self.text)]
        return self._numbers


def quoted_values(text: str) -> list[tuple[str, str]]:
    """``(kind, value)`` for each concrete value ``text`` quotes, in order, deduplicated."""
    found: dict[tuple[str, str], None] = {}
    for indicator in extract_indicators(text):
        found[(indicator.kind, indicator.value)] = None
    for m in _COUNT_RE.finditer(text):
        number = (m.group(1) or m.group(2)).replace(",", "")
        if float(number) > 1:  # "0 logins", "1 event": usually read off empty or single rows
            found[("number", number)] = None
    for m in _BYTES_RE.finditer(text):
        found[(f"bytes:{m.group(2).lower()}", m.group(1).replace(",", ""))] = None
    for m in _STAMP_RE.finditer(text):
        if m.group(3):
            found[("time", m.group(3))] = None
        elif m.group(2):
            found[("timestamp", f"{m.group(1)} {m.group(2)}")] = None
    return list(found)


def value_found(kind: str, value: str, hay: Haystack) -> bool:
    """Whether ``value`` of ``kind`` (from ``quoted_values``) occurs in ``hay``."""
    if kind == "ipv6":
        return hay.has_ipv6(value)
    if kind == "number":
        return hay.has_number(float(value))
    if kind.startswith("bytes:"):
        return hay.has_number(float(value), _BYTE_UNITS[kind.split(":", 1)[1]])
    if kind == "url":
        return hay.has(value.rstrip("/"))  # whole: /x is not /x.sh, nor /ab /a
    if kind in ("timestamp", "time"):  # "22:06" matches "22:06:13.120+00"
        return re.search(rf"(?<!\d){re.escape(value)}(?!\d)", hay.stamps) is not None
    return hay.has(value)


def check_text(text: str, cited: str) -> list[str]:
    """Problems with the values ``text`` quotes that ``cited`` does not contain."""
    hay = Haystack(cited)
    return [
        f"{kind.split(':')[0]} {value!r} does not appear in the cited tool results or the alert"
        for kind, value in quoted_values(text)
        if not value_found(kind, value, hay)
    ]


def check_conclusion(
    conclusion: Conclusion,
    evidence: Evidence,
    *,
    trusted: str,
    steps: Sequence[Step] = (),
) -> CodeCheck:
    """Check every key finding against the results it cites, and the verdict's rules.

    ``trusted`` is the alert and request text: values from it need no citation.
    """
    findings = [
        _check_finding(n, kf.finding + "\n" + kf.evidence, kf.evidence_refs, evidence, trusted)
        for n, kf in enumerate(conclusion.key_findings)
    ]
    check = CodeCheck(findings=findings, technique_notes=resolve(conclusion.techniques)[1])
    check.verdict_problems = _verdict_problems(conclusion, check, steps)
    return check


def _check_finding(
    index: int, text: str, refs: Sequence[str], evidence: Evidence, trusted: str
) -> FindingCheck:
    problems: list[str] = []
    cited: list[str] = [trusted]
    names = [normalize_ref(r) for r in refs if r.strip()]
    for ref in names:
        if ref == ALERT_REF:
            continue
        item = evidence.get(ref)
        if item is None:
            problems.append(f"cites {ref!r}, which is not a tool call of this investigation")
        elif not item.ok:
            problems.append(f"cites {ref!r}, which returned an error, not a result")
        else:
            cited.append(item.searchable())
    if not names and evidence.items:
        problems.append("cites no evidence reference")
    problems += check_text(text, "\n".join(cited))
    return FindingCheck(index=index, verified=not problems, refs=names, problems=problems)


def _verdict_problems(conclusion: Conclusion, check: CodeCheck, steps: Sequence[Step]) -> list[str]:
    problems: list[str] = []
    verdict, confidence = conclusion.verdict, conclusion.confidence
    if verdict == "true_positive" and not conclusion.key_findings:
        problems.append("verdict true_positive with no key finding to support it")
    ran = [s for s in steps if s.status in ("done", "failed")]
    failed = [s for s in ran if s.status == "failed"]
    if steps and verdict != "inconclusive" and not any(s.status == "done" for s in steps):
        problems.append(f"verdict {verdict} although no step completed")
    if confidence == "high" and ran and len(failed) * 2 >= len(ran):
        problems.append(
            f"confidence high although {len(failed)} of {len(ran)} steps failed; lower it"
        )
    if confidence == "high" and check.findings and check.verified == 0:
        problems.append("confidence high although no key finding is verified")
    return problems
