"""Checks with Slack before ``socbot serve`` starts: the tokens work, and who socbot is."""

from __future__ import annotations

from dataclasses import dataclass

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient


class ServeError(Exception):
    """socbot cannot start serving; the message says what to fix."""


@dataclass(frozen=True)
class Identity:
    """Who socbot is in the workspace (from ``auth.test``)."""

    team: str
    team_id: str
    user: str
    user_id: str


async def identify(client: AsyncWebClient) -> Identity:
    """``auth.test``: check the bot token with Slack and learn socbot's user id."""
    try:
        response = await client.auth_test()
    except SlackApiError as error:
        code = error.response.get("error", "rejected")
        raise ServeError(f"Slack rejected SLACK_BOT_TOKEN ({code})") from None
    except (aiohttp.ClientError, TimeoutError) as error:
        raise ServeError(f"cannot reach the Slack Web API at {client.base_url}: {error}") from None
    return Identity(
        team=str(response.get("team", "")),
        team_id=str(response.get("team_id", "")),
        user=str(response.get("user", "")),
        user_id=str(response.get("user_id", "")),
    )


async def check_app_token(client: AsyncWebClient, app_token: str) -> None:
    """``apps.connections.open``: check the app-level token once, before Socket Mode, which
    would otherwise retry a rejected token every ten seconds, a traceback each time."""
    try:
        await client.apps_connections_open(app_token=app_token)
    except SlackApiError as error:
        code = error.response.get("error", "rejected")
        raise ServeError(f"Slack rejected SLACK_APP_TOKEN ({code})") from None
    except (aiohttp.ClientError, TimeoutError) as error:
        raise ServeError(f"cannot reach the Slack Web API at {client.base_url}: {error}") from None
