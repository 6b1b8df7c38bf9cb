"""``socbot serve``: the Slack bot, in Socket Mode (default) or HTTP mode.

Socket Mode needs ``SLACK_BOT_TOKEN`` (xoxb-) and ``SLACK_APP_TOKEN`` (xapp-) and
no public URL; ``/alerts`` and ``/healthz`` are served on a local port. HTTP mode
needs ``SLACK_BOT_TOKEN`` and ``SLACK_SIGNING_SECRET`` and serves
``POST /slack/events``, ``POST /alerts`` and ``GET /healthz`` on ``--port``.
Missing or malformed tokens, or a token Slack rejects (``auth.test``, and
``apps.connections.open`` in Socket Mode), end with one ``error:`` line naming the
variable and exit code 2.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import secrets
import signal
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from enum import StrEnum
from typing import Annotated

import typer
from pydantic import SecretStr

from agent.errors import AgentError
from agent.playbook.learning.corrections import Corrections
from agent.playbook.learning.service import Learner
from bot.app import create_socbot
from bot.decisions.approvals import SlackApprovals
from bot.decisions.playbook_review import SlackReview
from bot.events.scope import Scoping
from bot.investigator import EngineInvestigator
from bot.notify.delivery import Webhooks
from bot.observe.tracing import configure_tracing
from bot.slack.client import build_client
from bot.slack.members import ChannelMembers
from bot.slack.pacer import Pacer
from bot.socket_mode import run_socket_mode
from bot.startup import startup_lines
from bot.transport.alert_door import AlertDoorSetup
from bot.transport.server import body_limit, bound_port, start_site
from cli.common import command_app, fail, load_settings_or_exit, one_line
from cli.runtime import Runtime, open_runtime
from cli.serve.ack_process import AckProcess
from cli.serve.log_setup import configure_logging
from cli.serve.slack_checks import Identity, ServeError, check_app_token, identify
from config.settings import ConfigError, Settings, SlackSettings
from evals.team_capture import TeamCapture
from store.cases.auto import AutoResolution
from store.playbook.bullets import PlaybookStore
from store.playbook.feedback import FeedbackStore
from store.playbook.learning import LearningStore
from store.triage.alerts import AlertStore
from store.triage.policy import PolicyStore

log = logging.getLogger(__name__)

app = command_app()

OpenRuntime = Callable[[Settings], AbstractAsyncContextManager[Runtime]]


class Mode(StrEnum):
    socket = "socket"
    http = "http"


def check_tokens(slack: SlackSettings, mode: Mode) -> None:
    """Raise ``ServeError`` naming the variable when a needed token is missing or wrong."""
    bot = _secret(slack.bot_token)
    if not bot:
        raise ServeError(
            "SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-...) "
            "from your Slack app's OAuth & Permissions page"
        )
    if not bot.startswith("xoxb-"):
        raise ServeError("SLACK_BOT_TOKEN must be a bot token starting with xoxb-")
    if mode is Mode.socket:
        app_token = _secret(slack.app_token)
        if not app_token:
            raise ServeError(
                "SLACK_APP_TOKEN is not set: Socket Mode needs an app-level token (xapp-...) "
                "with connections:write (Basic Information > App-Level Tokens), "
                "or run with --mode http"
            )
        if not app_token.startswith("xapp-"):
            raise ServeError("SLACK_APP_TOKEN must be an app-level token starting with xapp-")
    elif not _secret(slack.signing_secret):
        raise ServeError(
            "SLACK_SIGNING_SECRET is not set: HTTP mode needs the Signing Secret "
            "(Basic Information > App Credentials)"
        )


async def serve_until(
    settings: Settings,
    mode: Mode,
    *,
    host: str,
    port: int,
    stop: asyncio.Event,
    runtime: OpenRuntime = open_runtime,
    ready: Callable[[Identity], None] | None = None,
) -> None:
    """Run the bot until ``stop`` is set; everything is closed on the way out."""
    check_tokens(settings.slack, mode)
    client = build_client(settings.slack)
    me = await identify(client)
    if mode is Mode.socket:
        await check_app_token(client, _secret(settings.slack.app_token))
    log.info("signed in to %s (%s) as %s (%s)", me.team, me.team_id, me.user, me.user_id)
    async with runtime(settings) as rt:
        pacer = Pacer()
        approvals = SlackApprovals.build(client, rt.db, settings)
        webhooks = Webhooks.build(settings, rt.db, rt.http)
        members = ChannelMembers(client)  # one cache: cases, the pane, each run's scope
        scoping = Scoping(settings.slack, members)
        investigate = EngineInvestigator(
            rt.engine,
            client,
            AlertStore(rt.db),
            pacer=pacer,
            policy=PolicyStore(rt.db),
            pages_url=settings.web.base_url,
            approvals=approvals,
            notifier=webhooks.notifier,
            cases=settings.cases.enabled,
            model=settings.gemini.model,
            streaming=settings.slack.streaming,
            scoping=scoping,
            auto_resolve=AutoResolution(rt.db, settings.cases.audit_share),
        )
        review = SlackReview(client, PlaybookStore(rt.db), settings.learning, webhooks.notifier)
        learner = Learner(
            gateway=rt.gateway,
            prompts=rt.engine.prompts,
            playbook=PlaybookStore(rt.db),
            investigations=rt.investigations,
            feedback=FeedbackStore(rt.db),
            runs=LearningStore(rt.db),
            settings=settings,
            review=review,
        )
        bot = create_socbot(
            settings,
            rt.db,
            investigate,
            client=client,
            http_mode=mode is Mode.http,
            pacer=pacer,
            learner=learner,
            review=review,
            approvals=approvals,
            webhooks=webhooks,
            members=members,
        )
        rt.engine.corrections = Corrections(FeedbackStore(rt.db), bot.learn)
        if bot.gate is not None:  # a DM also sees the channels policy rules route alerts to
            scoping.routed = bot.gate.route_channels
        TeamCapture(rt.db, settings, bot.coordinator)  # disagreements into the team's pack
        where = f"http://{host}:{port}"
        for line in startup_lines(
            settings, http_mode=mode is Mode.http, where=where, registry=rt.registry
        ):
            log.info("%s", line)
        try:
            if mode is Mode.http:
                # the app on a private loopback port; the public port acks from a process
                # of its own, so acks and alerts' 202s never queue behind investigations
                # (cli.serve.ack_process)
                door = front_alerts(settings)
                app = bot.web_app(handover_token=door.handover_token)
                runner = await start_site(app, "127.0.0.1", 0)
                front = AckProcess(
                    signing_secret=_secret(settings.slack.signing_secret),
                    backend=f"http://127.0.0.1:{bound_port(runner)}",
                    body_limit=body_limit(settings.slack.max_alert_bytes),
                    log=settings.log,
                    alerts=door,
                )
                try:
                    try:
                        await asyncio.to_thread(front.start, host, port)
                    except OSError as error:  # most often: the port is taken
                        raise _listen_error(host, port, error) from None
                    if ready is not None:
                        ready(me)  # only once the port is really ours
                    await stop.wait()
                finally:
                    await asyncio.to_thread(front.stop)
                    await runner.cleanup()
            else:
                if ready is not None:
                    ready(me)
                app_token = _secret(settings.slack.app_token)
                try:
                    await run_socket_mode(bot, app_token, host=host, port=port, stop=stop)
                except OSError as error:
                    if error.errno not in LISTEN_ERRNOS:
                        raise
                    raise _listen_error(host, port, error) from None
        finally:
            await bot.close()


def front_alerts(settings: Settings) -> AlertDoorSetup:
    """What the acknowledging front needs to answer ``POST /alerts`` itself, with a fresh
    token for handing the alerts over to this process's app."""
    slack = settings.slack
    return AlertDoorSetup(
        database_url=settings.database_url,
        handover_token=secrets.token_urlsafe(32),
        webhook_token=slack.webhook_token.get_secret_value() if slack.webhook_token else None,
        webhook_channel=slack.webhook_channel,
        max_alert_bytes=slack.max_alert_bytes,
        formats_dir=settings.alerts.formats_dir,
    )


ModeOpt = Annotated[
    Mode, typer.Option("--mode", help="socket (no public URL needed) or http (Events API).")
]
PortOpt = Annotated[
    int | None, typer.Option("--port", help="Port for the server (default: slack.http_port).")
]
HostOpt = Annotated[
    str | None,
    typer.Option("--host", help="Interface (default: 0.0.0.0 in http mode, 127.0.0.1 in socket)."),
]


@app.command()
def serve(mode: ModeOpt = Mode.socket, port: PortOpt = None, host: HostOpt = None) -> None:
    """Run the Slack bot: mentions, thread follow-ups, alert channels and POST /alerts."""
    settings = load_settings_or_exit(announce=False)  # a start line says it
    configure_logging(settings.log)
    try:
        configure_tracing(settings.tracing)
    except ConfigError as exc:
        raise fail(one_line(exc)) from None
    if not settings.debug_payloads:  # request lines carry the indicators looked up
        logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        check_tokens(settings.slack, mode)
    except (ConfigError, ServeError) as exc:
        raise fail(one_line(exc)) from None
    bind = host or ("0.0.0.0" if mode is Mode.http else "127.0.0.1")
    try:
        asyncio.run(_main(settings, mode, bind, port or settings.slack.http_port))
    except (ConfigError, ServeError, AgentError, OSError, ValueError) as exc:
        raise fail(one_line(exc)) from None


async def _main(settings: Settings, mode: Mode, host: str, port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def stopping(sig: signal.Signals) -> None:
        if not stop.is_set():
            log.info(
                "stopping (%s): no new work is claimed; running work has %.0f s to finish",
                sig.name,
                settings.work.shutdown_grace_s,
            )
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping, sig)

    def ready(me: Identity) -> None:
        where = f"http://{host}:{port}"
        typer.secho(f"socbot is up as @{me.user} in {me.team} ({mode.value} mode, {where})")

    await serve_until(settings, mode, host=host, port=port, stop=stop, ready=ready)
    log.info("stopped")


# Why a local port cannot be served (taken, not allowed, not an address of this host).
LISTEN_ERRNOS = {errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL}


def _listen_error(host: str, port: int, error: OSError) -> ServeError:
    """``cannot listen on HOST:PORT: address already in use``: the system's words (asyncio's
    own message repeats the address and the reason)."""
    reason = os.strerror(error.errno).lower() if error.errno else one_line(error)
    return ServeError(f"cannot listen on {host}:{port}: {reason} (choose another with --port)")


def _secret(value: SecretStr | None) -> str:
    return value.get_secret_value().strip() if value is not None else ""
