"""Fakes at the network edge for tests (a scripted Gemini model)."""
