"""The restore gate and the seam, each rule asserted on its own (mutation group
``pseudonyms``): what is sent out is exactly the pseudonymised copy, what comes back is
restored only from this map."""

from __future__ import annotations

import json

import pytest
from google.genai import types

from agent.model.privacy import Pseudonymiser, PseudonymMap, incoming, outgoing
from agent.model.privacy.scan import trie_regex
from agent.model.privacy.tokens import lookalikes, normalise
from alerts.model import Alert, Entity
from config.privacy_settings import PrivacySettings
from tests.fakes.model import response

ON = PrivacySettings(enabled=True)


def test_the_map_hands_out_one_token_per_value_and_counts_kinds() -> None:
    m = PseudonymMap()
    assert m.version == 0
    assert m.token_for("EMAIL", "A@x.io") == "EMAIL_1" == m.token_for("EMAIL", "a@x.io")
    assert m.version == 1
    assert m.token_for("EMAIL", "b@x.io") == "EMAIL_2" and m.version == 2
    assert m.token_for("PHONE", "+1 202", key="+1202") == "PHONE_1"
    assert m.known("PHONE", "+1202") == "PHONE_1" and m.known("EMAIL", "+1202") is None
    m.token_for("LITERAL", "USER_1", key="USER_1")
    assert m.counts() == {"EMAIL": 2, "PHONE": 1}
    with pytest.raises(ValueError, match="unknown pseudonym kind 'BOGUS'"):
        m.token_for("BOGUS", "x")


def test_a_stored_map_reopens_with_its_keys_and_its_unicode() -> None:
    m = PseudonymMap()
    m.token_for("PHONE", "+44 20 7946 0958", key="+442079460958")
    m.token_for("PERSON", "Zoë")
    m.token_for("USER", "jdoe")
    data = m.dumps()
    assert "Zoë".encode() in data
    again = PseudonymMap.loads(data)
    assert again.known("PHONE", "+442079460958") == "PHONE_1"
    assert again.value_of("PERSON_1") == "Zoë" and again.value_of("USER_1") == "jdoe"
    assert again.version == 3
    with pytest.raises(ValueError, match="a stored pseudonym map is out of order"):
        PseudonymMap.loads(json.dumps([["EMAIL_2", "a@x.io", "a@x.io"]]).encode())


def test_restore_only_whole_tokens_of_this_map() -> None:
    m = PseudonymMap()
    m.token_for("EMAIL", "a@x.io")
    assert m.restore("EMAIL_1") == "a@x.io"
    assert m.restore("(EMAIL_1)") == "(a@x.io)"
    for glued in ("_EMAIL_1", "a_EMAIL_1", "aEMAIL_1", "1EMAIL_1", "EMAIL_1_", "EMAIL_1a"):
        assert m.restore(glued) == glued
    assert m.restore("no tokens here") == "no tokens here"


def test_lookalikes_ascii_and_not_and_adjacent() -> None:
    assert lookalikes("USER_1 USER_2") == [(0, 6), (7, 13)]
    assert lookalikes("USER_1USER_2") == [(0, 6), (6, 12)]  # a digit does not shield one
    assert lookalikes("é USER_1") == [(2, 8)]
    assert lookalikes("plain text") == []
    assert normalise("a\u200bb") == "ab" and normalise("ab") == "ab"


def test_a_data_lookalike_inside_a_known_value_stays_that_value() -> None:
    p = Pseudonymiser(ON)
    assert p.pseudonymise("USER_1@x.io and USER_1") == "EMAIL_1 and LITERAL_1"
    assert p.restore("EMAIL_1 LITERAL_1") == "USER_1@x.io USER_1"
    again = Pseudonymiser(ON, PseudonymMap.loads(p.map.dumps()))
    assert again.pseudonymise("USER_1@x.io") == "EMAIL_1"  # known again after loading
    assert again.pseudonymise("USER_1") == "LITERAL_1"


def test_the_trie_matches_every_word_longest_first() -> None:
    import re

    pattern = re.compile(f"(?:{trie_regex(['ab', 'abc', 'b', 'abd'])})")
    assert pattern.findall("abc abd ab b") == ["abc", "abd", "ab", "b"]


def test_values_are_replaced_when_known_and_the_memo_follows_new_values() -> None:
    p = Pseudonymiser(ON, marked=["user_name"])
    text = "jdoe logged in"
    assert p.pseudonymise(text) == text  # not known yet
    p.pseudonymise(json.dumps({"columns": ["user_name"], "rows": [["jdoe"], ["jdoe"]]}))
    assert p.pseudonymise(text) == "USER_1 logged in"  # the memo saw the map grow
    assert p.pseudonymise(text) == "USER_1 logged in"
    assert p.pseudonymise(json.dumps({"User_Name": "asmith"})) == '{"User_Name": "USER_2"}'
    assert p.pseudonymise("Zoë") == "Zoë"
    p.seed_alert(Alert(id="a", source="s", title="t", raw={"display-name": "Zoë Q"}))
    assert p.pseudonymise('"Zo\\u00eb Q" and "Zoë Q"') == '"PERSON_1" and "PERSON_1"'


def test_alert_entities_of_other_kinds_are_not_values() -> None:
    p = Pseudonymiser(ON)
    alert = Alert(
        id="a",
        source="s",
        title="t",
        raw={},
        entities=[Entity(kind="process", value="powershell"), Entity(kind="user", value="jdoe")],
    )
    p.seed_alert(alert)
    assert p.pseudonymise("powershell by jdoe") == "powershell by USER_1"


def test_hosts_use_the_internal_suffixes() -> None:
    p = Pseudonymiser(ON.model_copy(update={"hosts": True}), internal_suffixes=(".corp",))
    assert p.pseudonymise("ws1.corp and ws1.example") == "HOST_1 and ws1.example"


def test_a_json_answer_keeps_unicode_and_restores_keys() -> None:
    p = Pseudonymiser(ON)
    p.map.token_for("PERSON", "Zoë")
    assert p.restore_json('{"PERSON_1": ["PERSON_1", 1]}') == '{"Zoë": ["Zoë", 1]}'


def call_parts() -> list[types.Content]:
    call = types.FunctionCall(name="q", args={"a@x.io": ["b@x.io", {"k": "c@x.io"}]})
    reply = types.FunctionResponse(name="q", response={"output": "d@x.io"})
    return [
        types.Content(role="model", parts=[types.Part(function_call=call)]),
        types.Content(role="user", parts=[types.Part(function_response=reply)]),
    ]


def test_outgoing_sends_exactly_the_pseudonymised_parts() -> None:
    p = Pseudonymiser(ON)
    system = types.Content(parts=[types.Part(text="for e@x.io")])
    tools = [
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(name="q", description="ask f@x.io"),
                types.FunctionDeclaration(name="r"),
            ]
        )
    ]
    config = types.GenerateContentConfig(system_instruction=system, tools=tools)
    sent, out = outgoing(p, call_parts(), config)
    assert sent[0].parts and sent[0].parts[0].function_call
    assert sent[0].parts[0].function_call.args == {"EMAIL_3": ["EMAIL_4", {"k": "EMAIL_5"}]}
    assert sent[1].parts and sent[1].parts[0].function_response
    assert sent[1].parts[0].function_response.response == {"output": "EMAIL_6"}
    assert isinstance(out.system_instruction, types.Content)
    assert out.system_instruction.parts and out.system_instruction.parts[0].text == "for EMAIL_1"
    assert out.tools and isinstance(out.tools[0], types.Tool)
    declared = out.tools[0].function_declarations or []
    assert [(d.name, d.description) for d in declared] == [("q", "ask EMAIL_2"), ("r", None)]
    with pytest.raises(TypeError, match="a system instruction socbot does not build"):
        outgoing(p, [], types.GenerateContentConfig(system_instruction=[types.Part(text="x")]))
    blob = types.Part(inline_data=types.Blob(data=b"x", mime_type="image/png"))
    with pytest.raises(TypeError, match="a file part socbot does not send"):
        outgoing(p, [types.Content(role="user", parts=[blob])], types.GenerateContentConfig())
    plain = types.Part(thought_signature=b"s")
    sent, _ = outgoing(p, [types.Content(role="user", parts=[plain])], config)
    assert sent[0].parts == [plain]


def test_incoming_restores_thoughts_as_text_and_keeps_parts_apart() -> None:
    p = Pseudonymiser(ON)
    p.map.token_for("PERSON", 'J "D"')
    structured = types.GenerateContentConfig(response_mime_type="application/json")
    parts = [
        types.Part(text="PERSON_1 thinks", thought=True),
        types.Part(text='{"a": "PERSON_1"}'),
        types.Part(text=" PERSON_1", thought_signature=b"s"),
    ]
    back = incoming(p, response(parts), structured)
    got = back.candidates[0].content.parts  # type: ignore[index,union-attr]
    assert got is not None
    assert [(x.text, bool(x.thought)) for x in got] == [
        ('J "D" thinks', True),
        ('{"a": "J \\"D\\""}', False),
        (' J "D"', False),
    ]
    empty = types.GenerateContentResponse(candidates=None)
    assert incoming(p, empty, structured) is empty
    none = types.GenerateContentResponse(candidates=[types.Candidate(content=None)])
    assert incoming(p, none, structured).candidates[0].content is None  # type: ignore[index]
    untouched = types.Part(function_call=types.FunctionCall(name="x"))
    back = incoming(p, response([untouched]), structured)
    assert back.candidates[0].content.parts == [untouched]  # type: ignore[index,union-attr]


def test_a_value_with_quotes_and_accents_is_found_in_raw_json_too() -> None:
    p = Pseudonymiser(ON)
    p.seed_alert(Alert(id="a", source="s", title="t", raw={"full_name": 'Zoë "Z" Ng'}))
    raw = json.dumps({"n": 'Zoë "Z" Ng'}, ensure_ascii=False)  # as tool results are sent
    assert p.pseudonymise(raw) == '{"n": "PERSON_1"}'
    assert p.pseudonymise(json.dumps({"n": 'Zoë "Z" Ng'})) == '{"n": "PERSON_1"}'


def test_a_reopened_map_knows_its_values_but_not_its_literals_as_values() -> None:
    p = Pseudonymiser(ON, marked=["user_name"])
    p.pseudonymise(json.dumps({"columns": ["user_name"], "rows": [["jdoe"]]}) + " USER_1")
    again = Pseudonymiser(ON, PseudonymMap.loads(p.map.dumps()))
    assert again.pseudonymise("jdoe here") == "USER_1 here"
    assert again.pseudonymise("user_1 and USER_1") == "LITERAL_2 and LITERAL_1"
    assert again.restore("LITERAL_2 and LITERAL_1") == "user_1 and USER_1"


def test_lookalikes_alone_and_marked_values_after_a_known_one() -> None:
    assert Pseudonymiser(ON).pseudonymise("only USER_1") == "only LITERAL_1"
    p = Pseudonymiser(ON, marked=["user_name"])
    p.pseudonymise(json.dumps({"columns": ["user_name"], "rows": [["jdoe"]]}))
    rows = json.dumps({"columns": ["user_name"], "rows": [["jdoe"], ["asmith"]]})
    assert p.pseudonymise(rows) == '{"columns": ["user_name"], "rows": [["USER_1"], ["USER_2"]]}'
    p.seed_alert(Alert(id="a", source="s", title="t", raw={"people": [{"fullName": "Ann Lee"}]}))
    assert p.pseudonymise("Ann Lee") == "PERSON_1"
