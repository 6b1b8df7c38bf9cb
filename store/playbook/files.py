"""The playbook as reviewable YAML files, laid out like seed 002's knowledge base.

::

    DIR/global/<kind>s/<id>.yaml             scope "global"
    DIR/groups/<source>/<kind>s/<id>.yaml    scope "source:<source>"  (alert source)
    DIR/projects/<channel>/<kind>s/<id>.yaml scope "channel:<channel>" (Slack channel)

One bullet per file: ``bullet_id``, ``kind``, ``scope``, ``status``, ``triggers``,
``content`` (a block), ``stats`` (helpful, harmful, times loaded / used),
``provenance`` and the times. ``write_dir`` then ``read_dir`` gives the same bullets
back, so a team can keep its playbook in git and review changes as diffs.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

import yaml

from store.playbook.bullets import PlaybookBullet
from store.playbook.rules import BulletInvalid, check

_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class PlaybookFileError(Exception):
    """A playbook file cannot be read; the message names the file."""


def relative_path(bullet: PlaybookBullet) -> Path:
    """Where the bullet's file goes inside the export folder."""
    kind_dir = f"{bullet.kind}s"
    scope, _, value = bullet.scope.partition(":")
    if scope == "global":
        base = Path("global")
    elif scope in ("source", "channel") and _SAFE.match(value):
        base = Path("groups" if scope == "source" else "projects") / value
    else:
        raise PlaybookFileError(f"bullet {bullet.id!r} has an unusable scope {bullet.scope!r}")
    if not _SAFE.match(bullet.id):
        raise PlaybookFileError(f"bullet id {bullet.id!r} cannot be a file name")
    return base / kind_dir / f"{bullet.id}.yaml"


def to_document(bullet: PlaybookBullet) -> dict[str, Any]:
    """The bullet in the file's shape (seed 002: triggers, content, stats, evidence)."""
    data = bullet.model_dump(mode="json")
    return {
        "bullet_id": data["id"],
        "kind": data["kind"],
        "scope": data["scope"],
        "status": data["status"],
        "op": data["op"],
        "targets": data["targets"],
        "created_at": data["created_at"],
        "updated_at": data["updated_at"],
        "triggers": {k: v for k, v in data["triggers"].items() if v},
        "content": data["content"],
        "stats": {
            "helpful": data["helpful"],
            "harmful": data["harmful"],
            "times_loaded": data["times_loaded"],
            "times_used": data["times_used"],
        },
        "provenance": data["provenance"],
    }


def from_document(doc: Any, where: str) -> PlaybookBullet:
    """A bullet from a file's content; ``PlaybookFileError`` naming ``where`` if invalid."""
    if not isinstance(doc, dict) or "bullet_id" not in doc:
        raise PlaybookFileError(f"{where}: not a playbook bullet (no bullet_id)")
    stats = doc.get("stats") or {}
    values = {
        "id": doc["bullet_id"],
        "content": doc.get("content"),
        "kind": doc.get("kind", "fact"),
        "scope": doc.get("scope", "global"),
        "status": doc.get("status", "proposed"),
        "op": doc.get("op", "add"),
        "targets": doc.get("targets") or [],
        "triggers": doc.get("triggers") or {},
        "helpful": stats.get("helpful", 0),
        "harmful": stats.get("harmful", 0),
        "times_loaded": stats.get("times_loaded", 0),
        "times_used": stats.get("times_used", 0),
        "provenance": doc.get("provenance") or {},
        "created_at": doc.get("created_at"),
        "updated_at": doc.get("updated_at"),
    }
    try:
        bullet = PlaybookBullet.model_validate(values)
    except ValueError as exc:
        first = str(exc).splitlines()[:3]
        raise PlaybookFileError(f"{where}: {' '.join(first)}") from None
    try:
        check(bullet.content, bullet.scope)
    except BulletInvalid as exc:
        raise PlaybookFileError(f"{where}: {exc}") from None
    relative_path(bullet)  # the id must be usable as a path
    return bullet


def write_dir(bullets: list[PlaybookBullet], folder: Path) -> list[Path]:
    """Write one YAML file per bullet under ``folder``; returns the paths written.

    All or nothing: every file is rendered (and its path checked) before any is
    written, written into a staging folder beside ``folder``, then moved into place;
    a failure leaves ``folder`` as it was.
    """
    files = {folder / relative_path(b): _text(b) for b in bullets}  # raises before writing
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".playbook-export-") as staging:
        new, old = Path(staging) / "new", Path(staging) / "old"
        for path, text in files.items():
            _move_in(new / path.relative_to(folder), text=text)
        done: list[Path] = []
        try:
            for path in files:
                rel = path.relative_to(folder)
                if path.exists():  # kept until every file is in place
                    _move_in(old / rel, source=path)
                _move_in(path, source=new / rel)
                done.append(path)
        except BaseException:
            for path in done:
                path.unlink(missing_ok=True)
            for kept in old.rglob("*.yaml"):
                os.replace(kept, folder / kept.relative_to(old))
            raise
    return list(files)


def _move_in(target: Path, *, text: str | None = None, source: Path | None = None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if text is not None:
        target.write_text(text, encoding="utf-8")
    elif source is not None:
        os.replace(source, target)


def _text(bullet: PlaybookBullet) -> str:
    return yaml.safe_dump(
        to_document(bullet), sort_keys=False, allow_unicode=True, default_flow_style=False
    )


def read_dir(folder: Path) -> list[PlaybookBullet]:
    """Every bullet in ``folder``'s YAML files (sorted by path)."""
    if not folder.is_dir():
        raise PlaybookFileError(f"{folder} is not a folder")
    bullets = []
    for path in sorted(folder.rglob("*.yaml")):
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise PlaybookFileError(f"{path}: {str(exc).splitlines()[0]}") from None
        bullets.append(from_document(doc, str(path)))
    return bullets
