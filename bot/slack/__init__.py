"""Talking to Slack: the Web API client, pacing, posting (once, retried, edited in place),
the progress sink and the thread reporter."""

__all__ = [
    "client",
    "edited",
    "errors",
    "interaction",
    "pacer",
    "post_once",
    "posting",
    "progress",
    "reporter",
]
