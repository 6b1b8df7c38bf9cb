"""Loaded by every Python subprocess a test starts (``PYTHONPATH`` names this folder).

The same rule as the test process's autouse guard (``tests/conftest.py``): only
loopback and unix sockets. A subprocess that tries to resolve or reach any other
address fails with ``ConnectionRefusedError`` naming it, so a replica under test can
never reach Slack, Gemini or anything else for real, whatever its settings say.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _is_local(host: Any) -> bool:  # as tests/conftest.py (this process cannot import it)
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(str(host).strip("[]")).is_loopback
    except ValueError:
        return False


def _check(sock: socket.socket, address: Any) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
        raise ConnectionRefusedError(f"network blocked in tests: {address!r}")


def _connect(self: socket.socket, address: Any) -> None:
    _check(self, address)
    _real_connect(self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address)
    return _real_connect_ex(self, address)


def _getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if not _is_local(host):
        raise socket.gaierror(socket.EAI_NONAME, f"network blocked in tests: {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _connect  # type: ignore[method-assign]
socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]
socket.getaddrinfo = _getaddrinfo
