"""The README a newcomer reads in five minutes, and links that lead somewhere: every
relative link in ``README.md`` and ``docs/*.md`` names a file (and heading) that exists.
The README's first command, ``socbot demo``, is run by ``tests/cli/test_demo.py``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\]\(([^)#\s]+)?(?:#([^)\s]+))?\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_readme_is_short_and_starts_with_the_demo() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 220
    first_command = re.search(r"```bash\n(?:.*\n)*?(uv run socbot \w+)", text)
    assert first_command is not None and first_command.group(1) == "uv run socbot demo"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_relative_links_lead_somewhere(doc: Path) -> None:
    for target, anchor in _LINK.findall(doc.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path = (doc.parent / target).resolve() if target else doc
        assert path.exists(), f"{doc.name} links to missing {target}"
        if anchor and path.suffix == ".md":
            assert anchor in _anchors(path), f"{doc.name} links to missing #{anchor} in {target}"
