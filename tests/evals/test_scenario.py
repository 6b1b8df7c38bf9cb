"""Scenario folders: the loader's one-line errors, and the bundled pack's promises."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from alerts.catalogue import load_catalogue
from alerts.parse import parse_alert
from evals.scenario import PACKS_DIR, ScenarioError, load_pack, load_scenario

CORE = PACKS_DIR / "core"
GOOD = CORE / "okta-password-spray"


def copy_of(tmp_path: Path, name: str = "okta-password-spray") -> Path:
    folder = tmp_path / name
    shutil.copytree(CORE / name, folder)
    return folder


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        (lambda f: (f / "alert.json").unlink(), "missing alert.json"),
        (lambda f: (f / "alert.json").write_text("{nope"), "invalid JSON"),
        (lambda f: (f / "alert.json").write_text("[1]"), "one JSON object"),
        (lambda f: (f / "scenario.toml").write_text("title = "), "scenario.toml"),
        (lambda f: _edit(f, 'verdict = "true_positive"', 'verdict = "maybe"'), "truth.verdicts"),
        (lambda f: _edit(f, '["high", "critical"]', '["critical", "low"]'), "upside down"),
        (lambda f: _edit(f, '"T1110.003"', '"1110"'), "not an ATT&CK technique id"),
        (lambda f: _edit(f, '"T1110.003"', '"T1073"'), "revoked"),
        (lambda f: shutil.rmtree(f / "logs"), "no file"),
        (lambda f: _edit(f, 'category = "identity"', 'category = "mainframe"'), "category"),
        (lambda f: (f / "intel.json").write_text('{"lookups": [{"x": 1}]}'), "intel.json"),
    ],
)
def test_a_broken_scenario_is_one_line_naming_it(
    tmp_path: Path, breakage: object, message: str
) -> None:
    folder = copy_of(tmp_path)
    breakage(folder)  # type: ignore[operator]
    with pytest.raises(ScenarioError) as caught:
        load_scenario(folder)
    text = str(caught.value)
    assert "\n" not in text and "okta-password-spray" in text and message in text


def _edit(folder: Path, old: str, new: str) -> None:
    path = folder / "scenario.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_unknown_pack_and_empty_selection_are_errors() -> None:
    with pytest.raises(ScenarioError, match="neither a bundled pack"):
        load_pack("no-such-pack")
    with pytest.raises(ScenarioError, match="matching"):
        load_pack(None, "zzz-none*")


def test_bundled_pack_keeps_its_promises() -> None:
    pack = load_pack("core")
    assert len(pack) >= 30
    not_attacks = [s for s in pack if s.truth.verdict != "true_positive"]
    assert len(not_attacks) * 3 >= len(pack)
    assert {s.category for s in pack} == {"cloud", "identity", "endpoint", "network"}
    assert any(not s.synthetic for s in pack)
    notice = (CORE / "NOTICE").read_text()
    catalogue = load_catalogue(None)
    titles = set()
    for s in pack:
        assert f"{s.id} [" in notice and s.origin and s.licence
        assert s.synthetic == ("SYNTHETIC" in notice.split(f"{s.id} [")[1].split("]")[0])
        titles.add(parse_alert(s.alert, catalogue=catalogue).title)
        for table in s.tables:  # every table is real JSON lines with rows
            lines = table.files[0].read_text().splitlines()
            assert lines and all(isinstance(json.loads(line), dict) for line in lines)
    assert len(titles) == len(pack)
    size = sum(f.stat().st_size for f in CORE.rglob("*") if f.is_file())
    assert size < 5_000_000
