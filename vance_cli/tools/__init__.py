"""Tools an engine's turn can call: the descriptor, the built-in tools, MCP tool sources, the gate.

Rule: docs/tools.md
"""
