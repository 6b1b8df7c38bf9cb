"""A known person's name in its other spellings gets the same pseudonym; look-alike
words, tool names and other people do not."""

from __future__ import annotations

import json

from agent.model.privacy import Pseudonymiser, PseudonymMap
from agent.model.privacy.detect import Finding
from agent.model.privacy.names import name_spellings
from config.privacy_settings import PrivacySettings

ON = PrivacySettings(enabled=True)


def known(*names: str, pmap: PseudonymMap | None = None) -> Pseudonymiser:
    p = Pseudonymiser(ON, pmap)
    for name in names:
        p.add(Finding("PERSON", name, name, name.casefold()))
    return p


def test_other_spellings_of_a_known_name_are_its_pseudonym() -> None:
    p = known("John Smith")
    text = (
        "From: Smith, John; cc J. Smith, J.Smith and SMITH, J. - login john.smith, "
        "share \\\\fs1\\John_Smith; John Smith"
    )
    out = p.pseudonymise(text)
    assert out == (
        "From: PERSON_1; cc PERSON_1, PERSON_1 and PERSON_1 - login PERSON_1, "
        "share \\\\fs1\\PERSON_1; PERSON_1"
    )
    assert p.restore(out) == (
        "From: John Smith; cc John Smith, John Smith and John Smith - login John Smith, "
        "share \\\\fs1\\John Smith; John Smith"
    )
    assert p.map.counts() == {"PERSON": 1}


def test_longer_words_tools_and_other_people_are_left_alone() -> None:
    p = known("John Smith", "Will Defender")
    text = (
        "Johnson Smithers, John Smithson, Smith, Johnny, J. Smiths, xj.smith, john.smith2, "
        "Jenkins, Windows Defender, Defender ATP, Will, Smith, svchost.exe, Jane Smith, "
        "Smith Johnathan"
    )
    assert p.pseudonymise(text) == text


def test_a_middle_name_or_initial_is_also_left_out() -> None:
    p = known("Mary Ann O'Brien-Lee", "Jean Q. Public")
    out = p.pseudonymise("O'Brien-Lee, Mary; Mary O'Brien-Lee; Jean Public; Public, J.")
    assert out == "PERSON_1; PERSON_1; PERSON_2; PERSON_2"


def test_the_first_person_met_keeps_a_shared_short_form() -> None:
    p = known("John Smith", "Jane Smith")
    out = p.pseudonymise("J. Smith met Jane Smith and John Smith")
    assert out == "PERSON_1 met PERSON_2 and PERSON_1"


def test_a_reopened_map_knows_the_other_spellings() -> None:
    first = known("John Smith")
    first.pseudonymise("John Smith")
    again = Pseudonymiser(ON, PseudonymMap.loads(first.map.dumps()))
    assert again.pseudonymise("Smith, John and john.smith") == "PERSON_1 and PERSON_1"


def test_fullwidth_spellings_and_json_text_are_found() -> None:
    p = known("John Smith")
    fullwidth = (
        "\uff33\uff4d\uff49\uff54\uff48, \uff2a\uff4f\uff48\uff4e"  # "Smith, John", fullwidth
    )
    assert p.pseudonymise(fullwidth) == "PERSON_1"
    row = json.dumps({"owner": "Smith, John", "note": "ask j.smith"})
    assert p.pseudonymise(row) == '{"owner": "PERSON_1", "note": "ask PERSON_1"}'


def test_users_and_e_mails_have_no_name_spellings() -> None:
    p = Pseudonymiser(ON)
    p.add(Finding("USER", "john smith", "john smith", "john smith"))
    p.add(Finding("EMAIL", "a@b.io", "a@b.io", "a@b.io"))
    assert p.pseudonymise("Smith, John") == "Smith, John"


def test_name_spellings() -> None:
    assert name_spellings("John Smith") == [
        "smith, john",
        "j. smith",
        "j.smith",
        "smith, j.",
        "john.smith",
        "john_smith",
    ]
    assert name_spellings("Mary Ann Smith")[-1] == "mary smith"
    assert name_spellings("Anna Maria Luisa Rossi")[-1] == "anna rossi"  # four words
    assert name_spellings("Al Li")[:2] == ["li, al", "a. li"]  # two letters each
    assert name_spellings("Jean Q. Public")[-1] == "jean public"
    for value in (
        "Smith",
        "J Smith",
        "John 2nd",
        "Ann Bo Cy Di Ed",
        "John Sm1th",
        "R2 D2",
        "J. Smith",
    ):
        assert name_spellings(value) == [], value
    assert name_spellings("John Q Smith")[-1] == "john smith"


def test_dotless_and_dotted_i_spellings_are_the_person() -> None:
    p = known("John Smith")
    out = p.pseudonymise("John Sm\u0131th, SM\u0130TH, JOHN, Sm\u0131thers é")
    assert out.startswith("PERSON_1, ") and "Sm\u0131thers" in out
    assert "Sm\u0131th," not in out
