"""The seam to Gemini: the google-genai client, the gateway, context caching, prices,
reply parsing and the data fence of a model call.

Imports ``agent.errors`` and the floors below ``agent`` only, never the engine's stages.
A new model provider or a change to how calls are made, retried or priced goes here.
"""
