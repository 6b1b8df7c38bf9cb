"""The vocabulary the floors above share: progress events (``core.events``) and token usage.

The engine emits these, the store records them, Slack and the terminal render them, so
they live below all three. Imports nothing of socbot. Only plain data types go here.
"""
