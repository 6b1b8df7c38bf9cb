"""Slack adapter: bolt app, listeners, middleware, Block Kit rendering, progress sink."""
