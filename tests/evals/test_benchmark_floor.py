"""Issue 31's floor, computed on the default pack: reading the alert alone and parroting
the tool results must not pass it.

The limits apply to the pack built for them (``FLOORS``, by the pack's name). The old
``core`` pack cannot meet them (its alerts name their verdict): on it the test asserts
its figures exactly as measured, so nothing is skipped and a change to them is seen.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from evals.aggregate import verdict_rates
from evals.guesser import guess, guesses
from evals.report import scored
from evals.scenario import Scenario, load_pack
from tests.fakes.parrot import PARENTS, parrot


@dataclass(frozen=True)
class Floor:
    guess_accuracy: float  # the keyword guess's verdict accuracy, at most
    guess_pass: float  # its pass rate, at most
    parrot_pass: float  # the parroting answer's pass rate, at most


FLOORS = {"org": Floor(guess_accuracy=0.60, guess_pass=0.05, parrot_pass=0.10)}
CORE = {"guess_accuracy": round(26 / 35, 4), "guess_pass": 0.0, "parrot_pass": 0.0}


@pytest.fixture(scope="module")
def pack() -> list[Scenario]:
    return load_pack(None)


def figures(pack: list[Scenario]) -> dict[str, float]:
    guessed = verdict_rates(scored(pack, guesses(pack)))
    parroted = verdict_rates(scored(pack, [parrot(s) for s in pack]))
    assert None not in (guessed["verdict_accuracy"], guessed["pass_rate"], parroted["pass_rate"])
    return {
        "guess_accuracy": round(guessed["verdict_accuracy"] or 0.0, 4),
        "guess_pass": round(guessed["pass_rate"] or 0.0, 4),
        "parrot_pass": round(parroted["pass_rate"] or 0.0, 4),
    }


def test_guessing_and_parroting_do_not_pass_the_default_pack(pack: list[Scenario]) -> None:
    name = pack[0].pack
    measured = figures(pack)
    floor = FLOORS.get(name)
    if floor is None:
        assert name == "core", f"the default pack {name!r} has no floor in FLOORS"
        assert measured == CORE  # core's alerts give the verdict away: known, not hidden
        return
    assert measured["guess_accuracy"] <= floor.guess_accuracy, measured
    assert measured["guess_pass"] <= floor.guess_pass, measured
    assert measured["parrot_pass"] <= floor.parrot_pass, measured


def test_the_parrot_pastes_every_value_it_saw_and_cites_it(pack: list[Scenario]) -> None:
    """The parrot is what it claims to be: every value of every result, cited."""
    scenario = next(s for s in pack if s.tables and s.truth.values)
    attempt = parrot(scenario)
    assert attempt.conclusion is not None
    pasted = " ".join(f["finding"] for f in attempt.conclusion["key_findings"])
    cited = {ref for f in attempt.conclusion["key_findings"] for ref in f["evidence_refs"]}
    assert cited == set(attempt.evidence)
    assert [t["id"] for t in attempt.conclusion["techniques"]] == PARENTS
    assert attempt.conclusion["verdict"] == guess(scenario.alert)["verdict"]
    for text in attempt.evidence.values():
        assert all(v in pasted for v in _cells(text)), scenario.id


def _cells(text: str) -> list[str]:
    data = json.loads(text)
    rows = data.get("rows") if isinstance(data, dict) else None
    return [str(v) for row in rows or [] for v in row][:50]
