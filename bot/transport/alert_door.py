"""``POST /alerts`` answered by the acknowledging front, never by the app's busy loop.

The front checks the request with the app's own handler (``bot.intake.alerts_endpoint``:
the same statuses, the same reasons), parses the alert and stores it through a writer with
a thread, a loop and a database engine of its own (``bot.transport.alert_writer``:
``received``, committed before the answer, with the alerts that arrived together: the
202 is a promise), answers 202, and only then hands the alert over to the app on its private
loopback port (``bot.intake.alert_handover``: an authenticated ``POST`` of the alert's
id), which places it as it places its own. A hand-over that does not arrive (the app
busy restarting, killed in between) loses nothing: the app's triage sweeps ``received``
alerts at start-up and every ``slack.storm_sweep_s``, and placing an alert is done once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import Any

import aiohttp
from aiohttp import web
from sqlalchemy.exc import SQLAlchemyError

from alerts.catalogue import load_catalogue
from alerts.parse import Alert, parse_alert
from bot.intake.alert_handover import HANDOVER_PATH, TOKEN_HEADER
from bot.intake.alerts_endpoint import AlertWebhook
from bot.transport.alert_writer import AlertWriter
from bot.transport.server import server_timing
from config.settings import SlackSettings

log = logging.getLogger(__name__)

# this request's stages (monotonic seconds), set by ``handle`` and filled by ``accept``
_STAGES: ContextVar[dict[str, float] | None] = ContextVar("alert_door_stages", default=None)


@dataclass(frozen=True)
class AlertDoorSetup:
    """What the front needs to answer ``/alerts`` (sent on the child's stdin, never argv)."""

    database_url: str
    handover_token: str  # the app accepts hand-overs carrying it
    webhook_token: str | None
    webhook_channel: str | None
    max_alert_bytes: int
    formats_dir: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AlertDoorSetup:
        return cls(**data)

    def slack(self) -> SlackSettings:
        return SlackSettings.model_validate(
            {
                "webhook_token": self.webhook_token,
                "webhook_channel": self.webhook_channel,
                "max_alert_bytes": self.max_alert_bytes,
            }
        )


class AlertDoor:
    """The front's ``POST /alerts``: the app's checks, the front's insert, the hand-over."""

    def __init__(self, setup: AlertDoorSetup, backend: str, session: aiohttp.ClientSession):
        self.setup = setup
        self.backend = backend
        self.session = session
        self.catalogue = load_catalogue(setup.formats_dir)
        self.writer = AlertWriter(setup.database_url)
        self.webhook = AlertWebhook(setup.slack(), self.accept, self.hand_over)

    async def warm_up(self) -> None:
        """Start the writer and open its connection before the first alert waits for it (a
        failure here is the first alert's to report: a 500, nothing said 202)."""
        self.writer.start()
        try:
            await self.writer.ping()
        except SQLAlchemyError as error:
            log.warning("the front cannot reach the database yet: %s", type(error).__name__)

    async def handle(self, request: web.Request) -> web.Response:
        """The webhook's answer; a 202 says where its time went (``Server-Timing``: read
        and checked, parsed, waited for the writer, written and committed, back on this
        loop, in all)."""
        began = time.monotonic()
        stages: dict[str, float] = {}
        _STAGES.set(stages)
        response = await self.webhook.handle(request)
        if response.status == 202 and len(stages) == 5:
            stored, parsed, taken, committed, resumed = stages.values()
            parts = {
                "read": stored - began,
                "parse": parsed - stored,
                "queue": taken - parsed,
                "write": committed - taken,
                "resume": resumed - committed,
                "total": time.monotonic() - began,
            }
            response.headers["Server-Timing"] = server_timing(parts)
        return response

    async def accept(self, data: dict[str, Any], source_hint: str | None) -> Alert:
        """Parse the alert here, store it through the writer (``received``, committed)."""
        began = time.monotonic()
        alert = parse_alert(data, source_hint, catalogue=self.catalogue)
        parsed = time.monotonic()
        stored = await self.writer.save(alert)
        stages = _STAGES.get()
        if stages is not None:
            stages.update(
                began=began,
                parsed=parsed,
                taken=stored.taken,
                committed=stored.committed,
                resumed=time.monotonic(),
            )
        log.info("alert %s stored (source %s)", alert.id, alert.source)
        return alert

    async def hand_over(self, alert: Alert) -> None:
        """Tell the app the alert is stored (its sweep places it if this never arrives)."""
        headers = {TOKEN_HEADER: self.setup.handover_token}
        try:
            async with self.session.post(
                self.backend + HANDOVER_PATH, json={"alert_id": alert.id}, headers=headers
            ) as answer:
                await answer.read()
                if answer.status >= 400:
                    log.warning("the app refused alert %s (%s)", alert.id, answer.status)
        except (aiohttp.ClientError, TimeoutError) as error:
            log.warning(
                "alert %s stored, not handed over (%s): the app's sweep places it",
                alert.id,
                type(error).__name__,
            )

    async def close(self) -> None:
        """Hand over what was accepted, then let the engine go."""
        await self.webhook.drain()
        await asyncio.to_thread(self.writer.close)
