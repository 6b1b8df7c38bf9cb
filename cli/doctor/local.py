"""Checks that stay on this machine: settings, DuckDB files, intel keys, privacy, the
database."""

from __future__ import annotations

import glob
import os
from pathlib import Path

from cli.doctor.report import Check
from config.settings import Settings, config_files
from tools import intel


def settings_files() -> Check:
    files = config_files()
    if files:
        return Check.ok("settings", "read " + ", ".join(str(f) for f in files))
    return Check.fail(
        "settings",
        f"no settings file (config/socbot.toml not found in {Path.cwd()}): log tools are off",
        "run from the repository, or set SOCBOT_CONFIG to your settings file",
    )


def duckdb_files(settings: Settings) -> list[Check]:
    """Each catalogued table's local file(s), when the backend is DuckDB."""
    logs = settings.logs
    if logs.backend != "duckdb":
        return []
    if not logs.tables:
        return [Check.skip("duckdb", "no tables catalogued (logs.tables): log tools are off")]
    checks = []
    for table in logs.tables:
        if table.path is None:
            checks.append(Check.skip(f"duckdb {table.name}", "no local path (logs.tables[].path)"))
            continue
        found = glob.glob(os.path.expanduser(table.path))
        if found:
            checks.append(Check.ok(f"duckdb {table.name}", f"{len(found)} file(s) at {table.path}"))
        else:
            checks.append(
                Check.fail(
                    f"duckdb {table.name}",
                    f"no file matches {table.path} (from {Path.cwd()})",
                    "fix logs.tables[].path, or run from the folder it is relative to",
                )
            )
    return checks


def intel_keys(settings: Settings) -> Check:
    services = intel.service_status(settings)
    on = [s.name for s in services if s.configured]
    off = [s for s in services if not s.configured]
    unset = ", ".join(s.env_var for s in off)
    if not on:
        return Check.skip("intel", f"no threat-intel service configured (set one of {unset})")
    detail = ", ".join(on) + " configured"
    return Check.ok("intel", detail + (f"; not set: {unset}" if off else ""))


def privacy(settings: Settings) -> Check:
    """What the model sees pseudonymised ([privacy]), and whether the map key is usable."""
    p = settings.privacy
    if not p.enabled:
        return Check.skip("privacy", "off: personal data reaches the model as it is")
    try:
        p.key_bytes()
    except ValueError as exc:
        return Check.fail("privacy", str(exc), "set SOCBOT_PRIVACY_KEY (openssl rand -base64 32)")
    marked = sum(len(t.personal) for t in settings.logs.tables)
    kinds = ", ".join(p.kinds()) or "no kind"
    return Check.ok("privacy", f"pseudonymised for the model: {kinds}; {marked} marked columns")


async def database(settings: Settings) -> Check:
    """Reachable, and at the newest migration (read only: doctor migrates nothing)."""
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    from cli.database import db_name, open_database, sqlite_file_missing
    from config.settings import ConfigError
    from store.db.revisions import at_head, head_revision

    missing = sqlite_file_missing(settings.database_url)
    if missing:
        return Check.ok("database", f"{missing} does not exist yet; the first command creates it")
    try:
        db = open_database(settings.database_url)
    except ConfigError as exc:
        return Check.fail("database", str(exc), "check SOCBOT_DATABASE_URL")
    try:
        async with db.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
        current = await at_head(db.engine)
    except (DBAPIError, OSError) as exc:
        reason = exc.orig if isinstance(exc, DBAPIError) else exc
        return Check.fail(
            "database", f"cannot reach {db_name(db)} ({reason})", "check SOCBOT_DATABASE_URL"
        )
    finally:
        await db.close()
    if not current:
        return Check.fail(
            "database",
            f"{db_name(db)} is not at the newest revision ({head_revision()})",
            "run `socbot db upgrade`",
        )
    return Check.ok("database", f"{db_name(db)} at revision {head_revision()}")


async def webhooks(settings: Settings) -> Check:
    """Webhook deliveries (``store.notify_status``): any failed or waiting after a failure."""
    if not settings.notify.webhooks:
        return Check.skip("webhooks", "no [[notify.webhooks]] configured")
    from cli.database import open_database, sqlite_file_missing
    from store.notify_status import delivery_status

    if sqlite_file_missing(settings.database_url):
        return Check.ok("webhooks", "nothing delivered yet")
    db = open_database(settings.database_url)
    try:
        status = await delivery_status(db)
    finally:
        await db.close()
    detail = (
        f"{status.delivered} delivered, {status.queued} waiting ({status.retrying} after a "
        f"failure), {status.failed} failed"
    )
    if status.healthy:
        return Check.ok("webhooks", detail)
    return Check.fail(
        "webhooks",
        f"{detail}; last error: {status.last_error}",
        "check the receiver (docs/integrations.md); failed deliveries are not sent again",
    )
