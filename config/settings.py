"""socbot settings: environment variables plus one TOML file.

Precedence, highest first: explicit arguments, ``SOCBOT_*`` variables (nested with
``__``, e.g. ``SOCBOT_LIMITS__MAX_STEPS``), the well-known variables in
``WELL_KNOWN_ENV`` (``GEMINI_API_KEY``, ``SLACK_BOT_TOKEN``...), the TOML file
named by ``SOCBOT_CONFIG`` (default ``config/socbot.toml``), then defaults.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from config.database_url import async_database_url

DEFAULT_CONFIG_PATH = Path("config/socbot.toml")

# Variables people already have set for the SDKs and Slack, mapped into the tree.
WELL_KNOWN_ENV: dict[str, tuple[str, ...]] = {
    "GOOGLE_API_KEY": ("gemini", "api_key"),
    "GEMINI_API_KEY": ("gemini", "api_key"),  # wins over GOOGLE_API_KEY, as in the SDK
    "GOOGLE_GENAI_USE_VERTEXAI": ("gemini", "use_vertexai"),
    "GOOGLE_CLOUD_PROJECT": ("gemini", "project"),
    "GOOGLE_CLOUD_LOCATION": ("gemini", "location"),
    "SOCBOT_GEMINI_BASE_URL": ("gemini", "base_url"),
    "SLACK_BOT_TOKEN": ("slack", "bot_token"),
    "SLACK_APP_TOKEN": ("slack", "app_token"),
    "SLACK_SIGNING_SECRET": ("slack", "signing_secret"),
    "SOCBOT_SLACK_API_URL": ("slack", "api_url"),
    "SOCBOT_WEBHOOK_TOKEN": ("slack", "webhook_token"),
    "OTX_API_KEY": ("intel", "otx_api_key"),
    "VIRUSTOTAL_API_KEY": ("intel", "virustotal_api_key"),
    "ABUSEIPDB_API_KEY": ("intel", "abuseipdb_api_key"),
    "URLSCAN_API_KEY": ("intel", "urlscan_api_key"),
}


class Section(BaseModel):
    """A settings section: an unknown key (a typo) is an error, never silently ignored."""

    model_config = ConfigDict(extra="forbid")


class ModelPrice(Section):
    """List prices of one model, USD per 1M tokens (``*_long``: prompts over the threshold)."""

    input: float = Field(ge=0, description="prompt tokens not served from the cache")
    output: float = Field(ge=0, description="response tokens")
    cached_input: float = Field(ge=0, description="prompt tokens served from the (implicit) cache")
    thinking: float | None = Field(None, ge=0, description="thinking tokens; default: output")
    long_context_tokens: int | None = Field(
        None, ge=1, description="prompt size above which the *_long prices apply"
    )
    input_long: float | None = Field(None, ge=0)
    output_long: float | None = Field(None, ge=0)
    cached_input_long: float | None = Field(None, ge=0)


# Gemini Developer API list prices, Standard (paid) tier, text, USD per 1M tokens, from
# https://ai.google.dev/gemini-api/docs/pricing (looked up 2026-11-22). Output prices
# include thinking tokens; the cached price is what implicit-cache hits are billed at.
DEFAULT_PRICES: dict[str, ModelPrice] = {
    "gemini-2.5-pro": ModelPrice(
        input=1.25,
        output=10.0,
        cached_input=0.125,
        long_context_tokens=200_000,
        input_long=2.50,
        output_long=15.0,
        cached_input_long=0.25,
    ),
    "gemini-2.5-flash": ModelPrice(input=0.30, output=2.50, cached_input=0.03),
    "gemini-2.5-flash-lite": ModelPrice(input=0.10, output=0.40, cached_input=0.01),
}


class GeminiSettings(Section):
    api_key: SecretStr | None = None
    use_vertexai: bool = False
    project: str | None = None
    location: str | None = None
    base_url: str | None = None
    model: str = "gemini-2.5-flash"
    light_model: str = "gemini-2.5-flash-lite"
    timeout_s: float = 120.0
    max_retries: int = 4
    max_retry_wait_s: float = 30.0
    retry_initial_s: float = Field(1.0, ge=0, description="first backoff; doubles per retry")
    api_version: str | None = Field(
        None, description="REST API version; default v1beta (Gemini API) / SDK's (Vertex AI)"
    )
    temperature: float = 0.2
    prices: dict[str, ModelPrice] = Field(
        default_factory=lambda: dict(DEFAULT_PRICES),
        description="list prices per model (a model name, or a prefix of one), USD per 1M "
        "tokens; entries add to or replace the built-in table for the shipped models",
    )

    @field_validator("prices", mode="after")
    @classmethod
    def _with_default_prices(cls, value: dict[str, ModelPrice]) -> dict[str, ModelPrice]:
        return {**DEFAULT_PRICES, **value}


class Limits(Section):
    max_steps: int = Field(8, ge=1, description="steps per plan, including added ones")
    max_waves: int = Field(4, ge=1)
    max_tool_calls_per_step: int = Field(6, ge=1)
    max_direct_tool_calls: int = Field(8, ge=0)
    max_parallel_steps: int = Field(4, ge=1)
    deadline_s: float = Field(600.0, gt=0, description="wall clock per investigation")
    token_budget: int = Field(
        500_000, ge=1000, description="prompt+output tokens per investigation"
    )
    conclude_grace_s: float = Field(
        30.0, ge=0, description="part of deadline_s kept for the conclusion (at most 20%)"
    )
    conclude_reserve_tokens: int = Field(
        20_000, ge=0, description="part of token_budget kept for the conclusion (at most 20%)"
    )
    tool_result_chars: int = Field(8_000, ge=500, description="tool result size seen by the model")
    history_chars: int = Field(
        24_000, ge=2000, description="conversation history sent to the model"
    )
    speculative_conclusion: bool = Field(
        True,
        description="write the conclusion while the last reflection runs (nothing pending); "
        "discarded if the reflection adds steps",
    )


class ReviewSettings(Section):
    """The review of conclusions and direct answers (``agent.review``)."""

    enabled: bool = Field(True, description="check conclusions against tool results, then a critic")
    planned_only: bool = Field(False, description="review planned investigations only")
    severities: list[Literal["info", "low", "medium", "high", "critical"]] = Field(
        default_factory=list,
        description="review only when the alert's or the draft's severity is listed; empty = all",
    )
    threshold: float = Field(0.7, ge=0, le=1, description="critic score below this: rewrite")
    max_rewrites: int = Field(1, ge=0, le=2, description="rewrites of one conclusion")
    reserve_tokens: int = Field(
        30_000, ge=0, description="part of token_budget kept for the review (at most 20%)"
    )
    grace_s: float = Field(
        45.0, ge=0, description="part of deadline_s kept for the review (at most 20%)"
    )


class TableSpec(Section):
    """One log table in the catalogue."""

    name: str = Field(description="fully qualified BigQuery name, project.dataset.table")
    description: str
    time_column: str | None = None
    columns: dict[str, str] = Field(default_factory=dict, description="notable columns")
    path: str | None = Field(None, description="local Parquet/CSV/JSON file(s) for DuckDB")


class LogSettings(Section):
    backend: Literal["duckdb", "bigquery"] = "duckdb"
    tables: list[TableSpec] = Field(default_factory=list)
    runbooks_dir: str | None = "examples/runbooks"
    row_limit: int = 200
    query_timeout_s: float = Field(60.0, gt=0, description="per query; the process is killed")
    query_memory_mb: int = Field(
        512, ge=64, description="DuckDB memory_limit per query, also capped by the OS (RLIMIT_AS)"
    )
    max_result_bytes: int = Field(
        1_000_000, ge=10_000, description="a query's rows are cut at this many JSON bytes"
    )
    query_workers: int = Field(2, ge=1, description="DuckDB worker processes (queries at once)")
    query_threads: int = Field(2, ge=1, description="DuckDB threads per worker process")
    bigquery_project: str | None = None
    bigquery_location: str | None = None
    max_bytes_per_query: int = 10 * 1024**3
    max_bytes_per_investigation: int = 50 * 1024**3


class IntelSettings(Section):
    otx_api_key: SecretStr | None = None
    virustotal_api_key: SecretStr | None = None
    abuseipdb_api_key: SecretStr | None = None
    urlscan_api_key: SecretStr | None = None
    internal_domain_suffixes: list[str] = Field(
        default_factory=lambda: [".internal", ".local", ".corp", ".lan", ".home.arpa"]
    )
    cache_ttl_s: int = 6 * 3600
    timeout_s: float = 15.0
    max_retry_after_s: float = 10.0


class SlackSettings(Section):
    bot_token: SecretStr | None = None
    app_token: SecretStr | None = None
    signing_secret: SecretStr | None = None
    api_url: str | None = None
    webhook_token: SecretStr | None = None
    alert_channels: list[str] = Field(default_factory=list, description="channel ids watched")
    webhook_channel: str | None = Field(None, description="where POST /alerts cards go")
    allowed_channels: list[str] = Field(default_factory=list, description="empty = any")
    allowed_users: list[str] = Field(default_factory=list, description="empty = any")
    admin_users: list[str] = Field(
        default_factory=list,
        description="user ids that may stop any investigation (others: only their own; "
        "alert investigations: admins, or anyone in the alert channel when this is empty)",
    )
    max_concurrent_investigations: int = 3
    max_queued_investigations: int = Field(
        20,
        ge=0,
        description="webhook alerts waiting for a slot beyond the running ones; more are "
        "deferred (stored, investigated when there is room, most severe first)",
    )
    alert_group_window_s: float = Field(
        900.0,
        ge=0,
        description="webhook alerts like one seen this recently (same source, title and "
        "primary indicator) join its card and verdict instead of a new investigation; 0 = off",
    )
    http_port: int = 3000
    max_alert_bytes: int = 256 * 1024


class PlaybookSettings(Section):
    """Selecting the team playbook's active bullets for a prompt (agent/playbook.py)."""

    enabled: bool = True
    max_bullets: int = Field(8, ge=0, description="bullets per investigation, at most")
    max_tokens: int = Field(1200, ge=0, description="size of the playbook section, at most")
    prior_helpful: float = Field(
        1.0, ge=0, description="prior helpful count: a new bullet is not ignored"
    )
    prior_harmful: float = Field(1.0, ge=0, description="prior harmful count")


class LearningSettings(Section):
    """Learning from analysts' feedback: Reflector + Curator, under human review."""

    enabled: bool = True
    reflection_rounds: int = Field(1, ge=1, le=5, description="Reflector passes (seed 001 req 8)")
    review_channel: str | None = Field(
        None, description="channel id where proposals are posted; none = CLI review only"
    )
    approvers: list[str] = Field(
        default_factory=list,
        description="Slack user ids who may approve, edit or reject proposals; empty = nobody "
        "in Slack (use `socbot playbook`)",
    )
    auto_approve: bool = Field(False, description="proposals become active without review")
    token_budget: int = Field(60_000, ge=1000, description="tokens per learning run")
    deadline_s: float = Field(180.0, gt=0, description="wall clock per learning run")
    max_evidence_chars: int = Field(600, ge=100, description="evidence shown per proposal")


class AlertSettings(Section):
    """How alert payloads are read (``agent.catalogue``)."""

    formats_dir: str | None = Field(
        None,
        description="a directory of alert format TOML files added to the built-in catalogue "
        "(a file with a built-in format's name replaces it)",
    )


class WorkSettings(Section):
    """The durable work queue shared by every replica (``store/work.py``)."""

    replica_id: str | None = Field(None, description="this replica's name; default host:pid")
    lease_s: float = Field(
        30.0, gt=0, description="a running row whose replica stops renewing is taken over after"
    )
    poll_s: float = Field(1.0, gt=0, description="how often a worker looks for queued rows")
    max_attempts: int = Field(3, ge=1, description="starts of one piece of work before it fails")
    retry_backoff_s: float = Field(
        20.0, ge=0, description="first wait when Gemini or Slack was unavailable; doubles"
    )
    shutdown_grace_s: float = Field(
        20.0, ge=0, description="on SIGTERM, running work may finish this long, then is handed on"
    )
    max_running_per_user: int = Field(2, ge=1, description="one person's requests running at once")
    max_queued_per_user: int = Field(5, ge=0, description="one person's requests waiting")
    max_running_per_channel: int = Field(
        3, ge=1, description="people's requests running per channel"
    )
    max_queued_per_channel: int = Field(
        20, ge=0, description="people's requests waiting per channel"
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="SOCBOT_", env_nested_delimiter="__", extra="forbid", toml_file=None
    )

    database_url: str = "sqlite+aiosqlite:///./var/socbot.db"
    environment: str = Field(
        "A cloud-first company on Google Cloud; employees sign in with SSO.",
        description="what the planner is told about the monitored environment",
    )
    debug_payloads: bool = Field(False, description="log alert and tool payloads")
    chat_history_file: str = Field(
        "var/chat_history", description="`socbot chat` prompt history; empty = not kept"
    )
    gemini: GeminiSettings = GeminiSettings()
    limits: Limits = Limits()
    review: ReviewSettings = ReviewSettings()
    logs: LogSettings = LogSettings()
    intel: IntelSettings = IntelSettings()
    slack: SlackSettings = SlackSettings()
    playbook: PlaybookSettings = PlaybookSettings()
    learning: LearningSettings = LearningSettings()
    alerts: AlertSettings = AlertSettings()
    work: WorkSettings = WorkSettings()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        files = config_files()
        toml = TomlConfigSettingsSource(settings_cls, toml_file=files or None, deep_merge=True)
        return init_settings, env_settings, _WellKnownEnv(settings_cls), toml

    @field_validator("database_url")
    @classmethod
    def _async_driver(cls, url: str) -> str:
        return async_database_url(url)


def config_path() -> Path:
    """The settings file: ``SOCBOT_CONFIG``, or ``config/socbot.toml`` in the current folder."""
    return Path(os.environ.get("SOCBOT_CONFIG") or DEFAULT_CONFIG_PATH)


def local_config_path(path: Path) -> Path:
    """The untracked override beside a settings file (``socbot.local.toml``)."""
    return path.with_name(f"{path.stem}.local{path.suffix}")


def config_files() -> list[Path]:
    """The settings files that exist, in the order they are read (later ones win)."""
    path = config_path()
    return [p for p in (path, local_config_path(path)) if p.is_file()]


def config_notice() -> str:
    """One line for stderr: which settings files are used, or a warning that none is."""
    files = config_files()
    if files:
        return "config: " + ", ".join(str(f) for f in files)
    return (
        f"warning: no settings file ({config_path()} not found in {Path.cwd()}): "
        "defaults only, log tools are off; run from the repository or set SOCBOT_CONFIG"
    )


class _WellKnownEnv(PydanticBaseSettingsSource):
    """Reads the variables in WELL_KNOWN_ENV into their place in the settings tree."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        tree: dict[str, Any] = {}
        for var, (section, key) in WELL_KNOWN_ENV.items():
            value = os.environ.get(var)
            if value:
                tree.setdefault(section, {})[key] = value
        return tree


class ConfigError(Exception):
    """The configuration is unusable; the message says what to change."""


def load_settings(**overrides: Any) -> Settings:
    path = os.environ.get("SOCBOT_CONFIG")
    if path and not Path(path).is_file():
        raise ConfigError(f"SOCBOT_CONFIG points to {path!r}, which is not a file")
    return Settings(**overrides)
