"""Personal data hidden in base64 reaches the model as ``ENCODED_n`` and comes back whole;
encoded text holding nothing personal, hashes and binary stay as they are."""

from __future__ import annotations

import base64
import json

import pytest
from pydantic import SecretStr

from agent.model.privacy import Pseudonymiser
from agent.model.privacy.encoded import DEPTH, MAX_CHARS, MAX_RUNS, encoded_texts, runs
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
        (
            b64("Set-ADUser -Identity 'Müller' -EmailAddress m.mueller@corp.example", "utf-16-le"),
            "m.mueller@corp.example",
        ),
        (b64("to: ann@corp.example")[:-2], "ann@corp.example"),  # 26 characters: 2 mod 4
        (b64("to: anna@corp.example")[:-1], "anna@corp.example"),  # 27 characters: 3 mod 4
    ],
    ids=[
        "powershell-utf16",
        "urlsafe-unpadded",
        "phone",
        "twice-encoded",
        "utf16-not-utf8",
        "unpadded-2",
        "unpadded-3",
    ],
)
def test_an_encoded_personal_value_never_reaches_the_model(encoded: str, hidden: str) -> None:
    p = Pseudonymiser(SETTINGS)
    row = json.dumps({"columns": ["cmd"], "rows": [[f"powershell.exe -enc {encoded}"]]})
    out = p.pseudonymise(row)
    assert encoded not in out and "ENCODED_1" in out
    assert hidden not in out and hidden not in json.dumps(p.pseudonymise(hidden))
    assert p.restore(out) == row  # the tool gets the very run back
    assert p.map.counts()["ENCODED"] == 1


def test_a_run_that_is_no_text_does_not_stop_the_search() -> None:
    p = Pseudonymiser(SETTINGS)
    text = f"{SHA256} then {b64('from eve@corp.example')}"
    assert p.pseudonymise(text) == f"{SHA256} then ENCODED_1"


def test_encodings_are_followed_three_deep_and_no_further() -> None:
    value = "mail dan@corp.example now"
    for _ in range(DEPTH):
        value = b64(value)
    assert Pseudonymiser(SETTINGS).pseudonymise(f"x {value}") == "x ENCODED_1"
    deeper = b64(value)
    assert [d for _run, d in encoded_texts(deeper)][-1] == b64("mail dan@corp.example now")


def test_a_run_over_the_cap_is_not_decoded() -> None:
    filler = "a" * (MAX_CHARS * 3 // 4 - len(" x eve@corp.example"))  # 3 bytes, 4 characters
    at_cap = b64(f"{filler} x eve@corp.example")
    assert len(at_cap) == MAX_CHARS
    assert [run for run, _ in encoded_texts(at_cap)] == [at_cap]
    assert list(encoded_texts(b64(f"{filler} xxxx eve@corp.example"))) == []


def test_a_known_value_is_found_in_text_that_is_not_ascii() -> None:
    p = Pseudonymiser(SETTINGS)
    p.pseudonymise("from jdoe@corp.example")
    assert p.pseudonymise("İİİ jdoe@corp.example İ") == "İİİ EMAIL_1 İ"


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
    assert out == "ENCODED_1"  # the whole text is the run: from its first to its last character
    again = Pseudonymiser(SETTINGS, PseudonymMap.loads(p.map.dumps()))
    assert again.restore(out) == encoded and again.pseudonymise(encoded) == out


def test_a_run_keeps_at_most_two_padding_characters() -> None:
    encoded = b64("to: an@corp.example")  # 19 bytes: "==" at the end
    assert encoded.endswith("==")
    p = Pseudonymiser(SETTINGS)
    assert p.pseudonymise(f"{encoded}= end") == "ENCODED_1= end"
