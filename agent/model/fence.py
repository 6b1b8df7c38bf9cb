"""How untrusted text enters a model call: the data fence and the user turn.

Every alert field, tool result and thread message reaches the model inside a
``Fence`` (random per-investigation delimiters), never as instructions; the
gateway's repair turns use the same fence as the rest of the run.
"""

from __future__ import annotations

import re
import secrets

from google.genai import types


class Fence:
    """Wraps untrusted text in ``<<<DATA-<token> label ... DATA-<token>>>`` delimiters.

    One fence per request: the token is random, so text inside cannot guess it and
    close the block early; any occurrence of the token inside the data (in any case)
    is defused, so even text that learnt it cannot close the block.
    """

    def __init__(self, token: str | None = None) -> None:
        self.token = token or secrets.token_hex(8)
        self.start = f"<<<DATA-{self.token}"
        self.end = f"DATA-{self.token}>>>"
        self._token_re = re.compile(re.escape(self.token), re.IGNORECASE)

    def __call__(self, label: str, text: str) -> str:
        """``text`` as a delimited data block; ``label`` says what it is."""
        safe = self._token_re.sub("x" * len(self.token), text)
        clean_label = re.sub(r"[^A-Za-z0-9 _.:-]", "", label)[:60]
        return f"{self.start} {clean_label}\n{safe}\n{self.end}"


def user_turn(text: str) -> list[types.Content]:
    """``text`` as the one user turn of a model call's contents."""
    return [types.Content(role="user", parts=[types.Part(text=text)])]
