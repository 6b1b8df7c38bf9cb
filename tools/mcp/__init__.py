"""MCP servers as tool sources: ``[[mcp.servers]]`` tools offered as ``<server>__<tool>``.

Owns the SDK client (``connection``), schema conversion to Gemini's subset
(``schema``), the argument egress gate for external servers (``egress``) and the
registry adaptor (``tool``); ``hub.McpHub`` starts them. Imports only ``tools.base``,
``tools.intel.internal`` and ``config``. The SDK is imported only when a server is set.
"""
