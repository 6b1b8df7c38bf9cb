"""The alert policy between intake and investigation: the gate, the dispatch in front of
a channel's triage, held alerts and the parts one replica builds."""

__all__ = ["dispatch", "gate", "held", "setup"]
