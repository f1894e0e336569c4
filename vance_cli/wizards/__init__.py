"""Prompt wizards (docs/wizards.md): YAML forms whose answers render into a prompt.

Modules, one concept each:

- ``model``: the typed schema (wizard, field, choice, follow-up, LocalizableText);
- ``loader``: fail-fast loading over the cascade, the load report, lint;
- ``listing``: ``availableIn`` matching, grouping and ordering for ``list``;
- ``validate``: coercion and validation of form values (all errors, 0-based paths);
- ``render``: the Jinja2 sandbox that compiles and renders templates;
- ``followups``: follow-up links appended to a prompt, and parsing them back;
- ``form``: prefill sources and the UI-free, field-by-field interactive walk;
- ``prompt``: values → validated → rendered prompt with follow-ups.

Nothing here imports a UI library; the terminal prompts live in ``vance_cli.cli.ask``.
"""

from __future__ import annotations
