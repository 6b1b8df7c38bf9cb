"""Gemini's implicit context cache, as the fake Gemini models it.

Gemini 2.5 and newer cache implicitly: a request whose prompt starts with a prefix an
earlier request to the same model sent is billed at the cached-input price for that
prefix, reported as ``usageMetadata.cachedContentTokenCount``, when the prefix reaches
the model's minimum (``agent.model.context_cache.min_tokens``, from
https://ai.google.dev/gemini-api/docs/caching: 2,048 tokens for Gemini 2.5 Flash and Pro).
Explicit caches (``cachedContents``) are modelled in ``bench.cached_contents``.

The fake sees a prompt as the system instruction, then the tool declarations, then the
contents (the JSON it received), at ``CHARS_PER_TOKEN`` characters per token, and
matches prefixes in blocks of ``BLOCK_TOKENS`` tokens (digests of every block-aligned
prefix, per model). ``lookup`` returns the longest repeated prefix in tokens (what
*could* be cached, whatever its size) and what is reported as cached (the same, when it
reaches the minimum; else 0). There is no expiry: the benchmarks send the repeats
within seconds, well inside the documented "short amount of time".
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from agent.model.context_cache import min_tokens

CHARS_PER_TOKEN = 4
BLOCK_TOKENS = 16
MAX_DIGESTS = 2_000_000  # per model; the cache starts over beyond this


@dataclass
class ImplicitCache:
    """Prefix digests of every prompt seen, per model."""

    block_chars: int = BLOCK_TOKENS * CHARS_PER_TOKEN
    min_tokens: int | None = None  # override the documented minimum (sensitivity runs)
    seen: dict[str, set[bytes]] = field(default_factory=dict)

    def lookup(self, model: str, prompt: str) -> tuple[int, int]:
        """(repeated prefix tokens, cached tokens) of ``prompt``; then remember it."""
        digests = self._digests(prompt)
        known = self.seen.setdefault(model, set())
        repeated_blocks = 0
        for digest in digests:  # prefix-closed: stop at the first unseen prefix
            if digest not in known:
                break
            repeated_blocks += 1
        if len(known) + len(digests) > MAX_DIGESTS:
            known.clear()
        known.update(digests)
        repeated = repeated_blocks * self.block_chars // CHARS_PER_TOKEN
        minimum = self.min_tokens if self.min_tokens is not None else min_tokens(model)
        return repeated, repeated if repeated >= minimum else 0

    def clear(self) -> None:
        self.seen.clear()

    def _digests(self, prompt: str) -> list[bytes]:
        data = prompt.encode("utf-8", "surrogatepass")
        h = hashlib.blake2b(digest_size=16)
        out = []
        whole = len(data) - len(data) % self.block_chars
        for start in range(0, whole, self.block_chars):
            h.update(data[start : start + self.block_chars])
            out.append(h.copy().digest())
        return out
