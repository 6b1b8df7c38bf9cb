"""The investigation engine. Never imports ``bot``."""
