"""The MCP server: process_create, process_create_delegate and their companions as tools.

An entry point like ``cli/``: ``vance mcp`` starts it, the core never imports
it, and only it imports the MCP SDK (docs/mcp.md, docs/architecture.md).
"""

from __future__ import annotations
