"""The Slack side and the HTTP front of socbot: the bolt app and its lifecycle at the top
level, everything else in wings, each importing only the wings below it (in this order):
web, transport, events, intake, decisions, notify, slack, blocks, work, observe.

May import every floor below (agent, tools, store, core, alerts, config). A new Slack
surface or HTTP route goes in the wing whose docstring names its kind; wiring (which
listener, which runner) goes in ``bot.app``."""
