"""Personal data hidden in base64 reaches the model as ``ENCODED_n`` and comes back whole;
encoded text holding nothing personal, hashes and binary stay as they are."""

from __future__ import annotations

import base64
import json

import pytest
from pydantic import SecretStr

from agent.model.privacy import Pseudonymiser
from agent.model.privacy.encoded import MAX_RUNS, encoded_texts, runs
from agent.model.privacy.tokens import PseudonymMap
from config.privacy_settings import PrivacySettings

SETTINGS = PrivacySettings(enabled=True, key=SecretStr(base64.b64encode(bytes(32)).decode()))
SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def b64(text: str, codec: str = "utf-8", urlsafe: bool = False) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(text.encode(codec)).decode()


@pytest.mark.parametrize(
    ("encoded", "hidden"),
    [
        (b64("Send-MailMessage -To j.doe@example.com", "utf-16-le"), "j.doe@example.com"),
        (b64("user=alice@corp.example&x=1", urlsafe=True).rstrip("="), "alice@corp.example"),
        (b64("call +44 20 7946 0958 today"), "+44 20 7946 0958"),
        (b64("inner " + b64("mail bob@corp.example now")), "bob@corp.example"),
    ],
    ids=["powershell-utf16", "urlsafe-unpadded", "phone", "twice-encoded"],
)
def test_an_encoded_personal_value_never_reaches_the_model(encoded: str, hidden: str) -> None:
    p = Pseudonymiser(SETTINGS)
    row = json.dumps({"columns": ["cmd"], "rows": [[f"powershell.exe -enc {encoded}"]]})
    out = p.pseudonymise(row)
    assert encoded not in out and "ENCODED_1" in out
    assert hidden not in out and hidden not in json.dumps(p.pseudonymise(hidden))
    assert p.restore(out) == row  # the tool gets the very run back
    assert p.map.counts()["ENCODED"] == 1


def test_a_value_the_conversation_knows_is_found_encoded() -> None:
    p = Pseudonymiser(SETTINGS)
    p.pseudonymise("owner: CORP\\jdoe")  # a user, known from now on
    encoded = b64("runas /user:jdoe cmd")
    assert p.pseudonymise(f"cmd {encoded}") == "cmd ENCODED_1"


def test_an_encoded_look_alike_of_a_pseudonym_is_hidden() -> None:
    p = Pseudonymiser(SETTINGS)
    encoded = b64("promote USER_1 to admin")
    assert p.pseudonymise(f"x {encoded}") == "x ENCODED_1"


@pytest.mark.parametrize(
    "text",
    [
        f"sha256 {SHA256}",
        "cmd " + b64("Get-Process | Sort-Object CPU", "utf-16-le"),  # nothing personal
        "blob " + base64.b64encode(bytes(range(256))).decode(),  # binary
        "event_identifier_without_meaning",
    ],
)
def test_what_holds_nothing_personal_is_left_alone(text: str) -> None:
    p = Pseudonymiser(SETTINGS)
    assert p.pseudonymise(text) == text and p.map.counts() == {}


def test_runs_stand_alone_with_their_padding() -> None:
    text = "é" + "A" * 16 + "== and QUJD too short; " + "B" * 20 + "=x"
    assert [text[a:b] for a, b in runs(text)] == ["A" * 16 + "==", "B" * 20 + "="]


def test_the_runs_looked_at_are_bounded() -> None:
    many = " ".join(b64(f"item number {i:05d}") for i in range(MAX_RUNS + 50))
    assert len(list(encoded_texts(many))) == MAX_RUNS


def test_an_encoded_pseudonym_survives_a_stored_map() -> None:
    p = Pseudonymiser(SETTINGS)
    encoded = b64("mail carol@corp.example")
    out = p.pseudonymise(encoded)
    again = Pseudonymiser(SETTINGS, PseudonymMap.loads(p.map.dumps()))
    assert again.restore(out) == encoded and again.pseudonymise(encoded) == out
