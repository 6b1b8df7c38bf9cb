"""socbot keeps its bytecode cache where ``PYTHONDONTWRITEBYTECODE`` is set (``cli``'s
docstring): a fresh process importing the command line writes the cache of what it
imports, so the next start does not compile again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_command_line_writes_bytecode_despite_the_variable(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "cli", tree / "cli", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", "import cli.common, sys; print(sys.dont_write_bytecode)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
    cached = sorted(p.name.split(".")[0] for p in (tree / "cli" / "__pycache__").glob("*.pyc"))
    assert cached == ["common"]  # cli/__init__ itself is compiled before it turns the cache on
