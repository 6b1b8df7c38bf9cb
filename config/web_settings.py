"""``[web]``: the investigation pages (``bot/web``) and Sign in with Slack."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr

from config.agent_settings import Section


class WebSettings(Section):
    """Where the pages live and how people sign in (OpenID Connect, the Slack app's)."""

    base_url: str | None = Field(
        None,
        description="public address of the pages, e.g. https://socbot.example.com; "
        "Slack messages link to them when set",
    )
    client_id: str | None = Field(None, description="the Slack app's client id (Sign in)")
    client_secret: SecretStr | None = Field(None, description="the Slack app's client secret")
    session_secret: SecretStr | None = Field(
        None, description="signs session cookies; 32+ random characters"
    )
    team_id: str | None = Field(
        None, description="the workspace people must sign in from; default: the bot token's"
    )
    authorize_url: str = "https://slack.com/openid/connect/authorize"
    session_hours: float = Field(12.0, gt=0, description="a sign-in lasts this long")
    membership_cache_s: float = Field(
        60.0, ge=0, description="how long a person's channel list is trusted"
    )

    eval_runs: Path = Field(
        Path("var/eval"),
        description="where `socbot eval run` keeps its run folders (the Evals page, admins)",
    )

    def sign_in_configured(self) -> bool:
        """Client id, client secret and session secret are all set."""
        return bool(self.client_id and self.client_secret and self.session_secret)
