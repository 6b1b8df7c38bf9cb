"""Settings and the catalogue of log tables."""

from config.settings import Settings, load_settings

__all__ = ["Settings", "load_settings"]
