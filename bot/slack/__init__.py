"""Talking to Slack: the Web API client, the error set a call may raise, pacing, posting
(once, retried, edited in place), the progress sink and the streamed one (and when to
stream), the thread reporter, and answering a person who clicked.

May import blocks, work, observe. Pure Block Kit goes in ``bot.blocks``, not here."""

__all__ = [
    "client",
    "edited",
    "errors",
    "interaction",
    "members",
    "pacer",
    "post_once",
    "posting",
    "progress",
    "reporter",
    "stream_gate",
    "streaming",
]
