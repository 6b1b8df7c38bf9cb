"""Every way into the playbook refuses what may not be there, with one line naming what
is allowed, and ``playbook export`` writes all its files or none (real SQLite, the
real ``socbot`` command through Typer's runner)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from cli.main import app
from store.db.engine import Database
from store.playbook.bullets import PlaybookBullet, PlaybookStore
from store.playbook.files import write_dir
from store.playbook.rules import BulletInvalid
from store.schema import Bullet

SCANNER = "203.0.113.0/24 is our external scanner (Qualys); scans from it are expected."
ALLOWED = "allowed: global, source:<alert source> (e.g. source:guardduty) or channel:<channel id>"


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)  # no config/socbot.toml here
    monkeypatch.setenv("SOCBOT_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'one.db'}")
    return CliRunner()


def error_line(result: object) -> str:
    output = str(getattr(result, "output", ""))
    assert getattr(result, "exit_code", 0) != 0, output
    [line] = [line for line in output.splitlines() if line.startswith("error:")]  # one line
    return line


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([SCANNER, "--scope", "galactic"], f"scope 'galactic' is not allowed; {ALLOWED}"),
        (
            [SCANNER, "--scope", "source:"],
            f"scope 'source:' needs a value after 'source:'; {ALLOWED}",
        ),
        (["   "], "content is empty: write the instruction or fact (one or two sentences)"),
        (
            [SCANNER, "--kind", "rumour"],
            "kind 'rumour' is not allowed; allowed: fact, pattern, anti_pattern, skill",
        ),
    ],
)
def test_playbook_add_refuses_with_one_line_naming_the_allowed_values(
    runner: CliRunner, args: list[str], expected: str
) -> None:
    assert expected in error_line(runner.invoke(app, ["playbook", "add", *args]))
    assert "pb-" not in runner.invoke(app, ["playbook", "list"]).output  # nothing added


def test_playbook_import_of_a_blank_bullet_imports_nothing(
    runner: CliRunner, tmp_path: Path
) -> None:
    assert runner.invoke(app, ["playbook", "add", SCANNER]).exit_code == 0
    folder = tmp_path / "book"
    assert runner.invoke(app, ["playbook", "export", str(folder)]).exit_code == 0
    [good] = list(folder.rglob("*.yaml"))
    blank = yaml.safe_load(good.read_text())
    blank.update(bullet_id="pb-blank001", content="  \n ", status="active")
    (good.parent / "pb-blank001.yaml").write_text(yaml.safe_dump(blank))
    (good.parent / "pb-zz.yaml").write_text(yaml.safe_dump({**blank, "bullet_id": "pb-zz"}))

    other = tmp_path / "two.db"
    runner.env = {"SOCBOT_DATABASE_URL": f"sqlite+aiosqlite:///{other}"}
    line = error_line(runner.invoke(app, ["playbook", "import", str(folder)]))
    assert line.endswith(
        "pb-blank001.yaml: content is empty: write the instruction or fact (one or two sentences)"
    )
    assert "pb-" not in runner.invoke(app, ["playbook", "list"]).output  # not even the good one


async def test_export_writes_every_file_or_none(db: Database, tmp_path: Path) -> None:
    store = PlaybookStore(db)
    kept = await store.add(PlaybookBullet(id="pb-kept0001", content=SCANNER, status="active"))
    async with db.session() as session:  # a bullet stored before scopes were checked
        session.add(
            Bullet(
                id="pb-odd00001",
                content="x",
                kind="fact",
                scope="galactic",
                triggers={},
                status="active",
                op="add",
                targets=[],
                provenance={},
            )
        )
    folder = tmp_path / "book"
    with pytest.raises(Exception, match="unusable scope 'galactic'"):
        write_dir(await store.bullets(["active"]), folder)
    assert not folder.exists() or not list(folder.rglob("*.yaml"))

    # a failure while moving the files into place puts the folder back as it was
    written = write_dir([kept], folder)
    before = {p: p.read_text() for p in written}
    second = kept.model_copy(update={"id": "pb-new00001"})
    changed = kept.model_copy(update={"content": "changed"})
    import store.playbook.files as files

    calls = 0
    real = files.os.replace

    def failing(src: object, dst: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:  # after the first file (and its backup) is in place
            raise OSError("disk full")
        real(src, dst)  # type: ignore[arg-type]

    files.os.replace = failing  # type: ignore[assignment]
    try:
        with pytest.raises(OSError, match="disk full"):
            write_dir([changed, second], folder)
    finally:
        files.os.replace = real
    assert {p: p.read_text() for p in folder.rglob("*.yaml")} == before


async def test_every_store_entry_checks_the_bullet(db: Database) -> None:
    store = PlaybookStore(db)
    with pytest.raises(BulletInvalid, match="content is empty"):
        await store.add(PlaybookBullet(id="pb-a0000001", content=" "))
    with pytest.raises(BulletInvalid, match="scope 'channel:' needs a value"):
        await store.put(PlaybookBullet(id="pb-a0000002", content=SCANNER, scope="channel:"))
    proposal = await store.add(PlaybookBullet(id="pb-a0000003", content=SCANNER))
    with pytest.raises(BulletInvalid, match="content is empty"):  # the Slack edit dialog's
        await store.edit(proposal.id, "\n \t", "ULEAD")
    assert [b.id for b in await store.bullets()] == [proposal.id]
