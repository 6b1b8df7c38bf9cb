"""``Pseudonymiser``: one conversation's text on its way to the model and back.

``pseudonymise`` reads a text once: it finds the personal values in it (the patterns,
the marked columns of a tool result), then replaces every value the conversation knows
(found now, earlier, or seeded from the alert) by its pseudonym, and every look-alike of
a pseudonym in the data by a ``LITERAL_n`` of its own. ``restore`` puts the real values
back, for this map's pseudonyms only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from agent.model.privacy.columns import column_kind, json_in, marked_values
from agent.model.privacy.detect import NAME_KEYS, Detector, Finding
from agent.model.privacy.encoded import encoded_texts
from agent.model.privacy.names import name_spellings
from agent.model.privacy.scan import Spellings, plain_case, splice, trie_regex
from agent.model.privacy.tokens import PseudonymMap, lookalikes, normalise
from alerts.model import Alert
from config.privacy_settings import PrivacySettings

_MEMO = 256  # texts remembered per conversation (the contents repeat on every call)
_MARKED = 50_000  # marked (column, value) pairs remembered as read (then forgotten)
_ENTITY_KINDS = {"user": "USER", "email": "EMAIL", "host": "HOST", "ip": "IP"}


class Pseudonymiser:
    """The map of one conversation and what it is applied with."""

    def __init__(
        self,
        settings: PrivacySettings,
        pmap: PseudonymMap | None = None,
        *,
        marked: Iterable[str] = (),
        internal_suffixes: tuple[str, ...] = (),
    ) -> None:
        self.map = pmap if pmap is not None else PseudonymMap()
        self.detector = Detector(settings, internal_suffixes=internal_suffixes)
        self.marked = frozenset(c.lower() for c in marked)
        self._aliases: dict[str, str] = {}  # spelling, lower() -> token
        self._patterns: list[re.Pattern[str]] = []  # the known spellings, case-insensitive
        self._finders: list[Spellings] = []  # the same, as an automaton (lowered text)
        self._memo: dict[str, tuple[int, str]] = {}
        self._marked: set[tuple[str, str]] = set()  # (column, value) pairs read: known or refused
        for token, value in self.map.values():
            if not token.startswith("LITERAL_"):
                for spelling in _spellings(value):
                    self._aliases[spelling] = token
        for token, value in self.map.values():  # after every value's own spellings
            self._learn_names(token, value)

    def add(self, finding: Finding) -> str:
        """The pseudonym of a value, and its spelling learnt for replacement (a spelling
        already known keeps its pseudonym, whatever kind it is found as now)."""
        token = self._aliases.get(normalise(finding.spelling).lower())
        if token is not None:
            return token
        token = self.map.known(finding.kind, finding.key)
        if token is None:
            token = self.map.token_for(finding.kind, finding.value, key=finding.key)
        for spelling in _spellings(finding.spelling):
            if self._aliases.get(spelling) != token:
                self._aliases[spelling] = token
                self._patterns.clear()
                self._finders.clear()
        self._learn_names(token, finding.value)
        return token

    def _learn_names(self, token: str, value: str) -> None:
        """A person's other spellings of the name, unless one already stands for a value
        (the first person met keeps ``J. Smith``)."""
        if token.startswith("PERSON_"):
            for spelling in name_spellings(value):
                if spelling not in self._aliases:
                    self._aliases[spelling] = token
                    self._patterns.clear()
                    self._finders.clear()

    def seed_alert(self, alert: Alert) -> None:
        """The alert's users, e-mails, hosts and IPs, and its name fields, as known values."""
        for entity in alert.entities:
            kind = _ENTITY_KINDS.get(entity.kind)
            found = self.detector.value(kind, normalise(entity.value)) if kind else None
            if found is not None:
                self.add(found)
        for key, value in _fields(alert.raw):
            if key.lower().replace("-", "_") in NAME_KEYS:
                found = self.detector.value("PERSON", normalise(value))
                if found is not None:
                    self.add(found)

    def pseudonymise(self, text: str) -> str:
        """``text`` as the model may read it."""
        if not text:
            return text
        memo = self._memo.get(text)
        if memo is not None and memo[0] == self.map.version:
            return memo[1]
        clean = normalise(text)
        seen: set[str] = set()
        for finding in self.detector.scan(clean):
            if finding.spelling not in seen:
                seen.add(finding.spelling)
                self.add(finding)
        if self.marked and "{" in clean:
            done = self._marked
            for pair in marked_values(json_in(clean), self.marked, done):
                if pair in done:  # (read before: known, or refused; again it changes nothing)
                    continue
                if len(done) >= _MARKED:
                    done.clear()
                done.add(pair)
                column, value = pair
                if value in seen or normalise(value).lower() in self._aliases:
                    continue
                seen.add(value)
                found = self.detector.value(column_kind(column, value), normalise(value))
                if found is not None:
                    self.add(found)
        for run, decoded in encoded_texts(clean):
            if run.lower() not in self._aliases and self._holds_personal(decoded):
                self.add(Finding("ENCODED", run, run, run))  # the whole run, as written
        out = self._replace(clean)
        if len(self._memo) >= _MEMO:
            self._memo.clear()
        self._memo[text] = (self.map.version, out)
        return out

    def _holds_personal(self, decoded: str) -> bool:
        """Whether text found base64-encoded holds a personal value (its own, learnt now,
        or one the conversation knows) or a look-alike of a pseudonym."""
        inner = normalise(decoded)
        for finding in self.detector.scan(inner):
            self.add(finding)
        return bool(lookalikes(inner)) or (  # (short text: the pattern will do)
            bool(self._aliases) and self._compiled().search(inner) is not None
        )

    def restore(self, text: str) -> str:
        """``text`` with this conversation's pseudonyms turned back into real values."""
        return self.map.restore(text)

    def restore_json(self, text: str) -> str:
        """A JSON answer restored value by value (a value may hold quotes); text that is
        not JSON is restored as text."""
        try:
            data = json.loads(text)
        except ValueError:
            return self.restore(text)
        return json.dumps(self.restore_value(data), ensure_ascii=False)

    def restore_value(self, value: Any) -> Any:
        """Strings anywhere in a JSON-like value restored (keys too)."""
        if isinstance(value, str):
            return self.restore(value)
        if isinstance(value, dict):
            return {self.restore(str(k)): self.restore_value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.restore_value(v) for v in value]
        return value

    def _replace(self, text: str) -> str:
        """Known values by their pseudonyms, look-alikes by literals, in one pass each."""
        spans, news = self._known(text)
        looks = lookalikes(text)
        if looks:
            news = list(news)
            taken = [(a, b) for _, a, b in spans]
            for start, end in looks:
                if not any(a < end and start < b for a, b in taken):
                    literal = text[start:end]
                    news.append(self.map.token_for("LITERAL", literal, key=literal))
                    spans.append((len(news) - 1, start, end))
            spans.sort(key=lambda span: span[1])
        return splice(text, spans, news)

    def _known(self, text: str) -> tuple[list[tuple[int, int, int]], list[str]]:
        """``(index, start, end)`` where the known spellings stand in ``text``, not inside
        a longer word, and the pseudonyms the indexes name (the spelling as written where
        the pattern's match, under IGNORECASE, is none of them).

        The text is searched lowered, with the automaton, where that finds what IGNORECASE
        finds: ASCII text (ASCII letters fold only to ASCII), and text whose letters and
        spellings lower plainly (``plain_case``); other text with the IGNORECASE pattern."""
        if not self._aliases:
            return [], []
        if not self._finders:
            self._finders.append(Spellings(self._aliases))
        finder = self._finders[0]
        lowered = text.lower()
        if finder.complete and (text.isascii() or plain_case(text, lowered)):
            return finder.find(lowered), finder.tokens
        found = [
            m
            for m in self._compiled().finditer(text)
            if not (m.start() and text[m.start() - 1].isalnum())
        ]
        spans = [(n, m.start(), m.end()) for n, m in enumerate(found)]
        return spans, [self._token_of(m.group(0)) for m in found]

    def _token_of(self, found: str) -> str:
        """The pseudonym of a spelling the case-insensitive pattern matched: ``Sm\u0131th``
        (a dotless i) matches ``smith`` but lowers to other text (then each known spelling is
        tried the pattern's way)."""
        token = self._aliases.get(found.lower())
        if token is None:
            fold = re.IGNORECASE
            matching = (
                t for s, t in self._aliases.items() if re.fullmatch(re.escape(s), found, fold)
            )
            token = next(matching, found)
        return token

    def _compiled(self) -> re.Pattern[str]:
        """The known spellings as one case-insensitive pattern (text the automaton cannot
        read as IGNORECASE would); asked only while some spelling is known."""
        if not self._patterns:
            body = trie_regex(sorted(self._aliases))
            # Not glued to a letter or digit (an underscore does not protect a value:
            # ``jdoe_laptop`` becomes ``USER_1_laptop``, which restores to nothing).
            # (the start is checked in ``_known``: a leading look-behind makes it slow).
            self._patterns.append(re.compile(rf"(?:{body})(?![^\W_])", re.IGNORECASE))
        return self._patterns[0]


def _spellings(value: str) -> set[str]:
    """How a value may stand in the text the model reads: as is, and JSON-escaped."""
    plain = normalise(value).lower()
    return {plain, json.dumps(plain)[1:-1], json.dumps(plain, ensure_ascii=False)[1:-1]}


def _fields(data: Any) -> Iterable[tuple[str, str]]:
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, str):
                    yield str(key), value
                elif isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
