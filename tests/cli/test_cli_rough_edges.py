"""What the issue 12 walk-through found rough in the terminal, each checked the way a user
meets it: Ctrl-C during a run, ``-q`` with a warning on the way, a typo in the settings
file, a broken local override, an empty stdin, ``trace`` of a costed run, ``serve`` on a
taken port in Socket Mode and ``serve`` stopped by a signal.

Ctrl-C is a real SIGINT: the scripted model raises it while the planner call is in flight,
and asyncio's runner turns it into the cancellation the user's key press causes.
"""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

import cli.serve.command
import cli.terminal.chat
from bench.loopback import free_port
from cli.main import app
from cli.runtime import open_runtime
from cli.serve.command import Identity, Mode, ServeError, _main, serve_until
from cli.terminal.progress import TerminalProgress
from config.settings import config_notice
from core.events import Failed, PlanCreated, Started, StepStarted
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from tests.cli.test_cli import ALERTS, db_url, investigation_model, runner, use_model
from tests.fakes.model import ModelRequest, ScriptedModel, json_response
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import make_settings

__all__ = ["db_url", "runner"]  # fixtures used by name

ALERT = str(ALERTS / "leveret-scc.json")


async def _press_ctrl_c(_request: ModelRequest) -> object:
    """Send SIGINT to this process while a model call is in flight, as Ctrl-C does."""
    handler = signal.getsignal(signal.SIGINT)
    # asyncio's runner handles SIGINT by cancelling its main task; anything else would
    # end the test run itself, so refuse rather than raise it.
    assert isinstance(handler, functools.partial), f"no asyncio SIGINT handler: {handler!r}"
    signal.raise_signal(signal.SIGINT)
    await asyncio.sleep(60)
    raise AssertionError("the run was not cancelled")


async def _status(url: str, investigation_id: str) -> str | None:
    db = Database(url)
    try:
        row = await InvestigationStore(db).get(investigation_id)
        return row.status if row else None
    finally:
        await db.close()


def _investigation_id(stderr: str) -> str:
    line = next(x for x in stderr.splitlines() if x.startswith("investigation "))
    return line.split()[1]


# ---------------------------------------------------------------- Ctrl-C: one line


@pytest.fixture
def ctrl_c_works() -> Iterator[None]:
    """SIGINT as a terminal delivers it. A process started in the background (``cmd &`` in
    a script, nohup, some CI runners) inherits SIGINT ignored, and asyncio's runner then
    leaves it ignored: give it Python's default handler for the test, as a shell does."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("ctrl_c_works")
def test_ctrl_c_during_investigate_prints_one_line(
    runner: CliRunner, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, ScriptedModel({"planner": _press_ctrl_c}))
    result = runner.invoke(app, ["investigate", ALERT])
    assert result.exit_code == 130, result.output
    investigation_id = _investigation_id(result.stderr)
    cancel_lines = [line for line in result.stderr.splitlines() if "cancel" in line]
    assert cancel_lines == [f"cancelled (investigation {investigation_id})"]
    assert "failed" not in result.stderr and "Traceback" not in result.output
    assert asyncio.run(_status(db_url, investigation_id)) == "cancelled"


@pytest.mark.usefixtures("ctrl_c_works")
def test_ctrl_c_during_a_chat_turn_cancels_that_turn_only(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "fake-key-for-tests")
    use_model(monkeypatch, ScriptedModel({"classifier": _press_ctrl_c}))
    err = io.StringIO()
    lines = ["is 185.220.101.42 bad?\n"]

    def read_until_eof(_runner: asyncio.Runner) -> str:
        if not lines:
            raise EOFError
        return lines.pop()

    settings = cli.terminal.chat.load_settings_or_exit()
    console = Console(file=err, width=200, force_terminal=False)
    with asyncio.Runner() as loop:
        cli.terminal.chat.chat_loop(loop, settings, console, read_until_eof)
    cancel_lines = [line for line in err.getvalue().splitlines() if "cancel" in line]
    assert len(cancel_lines) == 1 and cancel_lines[0].startswith("cancelled (investigation ")
    assert "failed" not in err.getvalue()


async def test_progress_shows_a_failure_once_and_a_cancel_instead_of_it() -> None:
    plan = {"objective": "o", "steps": [{"id": "s1", "description": "Query the logs"}]}
    events = [
        Started(investigation_id="i1", kind="alert", conversation_id="cli:1"),
        PlanCreated(investigation_id="i1", plan=plan),
        StepStarted(investigation_id="i1", step_id="s1", description="Query the logs"),
        Failed(investigation_id="i1", reason="The investigation was cancelled."),
    ]
    out = io.StringIO()
    with (
        pytest.raises(KeyboardInterrupt),
        TerminalProgress(Console(file=out, width=200, force_terminal=False)) as progress,
    ):
        for event in events:
            await progress.emit(event)
        raise KeyboardInterrupt
    assert "cancelled (investigation i1)" in out.getvalue()
    assert "failed" not in out.getvalue()
    assert progress.plan.steps["s1"].status == "cancelled"

    tty = io.StringIO()  # on a terminal the live checklist's last frame shows it cancelled
    console = Console(file=tty, width=120, force_terminal=True, color_system=None)
    with pytest.raises(KeyboardInterrupt), TerminalProgress(console) as progress:
        for event in events:
            await progress.emit(event)
        raise KeyboardInterrupt
    last_frame = tty.getvalue().rsplit("Objective:", 1)[1]
    assert "x s1 Query the logs" in last_frame and "▶" not in last_frame

    out = io.StringIO()
    with TerminalProgress(Console(file=out, width=200, force_terminal=False)) as progress:
        for event in [*events[:3], Failed(investigation_id="i1", reason="Gemini is down.")]:
            await progress.emit(event)
    assert out.getvalue().count("failed: Gemini is down.") == 1


# ---------------------------------------------------------------- -q and warnings


def _repaired_plan_model(tool: str) -> ScriptedModel:
    """``investigation_model`` whose first plan names an unknown tool (the planner logs a
    warning and asks for a repair)."""
    model = investigation_model()
    bad = {
        "objective": "o",
        "steps": [
            {"id": "a", "description": "d", "tools": [tool], "expected": "e", "depends_on": []}
        ],
    }
    model.queues["planner"].insert(0, json_response(bad))
    return model


def test_quiet_hides_warnings_and_warnings_are_one_clean_line(
    runner: CliRunner, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile = "no_such_tool\x1b[2J\x1b]0;owned\x07"
    use_model(monkeypatch, _repaired_plan_model(hostile))
    quiet = runner.invoke(app, ["investigate", "-q", ALERT])
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stderr == ""

    use_model(monkeypatch, _repaired_plan_model(hostile))
    loud = runner.invoke(app, ["investigate", ALERT])
    assert loud.exit_code == 0, loud.output
    warnings = [line for line in loud.stderr.splitlines() if line.startswith("warning: plan")]
    assert len(warnings) == 1 and "no_such_tool" in warnings[0]
    assert "\x1b" not in loud.stderr and "\x07" not in loud.stderr
    assert logging.getLogger().handlers == [
        h for h in logging.getLogger().handlers if type(h).__name__ != "_StderrLine"
    ], "the command's log handler is removed when it ends"


# ---------------------------------------------------------------- settings files


def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, main: str, local: str) -> Path:
    path = tmp_path / "socbot.toml"
    path.write_text(main)
    (tmp_path / "socbot.local.toml").write_text(local)
    monkeypatch.setenv("SOCBOT_CONFIG", str(path))
    return path


def test_a_typo_in_the_local_file_suggests_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _config(tmp_path, monkeypatch, "", '[slack]\nalert_chanels = ["C1"]\n')
    result = CliRunner().invoke(app, ["tools", "list"])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "error: unknown setting slack.alert_chanels (did you mean slack.alert_channels?) "
        f"(check {path}, {path.with_name('socbot.local.toml')} and SOCBOT_* variables)"
    ]


def test_invalid_toml_names_the_file_that_is_broken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _config(tmp_path, monkeypatch, "[limits]\nmax_steps = 3\n", "[limits\n")
    result = CliRunner().invoke(app, ["tools", "list"])
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {path.with_name('socbot.local.toml')} is not valid TOML")


def test_no_settings_file_warning_is_one_line_in_a_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SOCBOT_CONFIG")
    deep = tmp_path / ("a-long-folder-name-" * 4)
    deep.mkdir()
    monkeypatch.chdir(deep)  # the warning names the folder: longer than 80 columns
    result = CliRunner().invoke(app, ["tools", "list"])
    assert result.exit_code == 0, result.output
    warning = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(warning) == 1 and warning[0].startswith("warning: no settings file")
    assert warning[0].endswith("set SOCBOT_CONFIG")


def test_outside_the_repository_the_warning_names_the_database_file_it_creates(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no config/socbot.toml, no SOCBOT_DATABASE_URL: defaults
    monkeypatch.delenv("SOCBOT_CONFIG")
    use_model(monkeypatch, investigation_model())
    result = runner.invoke(app, ["investigate", ALERT])
    assert result.exit_code == 0, result.output
    created = tmp_path / "var" / "socbot.db"
    assert created.is_file()
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: no")]
    assert len(warnings) == 1 and f"database {created};" in warnings[0]


# every command that reads the settings, and whether it has --json
READS_SETTINGS = [
    (["show", "nope"], True),  # no such investigation: the notice, then the error
    (["trace", "nope"], True),
    (["usage"], True),
    (["alerts", "parse", ALERT], True),
    (["playbook", "list"], False),
    (["playbook", "stats"], True),
    (["db", "upgrade"], False),
]


@pytest.mark.parametrize(
    ("command", "has_json"), READS_SETTINGS, ids=[" ".join(c[:2]) for c, _ in READS_SETTINGS]
)
def test_every_command_that_reads_settings_names_them_once_on_stderr(
    command: list[str], has_json: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _config(tmp_path, monkeypatch, "[limits]\nmax_steps = 3\n", "")
    monkeypatch.setenv("SOCBOT_DATABASE_URL", f"sqlite:///{tmp_path / 'socbot.db'}")
    result = CliRunner().invoke(app, command)
    assert result.exit_code in (0, 2), result.output
    said = f"config: {path}, {path.with_name('socbot.local.toml')}"
    assert result.stderr.splitlines().count(said) == 1
    assert "config:" not in result.stdout  # scripts read stdout: it stays clean
    if has_json:  # the machine-readable form says nothing extra, on either stream
        quiet = CliRunner().invoke(app, [*command, "--json"])
        assert quiet.exit_code == result.exit_code, quiet.output
        assert "config:" not in quiet.output


def test_alerts_parse_with_its_own_formats_reads_no_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SOCBOT_CONFIG")  # none here: reading settings would warn
    formats = Path(__file__).resolve().parents[2] / "alerts" / "formats"
    result = CliRunner().invoke(app, ["alerts", "parse", ALERT, "--formats", str(formats)])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


# ---------------------------------------------------------------- input, show, trace


@pytest.mark.usefixtures("db_url")
def test_empty_standard_input_says_so(runner: CliRunner) -> None:
    result = runner.invoke(app, ["investigate", "-"], input="\n")
    assert result.exit_code == 2
    assert result.output == "error: 'standard input' is empty; expected an alert in JSON\n"


def test_trace_shows_tokens_and_cost_of_each_model_call(
    runner: CliRunner, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, investigation_model())
    done = runner.invoke(app, ["investigate", "-q", "--json", ALERT])
    assert done.exit_code == 0, done.output
    investigation_id = done.stdout.split('"investigation_id": "', 1)[1].split('"', 1)[0]
    lines = runner.invoke(app, ["trace", investigation_id]).stdout.splitlines()
    planner = next(line for line in lines if "llm_called" in line and "stage=planner" in line)
    for key in ("model=", "prompt_tokens=", "output_tokens=", "latency_ms=", "cost_usd="):
        assert key in planner, planner
    tool = next(line for line in lines if "tool_called" in line)
    assert "ok=True" in tool and "duration_ms=" in tool and "error=" not in tool

    header = runner.invoke(app, ["show", investigation_id]).stdout.splitlines()[0]
    started = header.split("started ", 1)[1].split(" · ", 1)[0]
    assert started.endswith(" UTC") and len(started) == len("2026-01-01 00:00:00 UTC")


# ---------------------------------------------------------------- serve


async def test_socket_mode_on_a_taken_port_is_one_sentence(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    fake.set_handler(
        "apps.connections.open", lambda call: {"ok": True, "url": "ws://127.0.0.1:9/link"}
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ServeError) as raised:
            await serve_until(
                make_settings(tmp_path, fake.base_url),
                Mode.socket,
                host="127.0.0.1",
                port=port,
                stop=asyncio.Event(),
                runtime=lambda s: open_runtime(s, backend=ScriptedModel({})),
            )
    assert str(raised.value) == (
        f"cannot listen on 127.0.0.1:{port}: address already in use (choose another with --port)"
    )


async def test_serve_says_when_it_stops(
    fake: FakeSlackAPI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "fake-key-for-tests")
    caplog.set_level(logging.INFO, logger="cli.serve.command")
    up = asyncio.Event()

    async def watched(*args: Any, ready: Callable[[Identity], None], **kwargs: Any) -> None:
        def said_ready(me: Identity) -> None:
            ready(me)
            up.set()

        await serve_until(*args, ready=said_ready, **kwargs)

    monkeypatch.setattr(cli.serve.command, "serve_until", watched)
    serving = asyncio.create_task(
        _main(make_settings(tmp_path, fake.base_url), Mode.http, "127.0.0.1", free_port())
    )
    await asyncio.wait_for(up.wait(), 60)  # an upper bound for a start that would hang
    signal.raise_signal(signal.SIGTERM)  # _main's own handler: no process is ended
    await asyncio.wait_for(serving, 30)
    said = [r.getMessage() for r in caplog.records if r.name == "cli.serve.command"]
    assert any(m.startswith("stopping (SIGTERM): no new work is claimed") for m in said), said
    assert said[-1] == "stopped"


# ---------------------------------------------------------------- the database


@pytest.mark.parametrize(
    "command", [["usage"], ["playbook", "list"], ["db", "upgrade"], ["show", "x"], ["trace", "x"]]
)
def test_an_unreachable_database_is_one_line_naming_it(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SOCBOT_CONFIG")
    port = free_port()  # nothing listens there: the connection is refused
    monkeypatch.setenv("SOCBOT_DATABASE_URL", f"postgres://socbot:pw@127.0.0.1:{port}/socbot")
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 2, result.output
    notice, error = result.stderr.splitlines()
    assert notice == config_notice()  # what was read (no file here), then the one error line
    assert error == (
        f"error: cannot open the database postgresql+asyncpg://socbot:***@127.0.0.1:{port}/socbot"
        f" ({error.split(' (', 1)[1].split('): ', 1)[0]}): check SOCBOT_DATABASE_URL"
    )
    assert result.stdout == ""
    assert "pw" not in result.output


def test_reading_commands_do_not_create_a_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.setenv("SOCBOT_DATABASE_URL", "sqlite:///var/typo.db")
    shown = CliRunner().invoke(app, ["show", "abc"])
    assert shown.stderr.splitlines() == [
        config_notice("sqlite:///var/typo.db"),  # names the file, does not create it
        "error: no investigation 'abc' in this database",
    ]
    used = CliRunner().invoke(app, ["usage", "--json"])
    assert used.exit_code == 0, used.output
    assert '"investigations": 0' in used.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("typed", "advice"),
    [("sqlite:x.db", "write sqlite:///x.db"), ("SQLite:/srv/x.db", "write SQLite:////srv/x.db")],
)
def test_a_sqlite_url_without_slashes_says_how_to_write_it(
    typed: str, advice: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.setenv("SOCBOT_DATABASE_URL", typed)
    result = CliRunner().invoke(app, ["usage"])
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: invalid setting database_url: ")
    assert f"{advice} (three slashes, then the path)" in lines[0]
    assert list(tmp_path.iterdir()) == []
