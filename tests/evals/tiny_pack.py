"""A two-scenario pack in the new format (``pack.toml``), written into a folder for tests:
an Okta sign-in table of background rows, and twins with one alert — an attacker's
sign-in after a spray (``spray``) and a traveller's with MFA (``trip``)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

PACK_TOML = """
name = "tiny"
description = "two twins"

[gates]
max_answer_chars = 3000

[[tables]]
id = "okta_system_log"
name = "corp.identity.okta_system_log"
description = "Okta System Log: event_type, actor, client_ip, country, outcome"
time_column = "event_time"
"""

ALERT = {
    "title": "Sign-in from a new country",
    "severity": "medium",
    "user": "j.doe@corp.example",
    "country": "NL",
}

SCENARIO = """
title = "{title}"
category = "identity"
genuine = false
pair = "{pair}"

[provenance]
origin = "invented for the tests"
licence = "Apache-2.0"

[truth]
verdicts = {verdicts}
rationale = "{rationale}"
severity = {severity}
must_establish = [{{ value = "{value}", table = "okta_system_log" }}]
techniques = {techniques}
forbidden = {forbidden}
"""

SPRAY = {
    "title": "spray then sign-in",
    "pair": "trip",
    "verdicts": '["true_positive"]',
    "rationale": "40 failures from 91.92.240.17 before the success",
    "severity": '["high", "critical"]',
    "value": "91.92.240.17",
    "techniques": '["T1110.003"]',
    "forbidden": '[{ verdict = "benign" }]',
}
TRIP = {
    "title": "traveller",
    "pair": "spray",
    "verdicts": '["benign", "inconclusive"]',
    "rationale": "MFA satisfied from the booked trip's hotel network",
    "severity": '["info", "low"]',
    "value": "hotel-okura",
    "techniques": "[]",
    "forbidden": '[{ compromised = "j.doe@corp.example" }]',
}

COLUMNS = "event_time TIMESTAMP, event_type VARCHAR, actor VARCHAR, client_ip VARCHAR, country VARCHAR, outcome VARCHAR"  # noqa: E501


def _parquet(path: Path, rows: list[tuple[str, ...]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t ({COLUMNS})")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", rows)
    con.execute(f"COPY t TO '{path}' (FORMAT parquet)")
    con.close()


def write_tiny_pack(root: Path) -> Path:
    """The pack's folder under ``root``."""
    pack = root / "tiny"
    (pack / "data" / "okta_system_log").mkdir(parents=True)
    (pack / "pack.toml").write_text(PACK_TOML)
    background = [
        (f"2026-03-0{d} 0{h}:00:00", "user.session.start", f"u{h}@corp.example",
         f"10.0.0.{h}", "DE", "SUCCESS")
        for d in range(1, 4) for h in range(1, 8)
    ]  # fmt: skip
    _parquet(pack / "data" / "okta_system_log" / "part-0.parquet", background)
    for name, spec, ip in (("spray", SPRAY, "91.92.240.17"), ("trip", TRIP, "hotel-okura")):
        folder = pack / "scenarios" / name
        folder.mkdir(parents=True)
        (folder / "scenario.toml").write_text(SCENARIO.format(**spec))
        (folder / "alert.json").write_text(json.dumps(ALERT))
        row = ("2026-03-02 10:00:00", "user.session.start", "j.doe@corp.example", ip, "NL", "OK")
        _parquet(folder / "inject" / "okta_system_log.parquet", [row])
    return pack
