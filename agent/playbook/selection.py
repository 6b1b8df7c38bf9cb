"""Selecting the team playbook's bullets for one investigation (before planning).

Only ``active`` bullets in scope are candidates: ``global`` ones, ``source:<s>`` for
alerts from ``s`` and ``channel:<C>`` for conversations in Slack channel ``C``. A
candidate is relevant when a trigger matches (alert source, an indicator value or an
IP inside a trigger network, an indicator kind, a keyword) or when its text ranks for
the request and alert under BM25 (``rank_bm25.BM25L`` over the candidates, in
Python, so it works the same on SQLite and PostgreSQL). BM25L gives every document
the same positive baseline for query terms that match nothing; an empty sentinel
document measures it, so a bullet sharing no term with the alert scores exactly 0.

Relevance is weighted by reliability, ``(helpful + a) / (helpful + harmful + a + b)``
with the priors ``a``/``b`` from ``playbook.prior_*`` (a new bullet starts at 0.5, not
at 0), then the best are kept, at most ``playbook.max_bullets`` and
``playbook.max_tokens`` in all. Bullets whose ``tools`` trigger names tools go to the
steps that may call one of those tools (and to the planner and concluder).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from config.settings import PlaybookSettings
from store.playbook.bullets import PlaybookBullet

CONTENT_CHARS = 500
_WORD = re.compile(r"[a-z0-9][a-z0-9_.:/@-]*[a-z0-9]|[a-z0-9]", re.IGNORECASE)
_PIECES = re.compile(r"[._:/@-]+")
STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was "
    "were will with not no any all this these those our we you your alert alerts investigate "
    "investigation please check".split()
)


def tokens(text: str) -> list[str]:
    """Lower-case words for BM25; dotted or dashed words also count by their parts."""
    out: list[str] = []
    for match in _WORD.finditer(text.lower()):
        word = match.group(0)
        parts = [p for p in _PIECES.split(word) if p]
        out.extend(t for t in dict.fromkeys([word, *parts]) if t not in STOPWORDS)
    return out


@dataclass(frozen=True)
class Situation:
    """What the selection looks at: the request, the alert and where it happens."""

    text: str
    source: str | None = None
    channel: str | None = None
    indicators: Sequence[tuple[str, str]] = ()  # (kind, value)


@dataclass
class Selected:
    """A chosen bullet, with why it was chosen."""

    bullet: PlaybookBullet
    score: float
    reasons: list[str] = field(default_factory=list)

    def as_prompt(self) -> dict[str, Any]:
        """What the templates get: id, kind, one-line content and the tools trigger."""
        content = " ".join(self.bullet.content.split())
        if len(content) > CONTENT_CHARS:
            content = content[: CONTENT_CHARS - 1] + "…"
        return {
            "id": self.bullet.id,
            "kind": self.bullet.kind,
            "content": content,
            "tools": list(self.bullet.triggers.tools),
        }


def reliability(bullet: PlaybookBullet, settings: PlaybookSettings) -> float:
    """The share of helpful tags, smoothed by the priors (0.5 for a new bullet)."""
    a, b = settings.prior_helpful, settings.prior_harmful
    total = bullet.helpful + bullet.harmful + a + b
    return (bullet.helpful + a) / total if total else 0.5


def in_scope(bullet: PlaybookBullet, situation: Situation) -> bool:
    """``global``, or the alert's ``source:``, or the conversation's ``channel:``."""
    kind, _, value = bullet.scope.partition(":")
    if kind == "global":
        return True
    if kind == "source":
        return situation.source is not None and value.lower() == situation.source.lower()
    if kind == "channel":
        return situation.channel is not None and value == situation.channel
    return False  # an unknown scope never matches: fail closed


def trigger_hits(bullet: PlaybookBullet, situation: Situation) -> list[str]:
    """Which of the bullet's triggers match (source, indicator, kind, keyword)."""
    triggers = bullet.triggers
    hits: list[str] = []
    if situation.source and situation.source.lower() in {s.lower() for s in triggers.sources}:
        hits.append(f"source {situation.source}")
    for value in triggers.indicators:
        hits += [f"indicator {v}" for _, v in situation.indicators if _indicator_match(value, v)]
    kinds = {k.lower() for k in triggers.indicator_kinds}
    hits += sorted({f"kind {k}" for k, _ in situation.indicators if k.lower() in kinds})
    words = set(tokens(situation.text))
    for keyword in triggers.keywords:
        needed = tokens(keyword)
        if needed and all(t in words for t in needed):
            hits.append(f"keyword {keyword}")
    return hits


def _indicator_match(trigger: str, value: str) -> bool:
    if trigger.strip().lower() == value.strip().lower():
        return True
    try:
        network = ipaddress.ip_network(trigger.strip(), strict=False)
        return ipaddress.ip_address(value.strip()) in network
    except ValueError:
        return False


def bm25_scores(documents: Sequence[list[str]], query: list[str]) -> list[float]:
    """BM25L score of each document for ``query``, minus the no-match baseline (≥ 0)."""
    if not documents or not query:
        return [0.0] * len(documents)
    from rank_bm25 import BM25L  # numpy behind it: imported when first needed

    model = BM25L([*documents, []])  # the empty sentinel scores the baseline
    scores = [float(s) for s in model.get_scores(query)]
    baseline = scores.pop()
    return [max(s - baseline, 0.0) for s in scores]


def estimate_tokens(text: str) -> int:
    """A cheap token estimate (about four characters per token, plus the id line)."""
    return len(text) // 4 + 8


def select(
    bullets: Iterable[PlaybookBullet], situation: Situation, settings: PlaybookSettings
) -> list[Selected]:
    """The relevant active bullets, best first, within the count and token limits."""
    candidates = [b for b in bullets if b.status == "active" and in_scope(b, situation)]
    if not candidates or settings.max_bullets == 0:
        return []
    documents = [tokens(f"{b.content} {' '.join(b.triggers.keywords)}") for b in candidates]
    text_scores = bm25_scores(documents, tokens(situation.text))
    top = max(text_scores, default=0.0) or 1.0
    scored: list[Selected] = []
    for bullet, text_score in zip(candidates, text_scores, strict=True):
        hits = trigger_hits(bullet, situation)
        relevance = min(len(hits), 3) * 0.5 + text_score / top
        if relevance <= 0:
            continue
        reasons = hits + ([f"text {text_score:.2f}"] if text_score > 0 else [])
        score = relevance * (0.5 + reliability(bullet, settings))
        scored.append(Selected(bullet, round(score, 4), reasons))
    scored.sort(key=lambda s: (-s.score, s.bullet.id))
    chosen: list[Selected] = []
    spent = 0
    for item in scored:
        cost = estimate_tokens(item.bullet.content)
        if len(chosen) >= settings.max_bullets or spent + cost > settings.max_tokens:
            continue
        chosen.append(item)
        spent += cost
    return chosen


def for_step(playbook: Sequence[dict[str, Any]], step_tools: Iterable[str]) -> list[dict[str, Any]]:
    """The bullets a step sees: those without a tools trigger, or naming one of its tools."""
    tools = set(step_tools)
    return [b for b in playbook if not b["tools"] or tools & set(b["tools"])]


def valid_ids(cited: Iterable[str], loaded: Iterable[str]) -> list[str]:
    """The cited ids that were really in the prompt (anything else is ignored)."""
    allowed = set(loaded)
    return [i for i in dict.fromkeys(cited) if i in allowed]
