"""``socbot chat`` at a terminal: prompt_toolkit driven through its pipe input."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

import cli.terminal.chat
from cli.runtime import Runtime, open_runtime
from cli.terminal.chat import chat_loop, prompt_reader
from config.settings import Settings
from tests.fakes.model import ScriptedModel, json_response, text_response

UP = "\x1b[A"
ENTER = "\r"
CTRL_D = "\x04"
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


@contextmanager
def terminal() -> Iterator[PipeInput]:
    """A fake keyboard (pipe) and a screen that discards output, for prompt_toolkit."""
    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        yield keys


def read_all(history: Path | str, *typed: str) -> list[str]:
    """What the prompt returns for each entry of ``typed`` (keys typed at one prompt)."""
    lines: list[str] = []
    with terminal() as keys, asyncio.Runner() as runner:
        read = prompt_reader(str(history))
        for keystrokes in (*typed, CTRL_D):
            keys.send_text(keystrokes)
            try:
                lines.append(read(runner))
            except EOFError:
                break
    return lines


def test_history_is_kept_across_sessions(tmp_path: Path) -> None:
    history = tmp_path / "var" / "chat_history"
    assert read_all(history, f"first question{ENTER}", f"second{ENTER}") == [
        "first question",
        "second",
    ]
    # A new session (a new process, in real use) recalls them with the arrow keys.
    assert read_all(history, f"{UP}{UP}{ENTER}", f"{UP}{ENTER}") == ["first question"] * 2


def test_arrow_keys_edit_the_line_instead_of_reaching_the_model(tmp_path: Path) -> None:
    left = "\x1b[D"
    assert read_all(tmp_path / "h", f"helo{left}l{ENTER}") == ["hello"]


def test_pasted_lines_are_one_message(tmp_path: Path) -> None:
    pasted = 'what is this?\n{\n  "ip": "185.220.101.42"\n}'
    assert read_all(tmp_path / "h", f"{PASTE_START}{pasted}{PASTE_END}{ENTER}") == [pasted]


def test_escape_enter_adds_a_line(tmp_path: Path) -> None:
    assert read_all(tmp_path / "h", f"one\x1b{ENTER}two{ENTER}") == ["one\ntwo"]


def test_empty_history_setting_keeps_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert read_all("", f"a{ENTER}", f"{UP}{ENTER}") == ["a", "a"]
    assert list(tmp_path.iterdir()) == []


def test_chat_at_the_prompt_sends_the_pasted_message_to_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedModel(
        {
            "classifier": lambda _request: json_response({"needs_plan": False, "reason": "q"}),
            "direct": [text_response("It is a Tor exit node.")],
        }
    )

    def scripted(settings: Settings) -> AbstractAsyncContextManager[Runtime]:
        return open_runtime(settings, backend=model)

    monkeypatch.setattr(cli.terminal.chat, "open_runtime", scripted)
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}",
        chat_history_file=str(tmp_path / "history"),
    )
    pasted = "known bad?\n185.220.101.42"
    stderr = io.StringIO()
    console = Console(file=stderr, width=100)
    with terminal() as keys, asyncio.Runner() as runner:
        prompt = prompt_reader(settings.chat_history_file)
        typed = iter([f"{PASTE_START}{pasted}{PASTE_END}{ENTER}", f"/exit{ENTER}"])

        def read(runner: asyncio.Runner) -> str:  # keys typed once the prompt is shown
            keys.send_text(next(typed))
            return prompt(runner)

        chat_loop(runner, settings, console, read)
    seen = "\n".join(
        part.text or ""
        for content in model.requests_for("direct")[-1].contents
        for part in content.parts or []
    )
    assert pasted in seen
    assert "conversation cli:" in stderr.getvalue()
