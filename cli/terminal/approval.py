"""Approvals in the terminal: a y/N prompt on stderr, one request at a time.

Only an interactive run asks (a terminal on stdin and stderr, not ``-q``): otherwise
every request is denied at once, and the model reads why. Anything but ``y`` or
``yes`` is a denial, and so is no answer within the request's time. The prompt is read
in a daemon thread, so an unanswered prompt never keeps the process from exiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import sys
import threading
from collections.abc import Callable

from rich.console import Console
from rich.markup import escape

from core.approvals import ApprovalRequest, Decision

ARGS_CHARS = 800
NOT_INTERACTIVE = "denied: no one to ask (quiet mode or no terminal)"


def interactive(quiet: bool) -> bool:
    """Whether a person can be asked here."""
    return not quiet and sys.stdin.isatty() and sys.stderr.isatty()


class TerminalApprover:
    """``core.approvals.Approver`` on the terminal (see the module docstring)."""

    def __init__(
        self,
        console: Console,
        *,
        interactive: bool,
        read: Callable[[str], str] = input,
        user: str | None = None,
    ) -> None:
        self.console = console
        self.interactive = interactive
        self.read = read
        self.user = user or _local_user()
        self._one_at_a_time = asyncio.Lock()

    async def decide(self, request: ApprovalRequest, within_s: float) -> Decision:
        if not self.interactive:
            return Decision(approved=False, note=NOT_INTERACTIVE)
        async with self._one_at_a_time:
            self._show(request, within_s)
            try:
                async with asyncio.timeout(within_s):
                    answer = await self._answer("Run it? [y/N] ")
            except TimeoutError:
                self.console.print("[yellow]no answer: denied[/yellow]")
                return Decision(approved=False, note=f"no decision within {within_s:g} s")
        approved = answer.strip().lower() in ("y", "yes")
        verb = "approved" if approved else "denied"
        return Decision(approved=approved, note=f"{verb} by {self.user} (terminal)", by=self.user)

    def _show(self, request: ApprovalRequest, within_s: float) -> None:
        args = json.dumps(request.args, ensure_ascii=False, default=str)
        if len(args) > ARGS_CHARS:
            args = args[: ARGS_CHARS - 1] + "…"
        lines = [
            f"[bold yellow]Approval needed[/bold yellow]: {escape(request.tool)}",
            f"  why: {escape(request.why)}",
            f"  arguments: {escape(args)}",
        ]
        if request.estimate:
            lines.append(f"  estimate: {escape(request.estimate)}")
        lines.append(f"  (denied without an answer within {within_s:.0f} s)")
        self.console.print("\n".join(lines), highlight=False, soft_wrap=True)

    async def _answer(self, prompt: str) -> str:
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[str] = loop.create_future()

        def read() -> None:
            try:
                text = self.read(prompt)
            except (EOFError, OSError):
                text = ""
            with contextlib.suppress(RuntimeError):  # answered after the run ended (loop closed)
                loop.call_soon_threadsafe(_settle, answered, text)

        threading.Thread(target=read, name="approval prompt", daemon=True).start()
        return await answered


def _settle(future: asyncio.Future[str], text: str) -> None:
    if not future.done():
        future.set_result(text)


def _local_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "terminal user"
