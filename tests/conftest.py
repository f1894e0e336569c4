"""Shared fixtures: every test gets its own VANCE_HOME and a clean environment."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import postgres
import pytest
from helpers import CliResult, build_file_tree, run_cli  # noqa: F401 - re-exported for tests
from llm_server import ScriptedLLMServer

from vance_cli.base import json_mode, logs
from vance_cli.base.config import load_settings
from vance_cli.workspace import Workspace

_CLEARED_PREFIXES = ("VANCE_", "OPENAI_")
_CLEARED = ("NO_COLOR", "FORCE_COLOR", "LC_ALL", "LC_MESSAGES", "VISUAL", "EDITOR",
            # the programs a test starts write .pyc files as any installation has them (as
            # bench/startup.py and the MCP transport tests do): with PYTHONDONTWRITEBYTECODE
            # each of the ~130 vance programs of a run compiled the package again
            "PYTHONDONTWRITEBYTECODE")


@pytest.fixture(autouse=True)
def vance_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary VANCE_HOME, a clean environment and a neutral working directory."""
    for key in list(os.environ):
        if key.startswith(_CLEARED_PREFIXES) or key in _CLEARED:
            monkeypatch.delenv(key, raising=False)
    home = tmp_path / "home"
    monkeypatch.setenv("VANCE_HOME", str(home))
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("TERM", "dumb")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return home


@pytest.fixture(autouse=True)
def json_rungs() -> Iterator[None]:
    """Each test starts with no endpoint's structured-output step-down remembered."""
    json_mode.ACCEPTED.clear()
    yield
    json_mode.ACCEPTED.clear()


@pytest.fixture(autouse=True)
def core_warnings() -> Iterator[None]:
    """Each test starts with the core's warnings as a program that set nothing up has them.

    An in-process ``vance`` run registers the command line's warning setup, which gives the
    ``vance_cli`` logger its stderr handler and stops propagation; without this reset a later
    test in the same worker would find its warnings gone from ``caplog``.
    """
    logger = logging.getLogger("vance_cli")
    setups, handlers, propagate = dict(logs._setups), list(logger.handlers), logger.propagate
    yield
    logs._setups.clear()
    logs._setups.update(setups)
    logger.handlers[:] = handlers
    logger.propagate = propagate


@pytest.fixture()
def project_dir(vance_home: Path) -> Path:
    """The default project's layer folder (tenant 'default', project 'default')."""
    return vance_home / "data" / "tenants" / "default" / "projects" / "default"


@pytest.fixture()
def tenant_dir(vance_home: Path) -> Path:
    """The default tenant's own layer folder (projects/_tenant)."""
    return vance_home / "data" / "tenants" / "default" / "projects" / "_tenant"


@pytest.fixture()
def ws(vance_home: Path) -> Iterator[Workspace]:
    """A Workspace on the test's VANCE_HOME (settings from the environment), closed after."""
    workspace = Workspace(load_settings())
    yield workspace
    workspace.close()


@pytest.fixture()
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A started scripted OpenAI-compatible server on 127.0.0.1 (see ``tests/llm_server.py``)."""
    server = ScriptedLLMServer().start()
    try:
        yield server
    finally:
        server.stop()


STORES = ("sqlite", "postgresql")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run a test that uses ``state_store`` on both stores.

    One marked ``sqlite_only`` runs on SQLite only; one marked ``postgres`` itself (a test
    of the PostgreSQL store) on PostgreSQL only.
    """
    if "state_store" not in metafunc.fixturenames:
        return
    definition = metafunc.definition
    if definition.get_closest_marker("sqlite_only") is not None:
        metafunc.parametrize("state_store", ["sqlite"], indirect=True)
        return
    if definition.get_closest_marker("postgres") is not None:
        metafunc.parametrize("state_store", ["postgresql"], indirect=True)
        return
    metafunc.parametrize("state_store", [
        "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)], indirect=True)


@pytest.fixture()
def state_store(request: pytest.FixtureRequest, vance_home: Path,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The store the test runs on: ``sqlite`` (the default file) or ``postgresql``.

    On PostgreSQL the test gets a migrated database of its own (``tests/postgres.py``),
    named by ``VANCE_STATE_URL``; without a server that run is skipped, saying why.
    """
    store = getattr(request, "param", "sqlite")
    if store == "sqlite":
        yield store
        return
    assert postgres.ADMIN_URL is not None  # else skipped at collection (below)
    with postgres.fresh_database() as url:
        monkeypatch.setenv("VANCE_STATE_URL", url)
        with postgres.team_worker():  # team mode: turns are jobs, a worker runs them
            yield store


@pytest.fixture(scope="session", autouse=True)
def _postgres_template() -> Iterator[None]:
    """Drop this worker's PostgreSQL template database when the run ends."""
    yield
    postgres.drop_template()


REAL_MODEL_SKIP = ("a real model takes minutes: run with -m real_model after "
                   ".ci/real-model setup (docs/development.md)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the ``real_model`` tests unless the run selects them by ``-m``, and the PostgreSQL
    runs without a server, each with the reason (one summary line per file)."""
    if postgres.ADMIN_URL is None:
        no_server = pytest.mark.skip(reason=postgres.SKIP_REASON)
        for item in items:
            if item.get_closest_marker("postgres") is not None:
                item.add_marker(no_server)
    if "real_model" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason=REAL_MODEL_SKIP)
    for item in items:
        if item.get_closest_marker("real_model") is not None:
            item.add_marker(skip)
