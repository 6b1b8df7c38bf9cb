"""What an answer establishes from its investigation: values cited from the tool calls
that returned them, the share of findings verified, and the answer's length.

A must-establish value counts when a key finding (its ``finding`` or ``evidence``)
writes it **and** cites (``evidence_refs``) a tool call whose arguments or result hold
it (``Attempt.evidence``: each successful call's text, as the model saw it). The summary
and a citation of the alert establish nothing (the values are never in the alert).

The verified share is the review's (findings it verified against the results they
cite); without a review figure it is the same code check (``agent.review.grounding``)
run here over the recorded calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from agent.concluder import Conclusion
from agent.review.evidence import Evidence, EvidenceItem, normalize_ref
from agent.review.grounding import check_conclusion
from evals.normalise import contains, normalise
from evals.results import Attempt

_JSON_ESCAPE = re.compile(r'\\(["\\/])')


def as_read(result: str) -> str:
    """A call's text as a person reads its values: the JSON string escapes of quotes,
    backslashes and slashes undone (a registry path's one backslash is two in JSON)."""
    return _JSON_ESCAPE.sub(r"\1", result)


def findings(conclusion: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [f for f in conclusion.get("key_findings") or [] if isinstance(f, Mapping)]


def answer_parts(conclusion: Mapping[str, Any]) -> list[str]:
    """The summary and every finding's text and evidence."""
    parts = [str(conclusion.get("summary") or "")]
    for item in findings(conclusion):
        parts += [str(item.get("finding") or ""), str(item.get("evidence") or "")]
    return parts


def answer_chars(conclusion: Mapping[str, Any]) -> int:
    return sum(len(p) for p in answer_parts(conclusion))


def _refs(item: Mapping[str, Any]) -> list[str]:
    refs = item.get("evidence_refs") or []
    return [normalize_ref(r) for r in refs if isinstance(r, str)] if isinstance(refs, list) else []


def cited(
    conclusion: Mapping[str, Any], evidence: Mapping[str, str], values: Sequence[str]
) -> tuple[list[str], list[str]]:
    """``values`` split into those a finding establishes by citation, and the rest."""
    hits: set[str] = set()
    sources: dict[tuple[str, ...], str] = {}  # many findings cite the same calls
    for item in findings(conclusion):
        text = normalise(f"{item.get('finding') or ''}\n{item.get('evidence') or ''}")
        refs = tuple(r for r in _refs(item) if r in evidence)
        if refs not in sources:
            sources[refs] = normalise(as_read("\n".join(evidence[r] for r in refs)))
        source = sources[refs]
        hits |= {v for v in values if contains(text, v) and contains(source, v)}
    return [v for v in values if v in hits], [v for v in values if v not in hits]


def verified_share(attempt: Attempt, alert_text: str) -> float | None:
    """The share of key findings verified: the review's, else the code check's."""
    if attempt.review_findings:
        return (attempt.review_verified or 0) / attempt.review_findings
    if attempt.conclusion is None or not findings(attempt.conclusion):
        return None
    try:
        conclusion = Conclusion.model_validate(attempt.conclusion)
    except ValidationError:
        return None
    calls = Evidence()
    for ref, text in attempt.evidence.items():
        calls.items[normalize_ref(ref)] = EvidenceItem(ref, None, "", {}, True, text)
    check = check_conclusion(conclusion, calls, trusted=alert_text)
    return check.verified / len(check.findings)


def alert_text(alert: Mapping[str, Any]) -> str:
    return json.dumps(alert)
