"""The engine in a terminal: ``investigate``, ``chat``, the progress sink, approvals at the
prompt, the record ``--json`` prints."""
