"""The configuration reference (``docs/configuration-reference.md``), generated from the
settings models: every setting with its ``SOCBOT_*`` variable, type, default and meaning.

``python -m config.reference`` rewrites the file; ``tests/config/test_config_reference.py``
fails when the checked-in file differs from what the models say.
"""

from __future__ import annotations

import json
import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined, to_jsonable_python

from config.settings import WELL_KNOWN_ENV, Settings

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "docs" / "configuration-reference.md"
EXAMPLE = ROOT / "config" / "socbot.example.toml"  # its comments explain what fields do not
_SECTION = re.compile(r"^\[\[?([a-z_.]+)\]\]?")
_KEY = re.compile(r"^#?\s*([a-z_]+)\s*=\s*(.*)$")
HEADER = """\
# Configuration reference

Generated from the settings models (`config/`) by `python -m config.reference`; do not
edit by hand (`tests/config/test_config_reference.py` fails when it is out of date).
How settings are read, and the main ones explained: [configuration.md](configuration.md).

Every setting can be set in `config/socbot.toml` (or `socbot.local.toml` beside it) under
its section, or with its environment variable: `SOCBOT_` and the path in capitals, joined
with `__`. Lists and tables are JSON in a variable:
`SOCBOT_SLACK__ALERT_CHANNELS='["C0ALERTS01"]'`.
Secrets (marked *secret*) belong in the environment, never in a file.
"""


@dataclass(frozen=True)
class Names:
    """What the models do not say: well-known variables, the example file's comments."""

    well_known: dict[tuple[str, ...], str]
    comments: dict[str, str]


def reference() -> str:
    """The whole reference as Markdown."""
    names = Names(
        {path: name for name, path in WELL_KNOWN_ENV.items()},
        example_comments(EXAMPLE.read_text(encoding="utf-8")),
    )
    parts = [HEADER]
    top = [(n, f) for n, f in Settings.model_fields.items() if _model(f.annotation) is None]
    parts.append(_table("Top level", "", top, names))
    for name, field in Settings.model_fields.items():
        model = _model(field.annotation)
        if model is not None:
            parts += _sections(name, model, names)
    return "\n".join(parts)


def _sections(path: str, model: type[BaseModel], names: Names) -> list[str]:
    doc = (model.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
    fields = [(n, f) for n, f in model.model_fields.items() if _model(f.annotation) is None]
    out = [_table(f"[{path}]", doc, fields, names, prefix=path)]
    for name, field in model.model_fields.items():
        inner = _model(field.annotation)
        if inner is not None:
            out += _sections(f"{path}.{name}", inner, names)
    return out


def _table(
    title: str,
    doc: str,
    fields: list[tuple[str, FieldInfo]],
    names: Names,
    prefix: str = "",
) -> str:
    lines = [f"## {title}", ""]
    if doc and not doc.startswith(("A base class", "Base class")):
        lines += [doc, ""]
    lines += ["| setting | variable | type | default | meaning |", "|---|---|---|---|---|"]
    for name, field in fields:
        path = f"{prefix}.{name}" if prefix else name
        variable = "SOCBOT_" + "__".join(path.split(".")).upper()
        also = names.well_known.get(tuple(path.split(".")))
        if also:
            variable += f" or {also}"
        lines.append(
            f"| `{path}` | `{variable}` | {_type(field.annotation)} | {_default(field)} | "
            f"{_meaning(field, names.comments.get(path, ''))} |"
        )
    return "\n".join(lines) + "\n"


def _model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _type(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        arms = [a for a in get_args(annotation) if a is not type(None)]
        return " or ".join(_type(a) for a in arms) + " (optional)"
    if origin is not None:
        args = ", ".join(_type(a) for a in get_args(annotation))
        name = getattr(origin, "__name__", str(origin))
        return (
            f"{name}[{args}]"
            if name != "Literal"
            else " \\| ".join(f"`{a}`" for a in get_args(annotation))
        )
    if annotation is SecretStr:
        return "string, *secret*"
    return getattr(annotation, "__name__", str(annotation)).replace("str", "string")


def _default(field: FieldInfo) -> str:
    if field.default is PydanticUndefined and field.default_factory is None:
        return "required"
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "—"
    if isinstance(value, dict) and len(value) > 2:
        return f"{len(value)} built-in entries"
    text = json.dumps(to_jsonable_python(value), ensure_ascii=False)
    return f"`{text}`" if len(text) <= 60 else f"`{text[:57]}…`"


def _meaning(field: FieldInfo, comment: str) -> str:
    """The field's description, else what the example settings file says of it."""
    text = (field.description or comment).rstrip(":")
    if not text and "SecretStr" in str(field.annotation):
        text = "a secret: set the variable, never the file"
    return text.replace("|", "\\|").replace("\n", " ") or "—"


def example_comments(text: str) -> dict[str, str]:
    """``section.key`` → the comment beside it in the example file (or just above it)."""
    comments: dict[str, str] = {}
    section, above = "", list[str]()
    for raw in text.splitlines():
        line = raw.strip()
        header = _SECTION.match(line)
        key = _KEY.match(line)
        if header:
            section, above = header.group(1), []
        elif key:
            _value, _, beside = key.group(2).partition(" # ")
            note = beside.strip() or " ".join(above)
            path = f"{section}.{key.group(1)}" if section else key.group(1)
            comments.setdefault(path, note.strip())
            above = []
        elif line.startswith("#"):
            above.append(line.lstrip("# ").strip())
        else:
            above = []
    return comments


def main() -> None:
    """Write the reference (``--check``: exit 1 if the file is out of date instead)."""
    text = reference()
    if "--check" in sys.argv:
        sys.exit(0 if OUTPUT.read_text(encoding="utf-8") == text else 1)
    OUTPUT.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
