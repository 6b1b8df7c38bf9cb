"""Compiled prompt templates are kept between starts: a start loads them, never stale."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Environment

from agent.prompts import Prompts


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # the cache's parent
    (tmp_path / "tmp").mkdir()
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "hello.j2").write_text("hello {{ name }}\n", encoding="utf-8")
    (folder / "bye.j2").write_text("bye {{ name }}\n", encoding="utf-8")
    return folder


def _no_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    def compile_(*_: Any, **__: Any) -> Any:
        raise AssertionError("compiled again")

    monkeypatch.setattr(Environment, "compile", compile_)


def test_a_second_start_loads_the_compiled_templates(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Prompts(root)
    cached = list(Path(tempfile.gettempdir()).glob("_jinja2-cache-*/*.cache"))
    assert len(cached) == 2
    with monkeypatch.context() as patch:
        _no_compiling(patch)
        again = Prompts(root)
    assert again.templates["hello.j2"].render(name="ada") == "hello ada\n"


def test_an_edited_template_is_compiled_again(root: Path) -> None:
    Prompts(root)
    (root / "hello.j2").write_text("hi {{ name }}\n", encoding="utf-8")
    assert Prompts(root).templates["hello.j2"].render(name="ada") == "hi ada\n"


def test_without_a_usable_cache_folder_templates_are_compiled(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (Path(tempfile.gettempdir()) / "not-a-folder").write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(Path(tempfile.gettempdir()) / "not-a-folder"))
    assert Prompts(root).templates["bye.j2"].render(name="ada") == "bye ada\n"
