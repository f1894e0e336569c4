"""Run several ``vance`` command lines one after the other in one process.

Usage: python cli_loop.py COMMANDS_JSON
  COMMANDS_JSON  a JSON list of command lines, each a list of arguments after ``vance``
Each runs through the real boundary (``helpers.run_cli``: exit-code mapping, fresh
output streams). Prints one JSON list: ``{"code", "stdout", "stderr"}`` per command,
in order. A test starts several of these side by side: many commands of separate
processes at once, without an interpreter start for each.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import run_cli  # the tests folder, put on the path above


def main() -> int:
    results = []
    for args in json.loads(sys.argv[1]):
        result = run_cli(args)
        results.append({"code": result.exit_code, "stdout": result.stdout,
                        "stderr": result.stderr})
    sys.stdout.write(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
