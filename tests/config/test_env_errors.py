"""``SOCBOT_*`` variables: a value a setting refuses, or a name that is no setting, is one
line naming the variable, what it expected and an example (``config.env_check``)."""

from __future__ import annotations

import pytest

from config.env_check import EnvError, check_environment
from config.settings import WELL_KNOWN_ENV, Settings

CASES = [
    (
        "SOCBOT_SLACK__ALERT_CHANNELS",
        "C0ALERTS01",
        """SOCBOT_SLACK__ALERT_CHANNELS must be a JSON list, e.g. '["C0ALERTS01"]'""",
    ),
    (
        "SOCBOT_SLACK__ADMIN_USERS",
        '{"U1": 1}',
        """SOCBOT_SLACK__ADMIN_USERS must be a JSON list, e.g. '["U0ADMIN01"]'""",
    ),
    (
        "SOCBOT_LIMTS__MAX_STEPS",
        "5",
        "SOCBOT_LIMTS__MAX_STEPS names no setting: limts is not a known section; "
        "did you mean SOCBOT_LIMITS__MAX_STEPS?",
    ),
    (
        "SOCBOT_LIMITS__MAX_STEPSS",
        "5",
        "SOCBOT_LIMITS__MAX_STEPSS names no setting: limits.max_stepss is not a known "
        "setting; did you mean SOCBOT_LIMITS__MAX_STEPS?",
    ),
    (
        "SOCBOT_NOTHING_LIKE_IT",
        "1",
        "SOCBOT_NOTHING_LIKE_IT names no setting: nothing_like_it is not a known setting",
    ),
    (
        "SOCBOT_LIMITS__MAX_STEPS",
        "five",
        "SOCBOT_LIMITS__MAX_STEPS must be a valid integer, unable to parse string as an "
        "integer, e.g. 8",
    ),
    (
        "SOCBOT_LIMITS__MAX_STEPS",
        "0",
        "SOCBOT_LIMITS__MAX_STEPS must be greater than or equal to 1, e.g. 8",
    ),
    (
        "SOCBOT_LOGS__BACKEND",
        "mysql",
        "SOCBOT_LOGS__BACKEND must be 'duckdb' or 'bigquery', e.g. duckdb",
    ),
    (
        "SOCBOT_REVIEW__ENABLED",
        "maybe",
        "SOCBOT_REVIEW__ENABLED must be a valid boolean, unable to interpret input, e.g. true",
    ),
    ("SOCBOT_LIMITS", "8", """SOCBOT_LIMITS must be a JSON object, e.g. '{"max_steps": 8}'"""),
    (
        "SOCBOT_LIMITS",
        '{"max_steps": "x"}',
        "SOCBOT_LIMITS (max_steps) must be a valid integer, unable to parse string as an "
        """integer, e.g. '{"max_steps": 8}'""",
    ),
    (
        "SOCBOT_LOGS__TABLES",
        "auth_logs",
        """SOCBOT_LOGS__TABLES must be a JSON list, e.g. '[{"name": "…", "description": "…"}]'""",
    ),
    (
        "SOCBOT_GEMINI__PRICES",
        "cheap",
        "SOCBOT_GEMINI__PRICES must be a JSON object, e.g. "
        """'{"gemini-2.5-flash": {"input": 0.3, "output": 2.5, "cached_input": 0.03}}'""",
    ),
]


@pytest.mark.parametrize(("name", "value", "line"), CASES)
def test_a_bad_variable_is_one_line_naming_it(name: str, value: str, line: str) -> None:
    with pytest.raises(EnvError) as raised:
        check_environment(Settings, {name: value}, WELL_KNOWN_ENV)
    assert str(raised.value) == line


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SOCBOT_SLACK__ALERT_CHANNELS", '["C0ALERTS01"]'),
        ("SOCBOT_LIMITS__MAX_STEPS", "5"),
        ("socbot_limits__max_steps", "5"),  # read case-insensitively, as pydantic-settings does
        ("SOCBOT_LIMITS", '{"max_steps": 5}'),
        ("SOCBOT_GEMINI__PRICES__MY-MODEL__INPUT", "1"),  # a key inside a dict setting
        ("SOCBOT_DATABASE_URL", "sqlite:///x.db"),
        ("SOCBOT_CONFIG", "config/socbot.toml"),
        ("SOCBOT_GEMINI_BASE_URL", "http://127.0.0.1:1"),  # a well-known variable
        ("SOCBOT_SLACK__BOT_TOKEN", "xoxb-not-a-real-token"),
        ("OTHER_SOCBOT_THING", "x"),
    ],
)
def test_good_variables_pass(name: str, value: str) -> None:
    check_environment(Settings, {name: value}, WELL_KNOWN_ENV)
