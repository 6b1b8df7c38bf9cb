"""Who is looking: signed cookie sessions and CSRF tokens, Sign in with Slack (OpenID
Connect), and what a signed-in person may see.

Imports no other web wing."""

__all__ = ["access", "session", "signin"]
