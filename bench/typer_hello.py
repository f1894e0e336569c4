"""The framework floor: a bare Typer hello-world app (same Typer as vance).

``python bench/typer_hello.py`` prints a greeting; ``--help`` shows help.
``bench/startup.py`` times it next to vance's commands.
"""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False)


@app.command()
def hello(name: str = "world") -> None:
    """Say hello."""
    typer.echo(f"hello {name}")


if __name__ == "__main__":
    app()
