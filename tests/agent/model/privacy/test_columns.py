"""The marked columns of a tool result: tables, records at any depth, rows of records, and
what kind of value each column holds."""

from __future__ import annotations

import pytest

from agent.model.privacy.columns import column_kind, json_in, marked_values

MARKED = frozenset({"user_name", "email", "full_name"})


@pytest.mark.parametrize(
    ("column", "value", "kind"),
    [
        ("user_name", "jdoe@example.com", "EMAIL"),
        ("user_name", " jdoe@example.com ", "EMAIL"),
        ("user_name", "jdoe%40example.com", "USER"),  # an e-mail has an @ to be one here
        ("email", "not an address", "USER"),
        ("HostName", "web01", "HOST"),
        ("src_device", "laptop-7", "HOST"),
        ("MACHINE", "m1", "HOST"),
        ("computer_name", "pc1", "HOST"),
        ("Workstation", "ws1", "HOST"),
        ("DisplayName", "John Smith", "PERSON"),
        ("manager_name", "John Smith", "PERSON"),
        ("user_name", "jdoe", "USER"),
        ("account", "jdoe", "USER"),
    ],
)
def test_column_kind(column: str, value: str, kind: str) -> None:
    assert column_kind(column, value) == kind


def test_json_in_a_fenced_result() -> None:
    assert json_in('<<<DATA result\n{"a": 1}\nDATA>>>') == {"a": 1}
    assert json_in('x {"a": 1} y') == {"a": 1}
    assert json_in('{"a": {"b": 2}}x') == {"a": {"b": 2}}
    for text in ("no json", "} {", "{", "{not json}", '"}"'):
        assert json_in(text) is None, text


def test_a_table_and_records_at_any_depth() -> None:
    data = {
        "columns": ["time", "User_Name", "email"],
        "rows": [["t1", "jdoe", "j@x.io"], ["t2", "jdoe", None], ["t3", "asmith", "a@x.io"]],
        "meta": {"owner": {"full_name": "John Smith", "email": 7}},
    }
    assert list(marked_values(data, MARKED)) == [
        ("User_Name", "jdoe"),
        ("email", "j@x.io"),
        ("User_Name", "asmith"),
        ("email", "a@x.io"),
        ("full_name", "John Smith"),
    ]


def test_rows_of_records_without_columns_are_read() -> None:
    data = {"rows": [{"user_name": "jdoe"}, {"USER_NAME": "asmith", "n": 1}]}
    assert list(marked_values(data, MARKED)) == [("USER_NAME", "asmith"), ("user_name", "jdoe")]
    assert list(marked_values({"columns": "user_name", "rows": [["jdoe"]]}, MARKED)) == []


def test_records_inside_cells_of_two_tables() -> None:
    first = {"columns": ["user_name"], "rows": [["jdoe"]]}
    second = {"columns": ["who"], "rows": [[{"full_name": "Ann Lee"}], [["x"]]]}
    assert sorted(marked_values([first, second], MARKED)) == [
        ("full_name", "Ann Lee"),
        ("user_name", "jdoe"),
    ]


def test_a_table_whose_every_pair_is_done_gives_none() -> None:
    data = {"columns": ["user_name", "email"], "rows": [["jdoe", "j@x.io"], ["jdoe", 3]]}
    done = {("user_name", "jdoe"), ("email", "j@x.io")}
    assert list(marked_values(data, MARKED, done)) == []
    assert list(marked_values(data, MARKED, done - {("email", "j@x.io")})) == [
        ("user_name", "jdoe"),
        ("email", "j@x.io"),
    ]
