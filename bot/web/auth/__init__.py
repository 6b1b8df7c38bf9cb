"""Who is looking: signed cookie sessions and CSRF tokens, Sign in with Slack, and what a
signed-in person may see."""

__all__ = ["access", "session", "signin"]
