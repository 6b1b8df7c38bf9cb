"""Checks that ask a service: Gemini (a 1-token call, its cost shown), Slack (tokens,
``auth.test``, the manifest's scopes, channel membership), BigQuery (a dry run per
catalogued table). None retries: a failure is reported at once with its fix."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from cli.common import one_line
from cli.doctor.report import Check
from config.settings import ConfigError, Settings

if TYPE_CHECKING:
    import httpx

MANIFEST = Path(__file__).resolve().parents[2] / "slack-app-manifest.yaml"
KEY_FIX = "export GEMINI_API_KEY=… (https://aistudio.google.com/apikey), or set up Vertex AI"


async def gemini(settings: Settings, http: httpx.AsyncClient) -> Check:
    """One call asking for one token of the main model; its tokens and list-price cost."""
    from google.genai import types

    from agent.errors import AgentError
    from agent.model.gemini import GeminiBackend
    from agent.model.pricing import call_cost, price_for

    model = settings.gemini.model
    try:
        backend = GeminiBackend.from_settings(
            settings.gemini.model_copy(update={"max_retries": 0}), httpx_async_client=http
        )
    except ConfigError as exc:
        return Check.fail("gemini", str(exc), KEY_FIX)
    try:
        response = await backend.generate_content(
            model=model,
            contents=[types.Content(role="user", parts=[types.Part(text="Say OK.")])],
            config=types.GenerateContentConfig(max_output_tokens=1, temperature=0),
        )
    except AgentError as exc:
        return Check.fail("gemini", f"{model}: {exc}", _gemini_fix(str(exc)))
    finally:
        await backend.aclose()
    usage = response.usage_metadata
    prompt = (usage.prompt_token_count or 0) if usage else 0
    output = (usage.candidates_token_count or 0) if usage else 0
    thinking = (usage.thoughts_token_count or 0) if usage else 0
    price = price_for(settings.gemini.prices, model)
    cost = "no price for this model (gemini.prices)"
    if price is not None:
        usd = call_cost(
            price,
            prompt_tokens=prompt,
            cached_tokens=0,
            output_tokens=output,
            thinking_tokens=thinking,
        )
        cost = f"${usd:.6f} at list prices"
    tokens = f"{prompt} prompt + {output + thinking} output tokens"
    return Check.ok("gemini", f"{model} answered a 1-token call ({tokens}, {cost})")


def _gemini_fix(reason: str) -> str:
    lowered = reason.lower()
    if "api key" in lowered or "refused access" in lowered:
        return "check GEMINI_API_KEY (a key of a project with the Gemini API enabled)"
    if "does not know the model" in lowered:
        return "check gemini.model (SOCBOT_GEMINI__MODEL): the model name is not served"
    return "check the network path to Gemini (gemini.base_url, a proxy) and try again"


async def slack(settings: Settings) -> list[Check]:
    """Tokens for the chosen mode, ``auth.test``, scopes, and membership of each channel."""
    from slack_sdk.errors import SlackApiError

    from bot.slack.client import build_client

    cfg = settings.slack
    if cfg.bot_token is None:
        return [Check.skip("slack", "SLACK_BOT_TOKEN not set (only `socbot serve` needs Slack)")]
    checks = [_mode(settings)]
    client = build_client(cfg, max_retries=0)
    try:
        auth = await client.auth_test()
    except SlackApiError as exc:
        error = exc.response.get("error") if exc.response is not None else str(exc)
        fix = "copy the Bot User OAuth Token (Install App) into SLACK_BOT_TOKEN"
        return [*checks, Check.fail("slack auth.test", str(error), fix)]
    except OSError as exc:
        fix = "check the network path to Slack (slack.api_url, a proxy)"
        return [
            *checks,
            Check.fail("slack auth.test", f"cannot reach Slack ({one_line(exc)})", fix),
        ]
    checks.append(Check.ok("slack auth.test", f"bot {auth.get('user')} in {auth.get('team')}"))
    checks.append(_scopes(auth.headers.get("x-oauth-scopes")))
    channels = dict.fromkeys(
        [*cfg.alert_channels, *([cfg.webhook_channel] if cfg.webhook_channel else [])]
    )
    for channel in channels:
        if channel:
            checks.append(await _member(client, channel))
    return checks


def _mode(settings: Settings) -> Check:
    cfg = settings.slack
    if cfg.app_token is not None:
        if not cfg.app_token.get_secret_value().startswith("xapp-"):
            return Check.fail(
                "slack mode",
                "SLACK_APP_TOKEN is not an app-level token (xapp-…)",
                "generate one with connections:write (Basic Information → App-Level Tokens)",
            )
        return Check.ok("slack mode", "socket mode (SLACK_APP_TOKEN)")
    if cfg.signing_secret is not None:
        return Check.ok("slack mode", "http mode (SLACK_SIGNING_SECRET): serve --mode http")
    return Check.fail(
        "slack mode",
        "neither SLACK_APP_TOKEN (socket mode) nor SLACK_SIGNING_SECRET (http mode) is set",
        "export SLACK_APP_TOKEN=xapp-… for socket mode, or SLACK_SIGNING_SECRET for http mode",
    )


def manifest_scopes(path: Path = MANIFEST) -> list[str]:
    """The bot scopes ``slack-app-manifest.yaml`` asks for."""
    manifest: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    return list(manifest["oauth_config"]["scopes"]["bot"])


def _scopes(header: str | None) -> Check:
    if header is None:
        return Check.skip("slack scopes", "Slack did not say which scopes the token has")
    granted = {s.strip() for s in header.split(",") if s.strip()}
    missing = [s for s in manifest_scopes() if s not in granted]
    if missing:
        return Check.fail(
            "slack scopes",
            "the token lacks " + ", ".join(missing),
            "update the app from slack-app-manifest.yaml and reinstall it",
        )
    return Check.ok("slack scopes", f"all {len(manifest_scopes())} scopes of the manifest")


async def _member(client: Any, channel: str) -> Check:
    """Whether the bot can read ``channel`` (``conversations.history``: in it, with scope)."""
    from slack_sdk.errors import SlackApiError

    try:
        await client.conversations_history(channel=channel, limit=1)
    except SlackApiError as exc:
        error = str(exc.response.get("error")) if exc.response is not None else str(exc)
        fix = (
            f"/invite @socbot in {channel}"
            if error == "not_in_channel"
            else "check the channel id (channel details, at the bottom)"
        )
        return Check.fail(f"slack channel {channel}", error, fix)
    return Check.ok(f"slack channel {channel}", "socbot is a member")


def bigquery_tables(settings: Settings, client: Any = None) -> list[Check]:
    """A dry run of ``SELECT *`` on each catalogued table (bytes it would scan)."""
    logs = settings.logs
    if logs.backend != "bigquery":
        return []
    if not logs.bigquery_project:
        return [
            Check.fail("bigquery", "logs.bigquery_project is not set", "set logs.bigquery_project")
        ]
    from google.api_core import exceptions as gexc
    from google.auth import exceptions as auth_exc
    from google.cloud import bigquery

    try:
        client = client or bigquery.Client(
            project=logs.bigquery_project, location=logs.bigquery_location
        )
    except auth_exc.DefaultCredentialsError:
        fix = "run `gcloud auth application-default login`, or set a service account"
        return [Check.fail("bigquery", "no Google credentials", fix)]
    checks = []
    for table in logs.tables:
        config = bigquery.QueryJobConfig(dry_run=True, use_query_cache=False)
        try:
            job = client.query(f"SELECT * FROM `{table.name}`", job_config=config)
        except (gexc.GoogleAPICallError, auth_exc.GoogleAuthError) as exc:
            fix = "grant roles/bigquery.dataViewer on it and jobUser on the project"
            reason = getattr(exc, "message", None) or str(exc)
            checks.append(Check.fail(f"bigquery {table.name}", str(reason), fix))
            continue
        size = int(job.total_bytes_processed or 0)
        checks.append(Check.ok(f"bigquery {table.name}", f"dry run ok ({size} bytes in full)"))
    return checks
