"""The bundled layer works from a built wheel installed outside the repo.

A wheel is built from this checkout with hatchling (the project's build
backend, no network: ``--no-build-isolation``), installed into a throwaway
folder with pip, and the main job runs from there in a folder far from the
repo: the bundled catalog, recipes, prompts and wizards must come from
``vance_cli/_bundled/`` inside the installed package (DESIGN.md §2).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from filelock import FileLock

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """Build the wheel once per test run and install it (no dependencies) into ``site/``.

    Under xdist the two tests may run on two workers: they share the run's folder, and a
    lock lets the first build while the other waits for it, instead of building twice.
    """
    pytest.importorskip("hatchling", reason="the build backend is in the test extras")
    base = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        base = base.parent  # this run's folder, shared by its workers (not by other runs)
    root = base / "wheel"
    site = root / "site"
    with FileLock(str(base / "wheel.lock")):
        if not (root / "installed").exists():
            dist = root / "dist"
            subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "--no-index", "-q", "-w", str(dist),
                            str(REPO)], check=True, capture_output=True, text=True, timeout=240)
            wheels = list(dist.glob("vance-*.whl"))
            assert len(wheels) == 1, wheels
            subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                            "-q", "--target", str(site), str(wheels[0])],
                           check=True, capture_output=True, text=True, timeout=240)
            (root / "installed").touch()
    return site


def _run(site: Path, cwd: Path, home: Path,
         args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("VANCE_", "OPENAI_", "PYTHON"))}
    env.update(PYTHONPATH=str(site), VANCE_HOME=str(home), PYTHONSAFEPATH="1")
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_wheel_ships_the_bundled_layer(installed: Path) -> None:
    wheel = next((installed.parent / "dist").glob("vance-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("vance_cli/_bundled/catalog/engines.yaml",
                     "vance_cli/_bundled/catalog/recipes/essay-pipeline.yaml",
                     "vance_cli/_bundled/catalog/prompts/slartibartfast.md",
                     "vance_cli/_bundled/wizards/gremium.yaml"):
        assert required in names
    assert not any(name.startswith(("tests/", "bench/")) for name in names)


def test_main_job_runs_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    cwd, home = tmp_path / "elsewhere", tmp_path / "home"
    cwd.mkdir()
    where = _run(installed, cwd, home, ["-c", "import vance_cli.base.paths as p; "
                                        "print(p.bundled_dir('catalog')); print(p.__file__)"])
    assert where.returncode == 0, where.stderr
    bundled, module = where.stdout.split()
    assert Path(module).is_relative_to(installed)
    assert Path(bundled) == installed / "vance_cli" / "_bundled" / "catalog"

    task = "Write a short essay about the history of tea"
    decided = _run(installed, cwd, home, ["-m", "vance_cli", "delegate", "--task", task, "--json"])
    assert decided.returncode == 0, decided.stderr
    outcome = json.loads(decided.stdout)
    assert (outcome["decision"], outcome["recipe"]) == ("MATCH", "essay-pipeline")

    listed = _run(installed, cwd, home, ["-m", "vance_cli", "process", "list", "--json"])
    rows = json.loads(listed.stdout)
    assert [(row["id"], row["recipe"]) for row in rows] == [(outcome["process"]["id"],
                                                             "essay-pipeline")]
    wizards = _run(installed, cwd, home, ["-m", "vance_cli", "wizard", "list", "--json"])
    assert wizards.returncode == 0, wizards.stderr
    assert {"gremium", "essay-recipe"} <= {w["name"] for w in json.loads(wizards.stdout)}
