"""A pseudonym map sealed for the store: AES-256-GCM with the key from the environment.

The conversation id is the associated data, so a sealed map copied onto another
conversation does not open; a wrong key or a changed byte raises ``ValueError``.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from agent.model.privacy.tokens import PseudonymMap

_VERSION = b"\x01"
_NONCE = 12


def seal(key: bytes, conversation_id: str, pmap: PseudonymMap) -> bytes:
    """The map, encrypted and authenticated for ``conversation_id``."""
    nonce = os.urandom(_NONCE)
    sealed = AESGCM(key).encrypt(nonce, pmap.dumps(), conversation_id.encode())
    return _VERSION + nonce + sealed


def unseal(key: bytes, conversation_id: str, data: bytes) -> PseudonymMap:
    """The map ``seal`` made; ``ValueError`` when it is not one (key, conversation, bytes)."""
    if data[:1] != _VERSION or len(data) < 1 + _NONCE + 16:
        raise ValueError("a stored pseudonym map is not one socbot sealed")
    nonce, sealed = data[1 : 1 + _NONCE], data[1 + _NONCE :]
    try:
        plain = AESGCM(key).decrypt(nonce, sealed, conversation_id.encode())
    except InvalidTag as exc:
        raise ValueError(
            "a stored pseudonym map does not open with SOCBOT_PRIVACY_KEY (another key?)"
        ) from exc
    return PseudonymMap.loads(plain)
