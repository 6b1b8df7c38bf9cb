"""Settings of pseudonymisation (``[privacy]``): which personal data the model never sees.

With ``enabled``, every request to the model carries pseudonyms (``USER_3``, ``EMAIL_2``)
instead of the kinds switched on here, and every answer is turned back into real values
before anything else reads it (``agent.model.privacy``). The map of one conversation is
stored encrypted with the key in ``SOCBOT_PRIVACY_KEY``. Off (the default), requests are
sent as they are, byte for byte.
"""

from __future__ import annotations

import base64
import binascii
import re

from pydantic import Field, SecretStr, field_validator

from config.agent_settings import Section

KEY_ENV = "SOCBOT_PRIVACY_KEY"


class PrivacySettings(Section):
    """What is pseudonymised for the model, and the key of the stored maps."""

    enabled: bool = Field(False, description="pseudonymise personal data before the model")
    emails: bool = Field(True, description="e-mail addresses")
    users: bool = Field(True, description="user names and UPNs (alert users, DOMAIN\\user)")
    names: bool = Field(True, description="person names (alert name fields, marked columns)")
    phones: bool = Field(True, description="phone numbers (international or (555) 123-4567)")
    hosts: bool = Field(False, description="internal host names (alert hosts, internal suffixes)")
    ips: str = Field("off", description="IP addresses: off | internal | all")
    patterns: list[str] = Field(
        default_factory=list, description="regular expressions of a team's own identifiers (ID_n)"
    )
    key: SecretStr | None = Field(
        None, description=f"base64 of 32 random bytes, from {KEY_ENV}; never in the file"
    )

    @field_validator("ips")
    @classmethod
    def _ips(cls, value: str) -> str:
        if value not in ("off", "internal", "all"):
            raise ValueError("privacy.ips is one of off, internal, all")
        return value

    @field_validator("patterns")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                problem = f"privacy.patterns: {pattern!r} is no regular expression: {exc}"
                raise ValueError(problem) from exc
        return value

    def kinds(self) -> list[str]:
        """The kinds switched on, as the footer and ``socbot doctor`` name them."""
        on = [k for k in ("emails", "users", "names", "phones", "hosts") if getattr(self, k)]
        if self.ips != "off":
            on.append(f"ips ({self.ips})")
        if self.patterns:
            on.append(f"{len(self.patterns)} patterns")
        return on

    def key_bytes(self) -> bytes:
        """The 32-byte map key; ``ValueError`` says what to set when it is missing or bad."""
        if self.key is None:
            raise ValueError(
                f"privacy.enabled is on but {KEY_ENV} is not set: set it to base64 of 32 random "
                "bytes (openssl rand -base64 32)"
            )
        try:
            raw = base64.b64decode(self.key.get_secret_value(), validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != 32:
            raise ValueError(f"{KEY_ENV} must be base64 of exactly 32 bytes")
        return raw
