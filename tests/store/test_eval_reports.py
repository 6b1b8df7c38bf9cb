"""The eval report format and its reader (store/eval_reports.py): what the pages may open.

A run is opened by a plain folder name under the root: a path, ``..`` or a link out
of the root is no run; a folder without a report or with a broken one is left out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from store.eval_reports import REPORT, EvalRuns
from tests.bot.web.eval_seed import write_run


def test_runs_are_listed_newest_first_and_loaded_by_name(tmp_path: Path) -> None:
    write_run(tmp_path, "core-old")
    newer = write_run(tmp_path, "core-new", baseline=True)
    assert newer.run is not None
    newer_meta = newer.run.model_copy(update={"started": "2026-11-26"})
    (tmp_path / "core-new" / REPORT).write_text(
        newer.model_copy(update={"run": newer_meta}).model_dump_json(by_alias=True)
    )
    (tmp_path / "no-report" / "results").mkdir(parents=True)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / REPORT).write_text('{"summary": "not figures"}')
    runs = EvalRuns(tmp_path)
    assert [r.name for r in runs.listed()] == ["core-new", "core-old"]
    found = runs.load("core-new")
    assert found is not None and found.baseline is not None
    assert found.baseline.accuracy_diff == -0.5
    assert found.results[1].failed_gates() == ["verdict", "recall"]


@pytest.mark.parametrize("name", ["..", "../outside", "/etc", "a/b", ".hidden", "", "x" * 300])
def test_a_name_that_is_not_a_plain_folder_is_no_run(tmp_path: Path, name: str) -> None:
    root = tmp_path / "runs"
    write_run(root, "kept")
    write_run(tmp_path, "outside")
    assert EvalRuns(root).load(name) is None


def test_a_link_out_of_the_root_is_no_run(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    write_run(tmp_path, "secret")
    root.mkdir()
    (root / "link").symlink_to(tmp_path / "secret")
    assert EvalRuns(root).load("link") is None
    assert EvalRuns(root).listed() == []
    assert EvalRuns(tmp_path / "missing").listed() == []
