"""The vocabulary the floors above share: progress events (``core.events``) and token usage.

The engine emits these, the store records them, Slack and the terminal render them, so
they live below all three; and the pure figures of quality in the field (``core.quality``,
``core.playbook_effect``), which the store feeds and the web pages and ``socbot report``
both show; which past alerts a request may see (``core.scope``). Imports nothing of
socbot. Only plain data types and pure functions go here.
"""
