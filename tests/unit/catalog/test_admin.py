from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from helpers import build_file_tree

from vance_cli.base.config import load_settings
from vance_cli.base.errors import CatalogError, InputError
from vance_cli.base.paths import bundled_dir
from vance_cli.catalog.admin import (
    catalog_source,
    catalog_status,
    find_orphans,
    reload_catalog,
    validate_catalog_file,
)
from vance_cli.catalog.model import active_catalog, bundled_catalog, load_active
from vance_cli.workspace import Workspace

BUNDLED_TEXT = (bundled_dir("catalog") / "engines.yaml").read_text(encoding="utf-8")

EXTRA = """  deep-thought:
    purpose: Computes the answer to the ultimate question.
    when_to_use: Questions that take seven and a half million years.
    not_for: Anything urgent.
"""


def with_extra(extra: str = EXTRA) -> str:
    """The bundled catalog plus one engine (so it orphans nothing)."""
    return BUNDLED_TEXT.rstrip("\n") + "\n" + extra



def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_reload_activates_and_records_source_time_and_hash(ws: Workspace, tmp_path: Path) -> None:
    path = write(tmp_path, "engines.yaml", with_extra())
    result = reload_catalog(ws, path)
    assert result.activated and result.previous.source == "bundled"
    active = active_catalog(ws.settings.paths)
    assert active.source == str(path) and "deep-thought" in active.names
    assert active.activated_at and active.activated_at.endswith("Z")
    assert active.sha256 == result.active.sha256 != bundled_catalog().sha256
    record = json.loads(ws.settings.paths.active_catalog_file.read_text())
    assert set(record) == {"source", "activatedAt", "sha256", "engines", "recordDigest"}
    # nothing but the record and the lock file is left in the folder (no temp files)
    assert sorted(p.name for p in ws.settings.paths.catalog_state_dir.iterdir()) == [
        "active.json", "active.lock"]


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("engines:\n  ford: {purpose: p\n", 3, "YAML error"),
        ("engines:\n  ford:\n    purpose: p\n    when_to_use: w\n", 2,
         "engines.ford.not_for: missing required key"),
        ("engines:\n  ford:\n    purpose: p\n    when_to_use: w\n    not_for: n\n"
         "    colour: red\n", 6, "engines.ford.colour: unknown key"),
        ("engines:\n  ok:\n    purpose: p\n    when_to_use: w\n    not_for: n\n  Bad!: {}\n",
         6, "'Bad!' is not valid"),
        ("engines: {}\n", 1, "engines: must name at least one engine"),
        ("engines:\n  ford: {purpose: a, purpose: b}\n", 2, "duplicate key"),
    ],
)
def test_bad_file_is_refused_with_line_and_previous_stays(
        ws: Workspace, tmp_path: Path, text: str, line: int, fragment: str) -> None:
    good = write(tmp_path, "good.yaml", with_extra())
    reload_catalog(ws, good)
    before = ws.settings.paths.active_catalog_file.read_bytes()
    bad = write(tmp_path, "bad.yaml", text)
    result = reload_catalog(ws, bad)
    assert not result.activated
    problem = result.check.problems[0]
    assert problem.file == str(bad) and problem.line == line and fragment in problem.problem
    assert str(problem).startswith(f"{bad}:{line}")
    assert result.active.source == str(good)
    assert ws.settings.paths.active_catalog_file.read_bytes() == before


def test_unreadable_and_non_utf8_files_are_problems(ws: Workspace, tmp_path: Path) -> None:
    from vance_cli.base.errors import PathNotFound

    with pytest.raises(PathNotFound):  # a missing path is exit 2, as everywhere
        validate_catalog_file(ws, tmp_path / "nope.yaml")
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("engines:\n  ford:\n    purpose: caf\xe9\n".encode("latin-1"))
    assert (validate_catalog_file(ws, latin).problems[0].problem
            == "not UTF-8: byte 0xe9 at offset 33")  # the byte's value, then where it is


def test_validate_never_activates(ws: Workspace, tmp_path: Path) -> None:
    check = validate_catalog_file(ws, write(tmp_path, "c.yaml", with_extra()))
    assert check.ok and "deep-thought" in check.to_json()["engines"]
    assert not ws.settings.paths.active_catalog_file.exists()
    assert active_catalog(ws.settings.paths).source == "bundled"


def test_orphaning_reload_is_refused_unless_allowed(
        ws: Workspace, tmp_path: Path, project_dir: Path, tenant_dir: Path,
        vance_home: Path) -> None:
    reload_catalog(ws, write(tmp_path, "a.yaml", with_extra()))
    build_file_tree(project_dir, {"recipes/oracle.yaml": "engine: deep-thought\ndescription: d\n"})
    build_file_tree(tenant_dir, {"recipes/_slart/r1/gen.yaml": "engine: deep-thought\n"
                                                                 "description: d\n"})
    other = vance_home / "data/tenants/acme/projects/moon"
    build_file_tree(other, {"recipes/far.yaml": "engine: deep-thought\ndescription: d\n",
                            "recipes/broken.yaml": "engine: [\n"})
    plain = write(tmp_path, "plain.yaml", BUNDLED_TEXT)
    refused = reload_catalog(ws, plain)
    assert not refused.activated and not refused.check.problems
    assert {(o.name, o.engine) for o in refused.check.orphans} == {
        ("oracle", "deep-thought"), ("_slart/r1/gen", "deep-thought"),
        ("far", "deep-thought")}
    assert active_catalog(ws.settings.paths).source == str(tmp_path / "a.yaml")
    assert not validate_catalog_file(ws, plain).ok
    assert validate_catalog_file(ws, plain, allow_orphans=True).ok
    forced = reload_catalog(ws, plain, allow_orphans=True)
    assert forced.activated and len(forced.check.orphans) == 3
    assert active_catalog(ws.settings.paths).source == str(plain)


def test_bundled_recipes_count_as_orphans(ws: Workspace, tmp_path: Path) -> None:
    only_ford = ("engines:\n  ford:\n    purpose: p\n    when_to_use: w\n    not_for: n\n")
    check = validate_catalog_file(ws, write(tmp_path, "f.yaml", only_ford))
    engines = {o.engine for o in check.orphans}
    assert {"vogon", "zaphod", "marvin"} <= engines and "ford" not in engines
    assert find_orphans(ws, bundled_catalog()) == ()


def test_source_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match=r"--file FILE.*catalog\.file.*VANCE_ENGINE_CATALOG"):
        catalog_source(load_settings(), None)
    monkeypatch.setenv("VANCE_ENGINE_CATALOG", "from-env.yaml")
    assert catalog_source(load_settings(), None) == Path.cwd() / "from-env.yaml"
    assert catalog_source(load_settings(), "given.yaml") == Path.cwd() / "given.yaml"


def test_reload_reads_the_configured_file(ws: Workspace, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "conf.yaml", with_extra())
    monkeypatch.setenv("VANCE_ENGINE_CATALOG", str(path))
    configured = Workspace(load_settings())
    status = catalog_status(configured)
    assert status.configured_file == str(path) and status.reload_pending is True
    assert reload_catalog(configured).active.source == str(path)
    assert catalog_status(configured).reload_pending is False
    path.write_text(with_extra(EXTRA.replace("Anything urgent", "Haste")), encoding="utf-8")
    assert catalog_status(configured).reload_pending is True
    configured.close()


def test_bundled_goes_back_to_the_default(ws: Workspace, tmp_path: Path) -> None:
    reload_catalog(ws, write(tmp_path, "a.yaml", with_extra()))
    result = reload_catalog(ws, bundled=True)
    assert result.activated and active_catalog(ws.settings.paths).source == "bundled"
    assert "deep-thought" not in active_catalog(ws.settings.paths).names


def test_a_hand_edited_record_falls_back_to_bundled_with_a_warning(ws: Workspace,
                                                                   tmp_path: Path) -> None:
    assert reload_catalog(ws, write(tmp_path, "a.yaml", with_extra())).activated
    record = ws.settings.paths.active_catalog_file
    data = json.loads(record.read_text(encoding="utf-8"))
    data["engines"] = [e for e in data["engines"] if e["name"] != "ford"]  # still valid JSON
    record.write_text(json.dumps(data, indent=2), encoding="utf-8")
    active = load_active(ws.settings.paths)
    assert active.catalog.source == "bundled" and "ford" in active.catalog.names
    assert active.warning and "does not match its 'recordDigest'" in active.warning


@pytest.mark.parametrize("damage", ["{not json", '{"source": "x"}', "",
                                    '{"source": "x", "engines": [{"name": "Bad!", "purpose": "p",'
                                    ' "when_to_use": "w", "not_for": "n"}]}'])
def test_damaged_record_falls_back_to_bundled_with_a_warning(
        ws: Workspace, tmp_path: Path, damage: str) -> None:
    record = ws.settings.paths.active_catalog_file
    record.parent.mkdir(parents=True)
    record.write_text(damage)
    active = load_active(ws.settings.paths)
    assert active.catalog.source == "bundled"
    assert active.warning and "damaged" in active.warning
    assert "vance catalog reload" in active.warning
    assert active_catalog(ws.settings.paths).names == bundled_catalog().names
    # a reload repairs it
    assert reload_catalog(ws, write(tmp_path, "a.yaml", with_extra())).activated
    assert load_active(ws.settings.paths).warning is None


def test_lock_timeout_is_a_catalog_error(ws: Workspace, tmp_path: Path) -> None:
    import filelock

    path = write(tmp_path, "a.yaml", with_extra())
    lock_path = ws.settings.paths.catalog_state_dir / "active.lock"
    lock_path.parent.mkdir(parents=True)
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with filelock.FileLock(str(lock_path)):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        held.wait(10)
        with pytest.raises(CatalogError, match="another catalog reload") as info:
            reload_catalog(ws, path, lock_timeout=0.2)
        assert info.value.exit_code == 1
    finally:
        release.set()
        thread.join()
    assert active_catalog(ws.settings.paths).source == "bundled"


def test_concurrent_reloads_in_threads_serialise(tmp_path: Path) -> None:
    files = [write(tmp_path, f"c{i}.yaml", with_extra(EXTRA.replace("urgent", f"urgent {i}")))
             for i in range(6)]
    errors: list[BaseException] = []

    def reload_one(path: Path) -> None:
        local = Workspace(load_settings())
        try:
            assert reload_catalog(local, path).activated
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)
        finally:
            local.close()

    threads = [threading.Thread(target=reload_one, args=(f,)) for f in files]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    active = active_catalog(load_settings().paths)
    assert active.source in {str(f) for f in files}


def test_a_workspace_reads_the_catalog_once_until_refreshed(ws: Workspace,
                                                             tmp_path: Path) -> None:
    first = ws.catalog()
    assert ws.catalog() is first and "deep-thought" not in first.names
    other = Workspace(load_settings())  # another command reloads meanwhile
    try:
        assert reload_catalog(other, write(tmp_path, "engines.yaml", with_extra())).activated
        assert "deep-thought" in other.catalog().names
    finally:
        other.close()
    assert ws.catalog() is first  # read once: this command keeps what it started with
    ws.refresh_catalog()
    assert "deep-thought" in ws.catalog().names
    assert reload_catalog(ws, bundled=True).activated  # its own reload refreshes it
    assert "deep-thought" not in ws.catalog().names
