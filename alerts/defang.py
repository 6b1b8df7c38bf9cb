"""Defanged indicators, both ways: the one spelling socbot reads and writes.

``refang`` undoes every defanging socbot accepts, so intake, the review's evidence
check, the egress gates and the eval scorer agree on what a defanged indicator is:

- a dot, colon, ``://`` or at sign between brackets: ``[.]``, ``(.)``, ``{.}``,
  ``[dot]``, ``(dot)``, ``[:]``, ``[://]``, ``[@]``, ``[at]``, ``(at)``; any of
  ``[({`` opens, any of ``])}`` closes, white space may pad the inside and the words
  are in any case (``[ DOT ]``);
- ``hxxp``/``hxxps`` at the start of a word (any case) for ``http``/``https``, and
  ``fxp``/``fxps``/``sfxp`` before ``://`` for ``ftp``/``ftps``/``sftp`` (the scheme
  written in lower case, as the intel gate sends it).

It is one pass of two regular expressions without nested repetition: linear in the
length of the text, whatever an attacker writes in an alert field.

``defang_*`` write the spelling ``bot.blocks.escape`` posts to Slack
(``hxxps://evil[.]com/x``, ``185.220.101[.]42``, ``a[@]b[.]com``, ``2001[:]db8[:][:]1``);
``refang`` reads each of them back as it was (unless the plain value spelled a defanged
form itself, as a path ``/hxxp`` does: that is read as defanged wherever it is).
"""

from __future__ import annotations

import re

_BRACKETED = re.compile(r"[\[({]\s*(://|:|\.|dot|@|at)\s*[\])}]", re.I)
_PLAIN = {"://": "://", ":": ":", ".": ".", "dot": ".", "@": "@", "at": "@"}
_SCHEME = re.compile(r"\bhxxp(s?)|\b(s?)fxp(s?)(?=://)", re.I)


def refang(text: str) -> str:
    """``text`` with every defanged spelling written plainly (nothing else changes)."""
    text = _BRACKETED.sub(lambda m: _PLAIN[m.group(1).lower()], text)
    return _SCHEME.sub(_scheme, text)


def defang_host(host: str) -> str:
    """Every dot of a host name or domain bracketed: ``evil[.]example[.]com``."""
    return host.replace(".", "[.]")


def defang_url(url: str) -> str:
    """The scheme (``hxxp``, ``fxp``, lower case) and the host's dots of an absolute URL;
    its path, query and fragment stay as written."""
    scheme, _, rest = url.partition("://")
    scheme = scheme.lower().replace("http", "hxxp").replace("ftp", "fxp")
    split = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    return f"{scheme}://{defang_host(rest[:split])}{rest[split:]}"


def defang_email(address: str) -> str:
    """``user[@]domain[.]tld``."""
    user, _, domain = address.rpartition("@")
    return f"{user}[@]{defang_host(domain)}"


def defang_ipv4(address: str) -> str:
    """The last dot of a dotted IPv4 address: ``185.220.101[.]42``."""
    head, _, last = address.rpartition(".")
    return f"{head}[.]{last}"


def defang_ipv6(address: str) -> str:
    """Every colon of an IPv6 address: ``2001[:]db8[:][:]1``."""
    return address.replace(":", "[:]")


def _scheme(match: re.Match[str]) -> str:
    if match.group(1) is not None:
        return "http" + match.group(1).lower()
    return f"{match.group(2)}ftp{match.group(3)}".lower()
