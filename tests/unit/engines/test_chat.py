"""Recipe prompts render in the one template sandbox, with its limits."""

from __future__ import annotations

import pytest

from vance_cli.base.errors import DocumentError
from vance_cli.engines.chat import fill


@pytest.mark.timeout(10)
@pytest.mark.parametrize("source", [
    "{{ 'x'|center(10**9) }}",
    "{{ lipsum(10**6) }}",
    "{% for a in range(10000) %}{% for b in range(10000) %}{% for c in range(10000) %}"
    "{% endfor %}{% endfor %}{% endfor %}",
    "{{ task.__class__ }}",
])
def test_a_hostile_recipe_prompt_fails_fast_with_one_line(source: str) -> None:
    with pytest.raises(DocumentError) as caught:
        fill(source, {"task": "t", "params": {}, "lang": "en"}, "recipe 'x' prompt")
    assert "recipe 'x' prompt: " in caught.value.message
    assert "\n" not in caught.value.message


def test_an_ordinary_recipe_prompt_renders() -> None:
    assert fill("Do {{ task }} in {{ params.lang | default('en') }}.",
                {"task": "it", "params": {}, "lang": "en"}, "p") == "Do it in en."
