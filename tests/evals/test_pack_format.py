"""Packs with ``pack.toml``: shared tables plus injected rows, and the loader's refusals."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from config.settings import Settings
from evals.sandbox import scenario_settings
from evals.scenario import ScenarioError, load_pack
from tests.evals.tiny_pack import write_tiny_pack


def test_a_scenario_reads_the_shared_background_and_its_own_rows(tmp_path: Path) -> None:
    pack = write_tiny_pack(tmp_path)
    spray, trip = load_pack(str(pack))
    assert (spray.id, trip.id) == ("spray", "trip")
    assert spray.truth.attack and not trip.truth.attack and spray.pair == "trip"
    assert trip.truth.verdicts == ["benign", "inconclusive"]
    assert spray.limits.max_answer_chars == 3000  # the pack's [gates]
    assert spray.limits.cite_values and spray.genuine is False
    (table,) = spray.tables
    assert table.name == "corp.identity.okta_system_log"
    assert [f.name for f in table.files] == ["part-0.parquet", "okta_system_log.parquet"]
    spec = scenario_settings(Settings(), spray, tmp_path / "links").logs.tables[0]
    assert spec.path is not None
    rows = duckdb.sql(f"SELECT client_ip FROM read_parquet('{spec.path}')").fetchall()
    assert len(rows) == 22 and ("91.92.240.17",) in rows and ("hotel-okura",) not in rows


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def _alert(pack: Path, name: str, **change: str) -> None:
    path = pack / "scenarios" / name / "alert.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))


TRIP = "scenarios/trip/scenario.toml"
BREAKAGES: list[tuple[Callable[[Path], None], str]] = [
    (lambda p: _alert(p, "spray", note="from 91.92.240.17"), "is in the alert already"),
    (lambda p: _alert(p, "spray", note="x"), "has another alert"),
    (lambda p: _alert(p, "trip", source="OTRF replay"), "says 'otrf'"),
    (lambda p: _edit(p / "pack.toml", "outcome", "outcome (SYNTHETIC)"), "says 'synthetic'"),
    (lambda p: _edit(p / "scenarios/trip/scenario.toml", '["benign", "inconclusive"]',
                     '["true_positive_no_impact", "benign"]'), "on the same side"),
    (lambda p: _edit(p / "scenarios/trip/scenario.toml", 'pair = "spray"', 'pair = "nope"'),
     "does not name it back"),
    (lambda p: _edit(p / TRIP, '"MFA satisfied from the booked trip\'s hotel network"', '" "'),
     "rationale"),
    (lambda p: _edit(p / "scenarios/trip/scenario.toml", 'table = "okta_system_log"',
                     'table = "dns"'), "not listed"),
    (lambda p: _edit(p / "scenarios/trip/scenario.toml", '{ compromised = "j.doe@corp.example" }',
                     "{}"), "forbidden claim needs"),
    (lambda p: _edit(p / TRIP, "genuine", 'tables = ["okta_system_log", "dns"]\ngenuine'),
     "not in pack.toml"),
]  # fmt: skip


@pytest.mark.parametrize(("breakage", "message"), BREAKAGES)
def test_a_broken_pack_is_one_line_naming_it(
    tmp_path: Path, breakage: Callable[[Path], None], message: str
) -> None:
    pack = write_tiny_pack(tmp_path)
    breakage(pack)
    with pytest.raises(ScenarioError) as caught:
        load_pack(str(pack))
    assert "\n" not in str(caught.value) and message in str(caught.value)
