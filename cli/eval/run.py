"""``socbot eval run``'s engine side: the runtime, the model (live, recorded or replayed),
a progress bar, and the runner (``evals.runner``) over the pending attempts.

A SQLite database that does not exist yet is made at the newest schema
(``store.db.fresh``) rather than migrated: seconds of every run on a fresh file."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
from sqlalchemy.exc import DBAPIError

from agent.model.gemini import tls_context
from agent.model.llm import ModelBackend
from agent.model.providers import RoutingBackend, configured_models
from cli.database import sqlite_file_missing
from cli.runtime import USER_AGENT, open_runtime
from config.settings import Settings
from evals.judge import Judge
from evals.recording import Recorder, Replayer
from evals.results import Attempt, RunFolder
from evals.runner import EvalRunner, Stop, Wiring
from evals.scenario import Scenario
from store.db.fresh import create_at_head


def eval_settings(settings: Settings) -> Settings:
    """The configured settings without the configured log tables (each scenario brings
    its own), so opening the runtime starts no DuckDB worker for them."""
    return settings.model_copy(update={"logs": settings.logs.model_copy(update={"tables": []})})


async def run_eval(
    settings: Settings,
    work: Sequence[tuple[Scenario, int]],
    folder: RunFolder,
    *,
    backend: ModelBackend | None = None,
    record: Path | None = None,
    replay: Path | None = None,
    concurrency: int = 1,
    max_cost: float | None = None,
    on_done: Callable[[Attempt], None] | None = None,
    judge: bool = False,
    alert_only: bool = False,
) -> Stop:
    """Run ``work`` on the engine the CLI builds; ``backend`` replaces the model (tests)."""
    settings = eval_settings(settings)
    await new_database(settings.database_url)
    async with httpx.AsyncClient(
        verify=tls_context(),
        timeout=httpx.Timeout(30.0, connect=10.0),
        headers={"User-Agent": USER_AGENT},
    ) as http:
        routing: RoutingBackend | None = None
        forget: Callable[[str], None] | None = None
        if replay is not None:
            replayer = Replayer(replay)
            backend, forget = replayer, replayer.forget
        elif backend is None:
            routing = RoutingBackend(settings, http=http)
            routing.prepare(configured_models(settings))
            backend = routing
        if record is not None:
            recorder = Recorder(backend, record)
            backend, forget = recorder, recorder.forget
        try:
            async with open_runtime(settings, backend=backend, http=http) as rt:
                wiring = Wiring(
                    settings=settings,
                    db=rt.db,
                    http=http,
                    gateway=rt.gateway,
                    history=rt.history,
                    investigations=rt.investigations,
                )
                runner = EvalRunner(
                    wiring,
                    folder,
                    concurrency=concurrency,
                    max_cost=max_cost,
                    on_done=on_done,
                    forget=forget,
                    judge=Judge(backend, settings) if judge else None,
                    alert_only=alert_only,
                )
                return await runner.run(work)
        finally:
            if routing is not None:
                await routing.aclose()


async def new_database(url: str) -> None:
    """A SQLite file that does not exist yet, made at the newest schema instead of migrated;
    anything else (or a file that cannot be made: ``open_runtime`` then says why) is left
    to the migrations."""
    if sqlite_file_missing(url):
        try:
            await create_at_head(url)
        except (DBAPIError, OSError):
            return
