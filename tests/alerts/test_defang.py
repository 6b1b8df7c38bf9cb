"""Every defanged spelling socbot accepts is read back plainly; what it writes reads back."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alerts.defang import (
    defang_email,
    defang_host,
    defang_ipv4,
    defang_ipv6,
    defang_url,
    refang,
)

# The union of what intake, grounding, the intel gate and the eval scorer each read.
SPELLINGS = [
    # a dot
    ("evil[.]com", "evil.com"),
    ("evil(.)com", "evil.com"),
    ("evil{.}com", "evil.com"),
    ("evil[dot]com", "evil.com"),
    ("evil(dot)com", "evil.com"),
    ("evil{dot}com", "evil.com"),
    ("evil[DOT]com", "evil.com"),
    ("evil( Dot )com", "evil.com"),
    ("evil[ . ]com", "evil.com"),
    ("evil[.)com", "evil.com"),
    ("evil(.}com", "evil.com"),
    ("185.220.101[.]42", "185.220.101.42"),
    ("185[.]220[.]101[.]42", "185.220.101.42"),
    # a colon, a scheme separator
    ("2606[:]4700[:][:]1111", "2606:4700::1111"),
    ("2606(:)4700{:}1111", "2606:4700:1111"),
    ("evil.com[ : ]8080", "evil.com:8080"),
    ("http[:]//evil.com", "http://evil.com"),
    ("http[://]evil.com", "http://evil.com"),
    ("http(://)evil.com", "http://evil.com"),
    ("http{ :// }evil.com", "http://evil.com"),
    # an at sign
    ("bob[@]evil.com", "bob@evil.com"),
    ("bob[at]evil.com", "bob@evil.com"),
    ("bob(at)evil.com", "bob@evil.com"),
    ("bob{AT}evil.com", "bob@evil.com"),
    ("bob[ at ]evil.com", "bob@evil.com"),
    # a scheme
    ("hxxp://evil.com", "http://evil.com"),
    ("hxxps://evil.com", "https://evil.com"),
    ("HXXP://evil.com", "http://evil.com"),
    ("hXXps://evil.com", "https://evil.com"),
    ("HXXPS://evil.com", "https://evil.com"),
    ("SFXPS://files.evil.com", "sftps://files.evil.com"),
    ("see hxxps://evil.com", "see https://evil.com"),
    ("(hxxp://evil.com)", "(http://evil.com)"),
    ("fxp://files.evil.com", "ftp://files.evil.com"),
    ("fxps://files.evil.com", "ftps://files.evil.com"),
    ("sfxp://files.evil.com", "sftp://files.evil.com"),
    ("FXP://files.evil.com", "ftp://files.evil.com"),
    ("fxp[://]files.evil.com", "ftp://files.evil.com"),
    # all at once
    (
        "hxxps[://]evil[.]com[:]8443/a.b?u=bob[at]evil(dot)com",
        "https://evil.com:8443/a.b?u=bob@evil.com",
    ),
]

UNCHANGED = [
    "evil.com",
    "the [data] (dotted) {a} [atom] (dots) [:/] [ ] ()",
    "array[0].dot(x) f(a, t) x[..]",
    "xhxxp://evil.com",  # not at the start of a word
    "hxxq://evil.com",
    "fxprofile, fxpx://, afxp://, fxp:/",
    "2hxxp",
    "",
]


@pytest.mark.parametrize(("written", "plain"), SPELLINGS)
def test_each_defanged_spelling_is_read_plainly(written: str, plain: str) -> None:
    assert refang(written) == plain


@pytest.mark.parametrize("text", UNCHANGED)
def test_text_without_a_defanged_spelling_is_unchanged(text: str) -> None:
    assert refang(text) == text


def test_only_the_bracketed_group_is_replaced() -> None:
    assert refang("a[[.]]b ([at]) x") == "a[.]b (@) x"
    assert refang("one pass: [[dot]dot]") == "one pass: [.dot]"


WRITTEN = [
    (defang_host, "evil.example.com", "evil[.]example[.]com"),
    (defang_host, "localhost", "localhost"),
    (defang_ipv4, "185.220.101.42", "185.220.101[.]42"),
    (defang_ipv6, "2606:4700::1111", "2606[:]4700[:][:]1111"),
    (defang_email, "a.user+tag@corp.example.com", "a.user+tag[@]corp[.]example[.]com"),
    (defang_email, "odd@name@evil.com", "odd@name[@]evil[.]com"),
    (defang_url, "https://evil.com/x.sh", "hxxps://evil[.]com/x.sh"),
    (defang_url, "HTTP://Evil.COM:8080/a.b?c=d.e", "hxxp://Evil[.]COM:8080/a.b?c=d.e"),
    (defang_url, "http://evil.com?q=a.b", "hxxp://evil[.]com?q=a.b"),
    (defang_url, "http://evil.com#a.b", "hxxp://evil[.]com#a.b"),
    (defang_url, "http://evil.com/a?b#c.d", "hxxp://evil[.]com/a?b#c.d"),
    (defang_url, "http://evil.com", "hxxp://evil[.]com"),
    (defang_url, "https://evil.com/a.b/c.sh", "hxxps://evil[.]com/a.b/c.sh"),
    (defang_url, "https://evil.com/r?u=https://b.org", "hxxps://evil[.]com/r?u=https://b.org"),
    (defang_url, "http://XX.Evil.com", "hxxp://XX[.]Evil[.]com"),
    (defang_url, "ftp://files.example.org/a", "fxp://files[.]example[.]org/a"),
    (defang_url, "sftp://files.example.org", "sfxp://files[.]example[.]org"),
    (defang_url, "ftps://files.example.org", "fxps://files[.]example[.]org"),
    (defang_url, "file:///etc/passwd.bak", "file:///etc/passwd.bak"),
]


@pytest.mark.parametrize(("write", "plain", "defanged"), WRITTEN)
def test_socbot_writes_the_soc_spelling_and_reads_it_back(
    write: Callable[[str], str], plain: str, defanged: str
) -> None:
    assert write(plain) == defanged
    assert refang(defanged) == plain.replace("HTTP", "http")


_LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
_HOST = st.lists(_LABEL, min_size=2, max_size=4).map(".".join)


# no "x": a path that itself spells "hxxp" or "fxp://" is read as defanged (like any text)
_PATH = st.from_regex(r"(/[a-wyz0-9_.-]{0,12})?", fullmatch=True)


@given(_HOST, st.sampled_from(["http", "https", "ftp", "sftp", "ftps"]), _PATH)
def test_every_url_socbot_defangs_reads_back(host: str, scheme: str, path: str) -> None:
    url = f"{scheme}://{host}{path}"
    assert "." not in defang_url(url).split("/")[2].replace("[.]", "")
    assert refang(defang_url(url)) == url


@given(st.text(alphabet="[](){}.:/@atdoxhpsf \t", max_size=60))
def test_refang_never_lengthens_text(text: str) -> None:
    assert len(refang(text)) <= len(text)


@pytest.mark.parametrize(
    "hostile",
    [
        "[" + " " * 200_000,
        "[ . " * 50_000,
        "(" * 200_000,
        "[" + " " * 100_000 + "." + " " * 100_000,
        "hxx" * 70_000,
        "sfxps:/" * 30_000,
    ],
)
def test_hostile_input_is_read_in_linear_time(hostile: str) -> None:
    started = time.perf_counter()
    assert refang(hostile) == hostile
    assert time.perf_counter() - started < 1.0  # milliseconds; quadratic would be minutes
