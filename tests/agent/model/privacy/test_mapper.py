"""Pseudonymising text and restoring it: detection, the allowlist, hostile data."""

from __future__ import annotations

import base64
import json

import pytest
from pydantic import SecretStr

from agent.model.privacy import Pseudonymiser, PseudonymMap, footer
from agent.model.privacy.tokens import normalise
from alerts.model import Alert, Entity
from config.privacy_settings import PrivacySettings

ON = PrivacySettings(enabled=True)


def mapper(**settings: object) -> Pseudonymiser:
    return Pseudonymiser(
        ON.model_copy(update=settings),
        marked=["user_name", "full_name", "device"],
        internal_suffixes=(".corp",),
    )


def test_emails_phones_and_domain_users_are_found_and_restored() -> None:
    p = mapper()
    text = "j.doe@example.com rang +44 20 7946 0958, then (202) 555-0143 as CORP\\jdoe."
    out = p.pseudonymise(text)
    assert out == "EMAIL_1 rang PHONE_1, then PHONE_2 as CORP\\USER_1."
    assert p.restore(out) == text


def test_the_same_value_in_any_spelling_is_one_pseudonym() -> None:
    p = mapper()
    out = p.pseudonymise(
        "j.doe@example.com J.Doe@Example.COM \uff4a.doe@example.com "  # fullwidth j
        "https://x.example/?u=j.doe%40example.com +1 202-555-0143 +12025550143"
    )
    assert out == "EMAIL_1 EMAIL_1 EMAIL_1 https://x.example/?u=EMAIL_1 PHONE_1 PHONE_1"
    assert p.map.counts() == {"EMAIL": 1, "PHONE": 1}


def test_marked_columns_of_a_tool_result_are_pseudonymised_everywhere_after() -> None:
    p = mapper()
    data = {
        "columns": ["user_name", "full_name", "src_ip"],
        "rows": [["jdoe", "Jane Doe", "1.2.3.4"]],
    }
    out = p.pseudonymise("<<<DATA-x result of query_logs\n" + json.dumps({"data": data}))
    assert '["USER_1", "PERSON_1", "1.2.3.4"]' in out
    assert p.pseudonymise("Jane Doe is jdoe; jdoe_laptop; jdoe5") == (
        "PERSON_1 is USER_1; USER_1_laptop; jdoe5"
    )


def test_a_table_read_again_finds_only_what_is_new() -> None:
    """Pairs read before are skipped (known, or refused as ``admin``); a new cell is not."""
    p = mapper()

    def table(*rows: list[str]) -> str:
        data = {"columns": ["user_name", "full_name"], "rows": list(rows)}
        return "<<<DATA-x result of query_logs\n" + json.dumps({"data": data})

    first = p.pseudonymise(table(["jdoe", "Jane Doe"], ["admin", "Ann Lee"]))
    assert '[["USER_1", "PERSON_1"], ["admin", "PERSON_2"]]' in first
    again = p.pseudonymise(table(["admin", "Ann Lee"], ["jdoe", "Jane Doe"]) + " ")
    assert '[["admin", "PERSON_2"], ["USER_1", "PERSON_1"]]' in again
    grown = p.pseudonymise(table(["jdoe", "Jane Doe"], ["bsmith", "Ann Lee"], ["admin", "Bo Ek"]))
    assert '["USER_2", "PERSON_2"], ["admin", "PERSON_3"]]' in grown
    assert p.map.counts() == {"USER": 2, "PERSON": 3}


def test_a_marked_value_seen_in_the_text_does_not_stop_the_next() -> None:
    p = mapper()
    data = {"columns": ["user_name", "full_name"], "rows": [["j.doe@example.com", "Jane Doe"]]}
    out = p.pseudonymise(json.dumps(data))
    assert '[["EMAIL_1", "PERSON_1"]]' in out


def test_look_alikes_and_known_values_are_replaced_in_the_order_they_stand() -> None:
    p = mapper()
    p.pseudonymise(
        '{"rows": [["zed", "Zed Ash"], ["abe", "Abe Cole"]], "columns": ["user_name", "full_name"]}'
    )
    text = "zed USER_7 abe, Zed Ash USER 9 Abe Cole"
    out = p.pseudonymise(text)
    assert out == "USER_1 LITERAL_1 USER_2, PERSON_1 LITERAL_2 PERSON_2"
    assert p.restore(out) == text


def test_a_dotless_i_spelling_keeps_its_own_pseudonym() -> None:
    """``SMITH`` is ``smith``'s, not its dotless-i spelling's (IGNORECASE matches both)."""
    p = mapper()
    p.pseudonymise('{"columns": ["user_name"], "rows": [["sm\u0131th"], ["smith"]]}')
    assert p.pseudonymise("\u00e9 SMITH sm\u0131th") == "\u00e9 USER_2 USER_1"


def test_alert_entities_and_name_fields_are_known_before_any_text() -> None:
    p = mapper(hosts=True)
    alert = Alert(
        id="a1",
        source="generic",
        title="t",
        raw={"actor": {"displayName": "Zoë O'Brien"}},
        entities=[
            Entity(kind="user", value="jdoe@corp.example", role="actor"),
            Entity(kind="host", value="ws-jdoe-01", role="target"),
            Entity(kind="ip", value="10.0.0.5"),
        ],
    )
    p.seed_alert(alert)
    out = p.pseudonymise('{"who": "jdoe@corp.example", "on": "ws-jdoe-01", "name": "Zoë O\'Brien"}')
    assert out == '{"who": "USER_1", "on": "HOST_1", "name": "PERSON_1"}'
    assert p.pseudonymise(json.dumps("Zoë O'Brien")) == '"PERSON_1"'  # JSON-escaped too
    assert "10.0.0.5" in p.pseudonymise("10.0.0.5")  # IPs are off by default


def test_ips_internal_or_all() -> None:
    internal = mapper(ips="internal")
    assert internal.pseudonymise("10.1.2.3 to 8.8.8.8 and fd00::1") == "IP_1 to 8.8.8.8 and IP_2"
    every = mapper(ips="all")
    assert every.pseudonymise("10.1.2.3 to 8.8.8.8, 2026-11-28 02:35:16") == (
        "IP_1 to IP_2, 2026-11-28 02:35:16"
    )


def test_restore_is_an_allowlist_an_unknown_pseudonym_stays_as_written() -> None:
    p = mapper()
    p.pseudonymise("jdoe@example.com")
    assert p.restore("EMAIL_1 EMAIL_2 USER_1 EMAIL_01 XEMAIL_1 EMAIL_1x") == (
        "jdoe@example.com EMAIL_2 USER_1 EMAIL_01 XEMAIL_1 EMAIL_1x"
    )
    assert p.map.value_of("EMAIL_2") is None


@pytest.mark.parametrize(
    "forged",
    [
        "USER_1",
        "user_1",
        "USER 1",
        "USER-1",
        "USER1",
        "\uff35\uff33\uff25\uff32\uff3f\uff11",  # fullwidth
        "US\u200bER_1",  # a zero-width space inside
        "U\u0405ER_1",  # Cyrillic DZE for S
        "EMAIL__1",
    ],
)
def test_data_that_looks_like_a_pseudonym_can_never_restore_another_value(forged: str) -> None:
    p = mapper()
    real = p.pseudonymise("CORP\\jdoe")  # USER_1 is jdoe
    assert real == "CORP\\USER_1"
    out = p.pseudonymise(f"the attacker wrote {forged} here")
    assert "USER_1" not in out and "EMAIL_1" not in out
    assert out.startswith("the attacker wrote LITERAL_")
    assert p.restore(out) == f"the attacker wrote {normalise(forged)} here"


def test_a_value_glued_to_digits_never_becomes_another_pseudonym() -> None:
    p = mapper()
    p.pseudonymise("CORP\\jdoe")
    # "jdoe" then "5": replacing the value would spell USER_15, another person.
    assert p.pseudonymise("jdoe5 jdoe") == "jdoe5 USER_1"


def test_a_pseudonym_split_across_answer_parts_is_restored_once_joined() -> None:
    p = mapper()
    p.pseudonymise("a@example.com")
    assert p.restore("EMAIL_" + "1") == "a@example.com"
    assert p.restore("EMAIL_ 1") == "EMAIL_ 1"  # not ours: left as written


def test_a_json_answer_is_restored_value_by_value() -> None:
    p = mapper()
    p.seed_alert(
        Alert(id="a", source="s", title="t", raw={"full_name": 'Jane "JD" Doe'}, entities=[])
    )
    answer = json.dumps({"summary": "PERSON_1 signed in", "who": ["PERSON_1"]})
    assert json.loads(p.restore_json(answer)) == {
        "summary": 'Jane "JD" Doe signed in',
        "who": ['Jane "JD" Doe'],
    }
    assert p.restore_json("not json PERSON_1") == 'not json Jane "JD" Doe'


def test_common_names_numbers_and_short_values_are_left_alone() -> None:
    p = mapper()
    data = {"columns": ["user_name"], "rows": [["root"], ["42"], ["ab"], ["svc-backup"]]}
    out = p.pseudonymise(json.dumps(data))
    assert '"root"' in out and '"42"' in out and '"ab"' in out and "USER_1" in out


def test_the_map_survives_storage_and_keeps_numbering() -> None:
    p = mapper(ips="all")
    p.pseudonymise("a@example.com +44 20 7946 0958 10.0.0.1 USER_9")
    again = Pseudonymiser(ON.model_copy(update={"ips": "all"}), PseudonymMap.loads(p.map.dumps()))
    assert again.pseudonymise("+442079460958 A@example.com b@example.com 10.0.0.1") == (
        "PHONE_1 EMAIL_1 EMAIL_2 IP_1"
    )
    assert again.restore("LITERAL_1") == "USER_9"


def test_custom_patterns_and_switched_off_kinds() -> None:
    p = mapper(patterns=[r"EMP-\d{6}"], emails=False, phones=False)
    assert p.pseudonymise("EMP-123456 a@example.com +44 20 7946 0958") == (
        "ID_1 a@example.com +44 20 7946 0958"
    )


def test_footer_counts_kinds_but_not_literals() -> None:
    assert footer({"USER": 4, "EMAIL": 2, "LITERAL": 3}) == (
        "personal data pseudonymised for the model: 4 users, 2 e-mail addresses"
    )
    assert footer({"PHONE": 1}) == "personal data pseudonymised for the model: 1 phone number"
    assert footer({}) == ""


def test_the_key_is_required_and_checked() -> None:
    with pytest.raises(ValueError, match="SOCBOT_PRIVACY_KEY is not set"):
        ON.key_bytes()
    with pytest.raises(ValueError, match="exactly 32 bytes"):
        ON.model_copy(update={"key": SecretStr("c2hvcnQ=")}).key_bytes()
    key = base64.b64encode(bytes(range(32))).decode()
    assert ON.model_copy(update={"key": SecretStr(key)}).key_bytes() == bytes(range(32))
    with pytest.raises(ValueError, match="no regular expression"):
        PrivacySettings(patterns=["("])
