"""Block Kit built from data, pure (no I/O): the kit of shared pieces and Slack's limits,
escaping of untrusted text, the investigation's messages, its status message and stream
chunks, alert cards, cases' buttons and thread messages, the weekly digest, run figures,
and the App Home.

May import work and observe. A new message shape goes here."""

__all__ = [
    "cards",
    "case",
    "case_audit",
    "digest",
    "escape",
    "feedback",
    "home",
    "investigation",
    "kit",
    "pane",
    "stats",
    "status",
    "stream",
]
