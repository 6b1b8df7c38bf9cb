"""``socbot web``: the investigation pages for a terminal user, on this machine.

On 127.0.0.1 (the default) there is one user and no sign-in: whoever can reach the
port is the owner of the database. Any other address needs Sign in with Slack
configured (``[web]``: base_url, client_id, client_secret, session_secret, and the
Slack bot token for channel membership); without it the command refuses to start.
"""

from __future__ import annotations

import asyncio
import gc
import signal
from typing import Annotated

import typer

from cli.common import command_app, fail, load_settings_or_exit, one_line

app = command_app()

LOOPBACK = ("127.0.0.1", "::1", "localhost")


@app.command()
def web(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8080,
) -> None:
    """Browse investigations, alerts, the playbook and usage in a web browser."""
    settings = load_settings_or_exit()
    local = host in LOOPBACK
    if not local and not settings.web.sign_in_configured():
        raise fail(
            f"refusing to serve the pages on {host!r} without sign-in: set web.base_url, "
            "web.client_id, web.client_secret and web.session_secret, or use 127.0.0.1"
        )
    from config.settings import ConfigError

    try:
        asyncio.run(_serve(settings, host, port, local=local))
    except ConfigError as exc:
        raise fail(one_line(exc)) from None
    except OSError as exc:
        raise fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


async def _serve(settings: object, host: str, port: int, *, local: bool) -> None:
    from aiohttp import web as aioweb

    from bot.slack.client import build_client
    from bot.transport.server import freeze_heap, start_site
    from bot.web.guard import SignInRequired, create_web, install
    from cli.database import migrated_database
    from config.settings import Settings

    assert isinstance(settings, Settings)
    client = build_client(settings.slack) if settings.slack.bot_token else None
    async with migrated_database(settings.database_url) as db:
        try:
            pages = create_web(settings, db, client, local=local)
        except SignInRequired as exc:
            raise fail(str(exc)) from None
        app = aioweb.Application()
        install(app, pages)
        runner = await start_site(app, host, port)
        frozen = freeze_heap()  # a page's full collections walk only what it allocates
        shown = f"[{host}]" if ":" in host else host
        typer.echo(f"socbot pages on http://{shown}:{port}/web/investigations", err=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            await runner.cleanup()
            if frozen:
                gc.unfreeze()
