"""Settings of what socbot connects to and how it serves: log tables, threat intel,
Slack and the durable work queue. ``config.settings.Settings`` holds one of each."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr

from config.agent_settings import Section


class TableSpec(Section):
    """One log table in the catalogue."""

    name: str = Field(description="fully qualified BigQuery name, project.dataset.table")
    description: str
    time_column: str | None = None
    columns: dict[str, str] = Field(default_factory=dict, description="notable columns")
    path: str | None = Field(None, description="local Parquet/CSV/JSON file(s) for DuckDB")
    personal: list[str] = Field(
        default_factory=list, description="columns holding personal data ([privacy])"
    )


class LogSettings(Section):
    backend: Literal["duckdb", "bigquery"] = "duckdb"
    tables: list[TableSpec] = Field(default_factory=list)
    runbooks_dir: str | None = "examples/runbooks"
    row_limit: int = 200
    query_timeout_s: float = Field(60.0, gt=0, description="per query; the process is killed")
    query_memory_mb: int = Field(
        512, ge=64, description="DuckDB memory_limit per query, also capped by the OS (RLIMIT_AS)"
    )
    query_memory_headroom_mb: int = Field(
        256,
        ge=64,
        description="address space a worker may map beyond query_memory_mb (thread stacks, "
        "allocator arenas, Python): the OS cap is their sum",
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
    alert_channels: list[str] = Field(
        default_factory=list, description="channel ids watched", examples=[["C0ALERTS01"]]
    )
    webhook_channel: str | None = Field(None, description="where POST /alerts cards go")
    allowed_channels: list[str] = Field(
        default_factory=list, description="empty = any", examples=[["C0SECOPS01"]]
    )
    allowed_users: list[str] = Field(
        default_factory=list,
        examples=[["U0ANALYST1"]],
        description="empty = any; U… users or S… user groups (a request naming no user"
        " is then refused, an integration's alert message excepted)",
    )
    admin_users: list[str] = Field(
        default_factory=list,
        examples=[["U0ADMIN01"]],
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
    storm_sweep_s: float = Field(
        2.0,
        ge=0.1,
        le=60.0,
        description="how often each replica's triage places alerts a dead process stored but "
        "never placed, and re-admits alerts a dead replica was launching (seconds)",
    )
    http_port: int = 3000
    max_alert_bytes: int = 256 * 1024
    streaming: Literal["auto", "off"] = Field(
        "auto",
        description="auto: investigations stream into their thread (chat.startStream) where "
        "Slack allows it, else the updated checklist; off: always the checklist",
    )
    home_refresh_s: float = Field(
        10.0,
        ge=0,
        le=3600,
        description="a person's App Home is published again at most this often (seconds); "
        "changes in between are shown together",
    )


class WorkSettings(Section):
    """The durable work queue shared by every replica (``store/queue/work.py``)."""

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
    max_running_per_replica: int | None = Field(
        None,
        ge=1,
        description="this replica's investigations at once (its CPU and memory); default and "
        "cap: slack.max_concurrent_investigations, which holds across all replicas",
    )
    max_running_per_user: int = Field(2, ge=1, description="one person's requests running at once")
    max_queued_per_user: int = Field(5, ge=0, description="one person's requests waiting")
    max_running_per_channel: int = Field(
        3, ge=1, description="people's requests running per channel"
    )
    max_queued_per_channel: int = Field(
        20, ge=0, description="people's requests waiting per channel"
    )
