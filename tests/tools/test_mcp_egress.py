"""The MCP egress gate on its own: every string of the arguments is judged, keys and
numbers included, at any depth, and the refusal says which server and why (at most
five reasons, each once, in the order found). The addresses and names are invented
for the tests (RFC 1918 and RFC 5737 ranges, ``.corp`` names)."""

from __future__ import annotations

import ipaddress

import pytest

from tools.base import ToolError
from tools.mcp.egress import MAX_REASONS, ArgumentsWithheld, ensure_sendable

SUFFIXES = (".corp",)
TAIL = ". Internal addresses, names and e-mail addresses never leave the machine."


def withheld(args: dict[str, object], server: str = "assets") -> str:
    with pytest.raises(ArgumentsWithheld) as info:
        ensure_sendable(server, args, SUFFIXES)
    return str(info.value)


def test_the_refusal_names_the_server_and_every_reason_once_in_order() -> None:
    message = withheld(
        {"q": "10.1.2.3 and dc01.corp", "again": ["10.1.2.3"], "who": "jane@example.org"}
    )
    assert message == (
        "not sent: 'assets' is an external service and the arguments contain "
        "a private address (10.1.2.3); an internal host name (dc01.corp); "
        "an e-mail address (jane@example.org)" + TAIL
    )
    assert isinstance(ArgumentsWithheld("x"), ToolError)  # the model reads it as a tool error


def test_at_most_five_reasons_are_shown() -> None:
    hosts = [f"10.0.0.{n}" for n in range(1, MAX_REASONS + 3)]
    message = withheld({"hosts": hosts})
    assert MAX_REASONS == 5
    shown = [f"a private address ({h})" for h in hosts[:MAX_REASONS]]
    assert message == (
        "not sent: 'assets' is an external service and the arguments contain "
        + "; ".join(shown)
        + TAIL
    )
    assert "10.0.0.6" not in message


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ({"10.9.8.7": "a key is sent too"}, "a private address (10.9.8.7)"),
        ({"n": 167772161}, "an internal address (10.0.0.1, written 167772161)"),
        ({"n": 10.0}, "an internal address (10.0.0.0, written 10.0)"),
        ({"deep": {"er": [("x", {"host": "db.corp"})]}}, "an internal host name (db.corp)"),
        ({"t": ("192.168.1.1",)}, "a private address (192.168.1.1)"),
        ({"ip": ipaddress.ip_address("127.0.0.1")}, "a loopback address (127.0.0.1)"),
    ],
)
def test_keys_numbers_nested_values_and_other_objects_are_judged(
    args: dict[str, object], reason: str
) -> None:
    assert withheld(args, server="intel") == (
        "not sent: 'intel' is an external service and the arguments contain " + reason + TAIL
    )


def test_public_values_flags_and_nulls_are_sent() -> None:
    ensure_sendable(
        "assets",
        {"ip": "185.220.101.42", "deep": [{"n": 443, "f": 1.5}], "on": True, "off": None},
        SUFFIXES,
    )
    # the suffixes are read once and serve every value, even from a one-shot iterator
    with pytest.raises(ArgumentsWithheld, match=r"db\.corp"):
        ensure_sendable("assets", {"a": "public", "b": "db.corp"}, iter(SUFFIXES))
