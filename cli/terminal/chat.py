"""``socbot chat``: a conversation with socbot in the terminal.

The prompt is prompt_toolkit's: line editing, history across sessions (saved in
``chat_history_file``), and pasted text may span several lines (bracketed
paste; Esc then Enter also inserts a newline). Enter sends, Ctrl-D or ``/exit``
leaves, Ctrl-C at the prompt clears the line, and Ctrl-C during a run cancels
that run only.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated

import typer
from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from rich.console import Console
from rich.markup import escape

from agent.engine import Request
from agent.errors import AgentError
from cli.common import (
    ModelOpt,
    cli_logging,
    command_app,
    fail,
    load_settings_or_exit,
    new_conversation_id,
    one_line,
    socbot_command,
    with_model,
)
from cli.runtime import Runtime, open_runtime
from cli.terminal.approval import TerminalApprover, interactive
from cli.terminal.investigate import print_outcome
from cli.terminal.progress import TerminalProgress
from config.settings import ConfigError, Settings, config_notice
from core.scope import EVERYTHING
from store.db.private import private_file

app = command_app()

PROMPT = "you> "
EXIT_WORDS = ("/exit", "/quit")

# Returns the next message; raises EOFError at the end, KeyboardInterrupt to drop the line.
ReadLine = Callable[[asyncio.Runner], str]


@app.command()
def chat(
    conversation: Annotated[
        str | None,
        typer.Option("--conversation", "-c", help="Resume this conversation id (cli:...)."),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also show each model call.")
    ] = False,
    model: ModelOpt = None,
) -> None:
    """Talk to socbot in the terminal, with persistent history."""
    settings = with_model(load_settings_or_exit(announce=False), model)  # said once open
    console = Console(stderr=True, soft_wrap=True)
    try:
        with cli_logging(verbose=verbose), asyncio.Runner() as runner:
            read = prompt_reader(settings.chat_history_file) if sys.stdin.isatty() else read_stdin
            chat_loop(runner, settings, console, read, conversation=conversation, verbose=verbose)
    except (ConfigError, AgentError, OSError) as exc:
        raise fail(one_line(exc)) from None


def prompt_session(history_file: str) -> PromptSession[str]:
    """A prompt with history in ``history_file`` (kept in memory only when empty)."""
    history: History = InMemoryHistory()
    if history_file:
        path = Path(history_file)
        private_file(path)
        history = FileHistory(str(path))
    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    return PromptSession(history=history, key_bindings=bindings)


def prompt_reader(history_file: str) -> ReadLine:
    """Read from the terminal with prompt_toolkit."""
    session = prompt_session(history_file)
    return lambda runner: runner.run(session.prompt_async(PROMPT))


def read_stdin(_runner: asyncio.Runner) -> str:
    """Read one line from a pipe (``echo question | socbot chat``)."""
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


def chat_loop(
    runner: asyncio.Runner,
    settings: Settings,
    console: Console,
    read: ReadLine,
    *,
    conversation: str | None = None,
    verbose: bool = False,
) -> None:
    """Answer each line ``read`` returns until it ends; the runtime stays open throughout."""
    stack = AsyncExitStack()  # keeps the runtime open across several Runner.run calls
    rt = runner.run(stack.enter_async_context(open_runtime(settings)))
    try:
        console.print(escape(config_notice(settings.database_url)), style="dim", highlight=False)
        conversation_id = conversation or new_conversation_id()
        if conversation is not None:
            if not runner.run(rt.conversations.exists(conversation)):
                raise fail(
                    f"no conversation {conversation!r} in this database; "
                    f"start one with `{socbot_command()} chat`"
                )
            count = runner.run(rt.conversations.count(conversation))
            console.print(f"resuming conversation {conversation_id} ({count} messages)")
        else:
            console.print(f"conversation {conversation_id}")
        console.print(
            f"[dim]Enter sends, Esc Enter adds a line, Ctrl-D leaves; resume later with: "
            f"{socbot_command()} chat --conversation {conversation_id}[/]"
        )
        while True:
            try:
                text = read(runner).strip()
            except KeyboardInterrupt:
                continue
            except EOFError:
                return
            if text in EXIT_WORDS:
                return
            if text:
                _turn(runner, rt, console, conversation_id, text, verbose)
    finally:
        runner.run(stack.aclose())


def _turn(
    runner: asyncio.Runner,
    rt: Runtime,
    console: Console,
    conversation_id: str,
    text: str,
    verbose: bool,
) -> None:
    try:
        with TerminalProgress(console, verbose=verbose) as progress:
            approver = TerminalApprover(console, interactive=interactive(quiet=False))
            request = Request(conversation_id, text, approver=approver, scope=EVERYTHING)
            outcome = runner.run(rt.engine.run(request, progress))
    except KeyboardInterrupt:  # this run only; the progress sink said "cancelled"
        return
    print_outcome(outcome)
