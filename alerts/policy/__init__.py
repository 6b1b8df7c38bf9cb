"""The alert policy: rules as data that decide, before any investigation, what happens
to a parsed alert (ignore, suppress, route, re-rate, investigate with settings, budget).

Pure code over ``alerts.model.Alert``: rule files in, a ``Decision`` out; it imports
only ``alerts`` and ``config``. Counting hits and spending budgets is the store's
(``store.triage.policy``), acting on a decision the bot's (``bot.intake.policy.gate``).
"""
