"""The seam to the model: the providers (Gemini through google-genai, OpenAI-compatible
endpoints through openai; each a backend, routed by ``provider:model`` in
``agent.model.providers``), the gateway, context caching, prices, reply parsing and the
data fence of a model call.

Imports ``agent.errors`` and the floors below ``agent`` only, never the engine's stages.
A new model provider or a change to how calls are made, retried or priced goes here.
"""
