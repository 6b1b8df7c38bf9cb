"""``docs/configuration-reference.md`` is what the settings models say today: regenerate it
with ``python -m config.reference`` after changing a setting."""

from __future__ import annotations

from config.reference import OUTPUT, example_comments, reference
from config.settings import Settings


def test_the_checked_in_reference_is_up_to_date() -> None:
    assert OUTPUT.read_text(encoding="utf-8") == reference(), (
        "docs/configuration-reference.md is out of date: run `python -m config.reference`"
    )


def test_every_setting_is_in_the_reference() -> None:
    text = reference()
    for name, field in Settings.model_fields.items():
        section = field.annotation
        inner = getattr(section, "model_fields", None)
        paths = [f"{name}.{key}" for key in inner] if inner else [name]
        for path in paths:
            assert f"| `{path}` |" in text or f"## [{path}]" in text, path


def test_example_comments_beside_or_above_a_key() -> None:
    example = """
# top comment about nothing

[limits]
max_steps = 8      # steps per plan
# the deadline, as prose
# over two lines
# deadline_s = 600.0
"""
    assert example_comments(example) == {
        "limits.max_steps": "steps per plan",
        "limits.deadline_s": "the deadline, as prose over two lines",
    }
