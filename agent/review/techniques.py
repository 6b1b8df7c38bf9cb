"""The ATT&CK techniques of a conclusion, checked against the bundled catalogue.

The model names technique ids; code keeps an id only when ``alerts.attack`` knows it as a
current Enterprise technique (not deprecated, not revoked), once, at most
``MAX_TECHNIQUES`` of them, and takes name and tactic from the catalogue, never from the
model. ``resolve`` says what it dropped and why: the code check (``agent.review.grounding``)
records that as notes of the review. ``with_catalogue`` is what every conclusion goes
through before anyone sees it, reviewed or not.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent.concluder import Conclusion, Technique
from alerts.attack import Catalogue, enterprise

MAX_TECHNIQUES = 8


def resolve(
    techniques: Sequence[Technique], catalogue: Catalogue | None = None
) -> tuple[list[Technique], list[str]]:
    """The techniques to keep (named and placed by the catalogue) and one note per drop."""
    catalogue = catalogue or enterprise()
    kept: list[Technique] = []
    notes: list[str] = []
    for claimed in techniques:
        judgement = catalogue.judge(claimed.id)
        entry = judgement.entry
        if entry is None:
            notes.append(f"ATT&CK: {judgement.problem}; dropped")
        elif any(t.id == entry.id for t in kept):
            continue
        elif len(kept) == MAX_TECHNIQUES:
            notes.append(f"ATT&CK: {entry.id} dropped: at most {MAX_TECHNIQUES} techniques")
        else:
            kept.append(Technique(id=entry.id, name=entry.name, tactic=entry.tactic))
    return kept, notes


def with_catalogue(conclusion: Conclusion) -> Conclusion:
    """``conclusion`` with only catalogued techniques, named by the catalogue."""
    kept, _ = resolve(conclusion.techniques)
    if kept == conclusion.techniques:
        return conclusion
    return conclusion.model_copy(update={"techniques": kept})
