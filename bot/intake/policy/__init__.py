"""The alert policy between intake and investigation: the gate (one verdict per stored
alert), the dispatch in front of a channel's triage, alerts a budget held, and the parts
one replica builds.

May import the wings below ``bot.intake``; never intake's own modules."""

__all__ = ["dispatch", "gate", "held", "setup"]
