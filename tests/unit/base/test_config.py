from __future__ import annotations

from pathlib import Path

import pytest

from vance_cli.base.config import load_settings, locale_language, mask_secret, set_config_value
from vance_cli.base.errors import ConfigError


def _write_config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text)


@pytest.mark.parametrize(
    ("flag", "env", "file", "expected", "origin"),
    [
        ("f", "e", "c", "f", "flag"),
        (None, "e", "c", "e", "env:VANCE_TENANT"),
        (None, None, "c", "c", "file"),
        (None, None, None, "default", "default"),
    ],
)
def test_precedence_flag_env_file_default(vance_home: Path, flag: str | None, env: str | None,
                                          file: str | None, expected: str, origin: str) -> None:
    if file:
        _write_config(vance_home, f"tenant: {file}\n")
    environ = {"VANCE_HOME": str(vance_home)}
    if env:
        environ["VANCE_TENANT"] = env
    settings = load_settings(flags={"tenant": flag}, environ=environ)
    assert settings.tenant == expected
    assert settings.origin["tenant"] == origin


def test_openai_env_is_read_after_the_config_file(vance_home: Path) -> None:
    _write_config(vance_home, "llm:\n  base_url: http://localhost:11434/v1\n")
    environ = {"VANCE_HOME": str(vance_home), "OPENAI_BASE_URL": "https://example.invalid/v1",
               "OPENAI_API_KEY": "sk-abcdefghijkl"}
    settings = load_settings(environ=environ)
    assert settings.llm_base_url == "http://localhost:11434/v1"
    assert settings.llm_api_key == "sk-abcdefghijkl"
    assert settings.origin["llm.api_key"] == "env:OPENAI_API_KEY"
    environ["VANCE_LLM_BASE_URL"] = "http://127.0.0.1:9/v1"
    assert load_settings(environ=environ).llm_base_url == "http://127.0.0.1:9/v1"


def test_offline_by_default(vance_home: Path) -> None:
    settings = load_settings(environ={"VANCE_HOME": str(vance_home)})
    assert not settings.llm_configured
    assert settings.tenant == "default" and settings.project == "default"
    assert settings.session == "default"


def test_home_flag_beats_env(tmp_path: Path) -> None:
    settings = load_settings(environ={"VANCE_HOME": str(tmp_path / "a")}, home=tmp_path / "b")
    assert settings.paths.config_dir == (tmp_path / "b").resolve()
    assert settings.paths.data_dir == (tmp_path / "b" / "data").resolve()


def test_bad_value_names_key_and_source(vance_home: Path) -> None:
    _write_config(vance_home, "llm:\n  timeout: soon\n")
    with pytest.raises(ConfigError, match=r"llm.timeout .*config.yaml.*number"):
        load_settings(environ={"VANCE_HOME": str(vance_home)})


def test_unknown_file_key_is_a_warning(vance_home: Path) -> None:
    _write_config(vance_home, "llm:\n  modle: x\n")
    settings = load_settings(environ={"VANCE_HOME": str(vance_home)})
    assert settings.warnings == (f"{vance_home / 'config.yaml'}: unknown key 'llm.modle' ignored",)


@pytest.mark.parametrize(
    ("environ", "lang"),
    [
        ({"LANG": "de_DE.UTF-8"}, "de"),
        ({"LANG": "en_US.UTF-8", "LC_ALL": "fr_FR.UTF-8"}, "fr"),
        ({"LANG": "C.UTF-8"}, None),
        ({"LANG": "POSIX"}, None),
        ({}, None),
        ({"LC_MESSAGES": "de_AT@euro"}, "de"),
    ],
)
def test_locale_language(environ: dict[str, str], lang: str | None) -> None:
    assert locale_language(environ) == lang


def test_lang_falls_back_to_locale(vance_home: Path) -> None:
    environ = {"VANCE_HOME": str(vance_home), "LANG": "de_DE.UTF-8"}
    assert load_settings(environ=environ).lang == "de"
    environ["VANCE_LANG"] = "en"
    assert load_settings(environ=environ).lang == "en"


def test_set_writes_nested_keys_and_keeps_others(vance_home: Path) -> None:
    settings = load_settings(environ={"VANCE_HOME": str(vance_home)})
    set_config_value(settings.paths, "llm.model", "qwen2.5")
    set_config_value(settings.paths, "tenant", "acme")
    set_config_value(settings.paths, "llm.timeout", "12")
    again = load_settings(environ={"VANCE_HOME": str(vance_home)})
    assert (again.llm_model, again.tenant, again.llm_timeout) == ("qwen2.5", "acme", 12.0)
    set_config_value(settings.paths, "llm.model", "")
    assert load_settings(environ={"VANCE_HOME": str(vance_home)}).llm_model is None


def test_set_rejects_unknown_keys_and_bad_values(vance_home: Path) -> None:
    paths = load_settings(environ={"VANCE_HOME": str(vance_home)}).paths
    with pytest.raises(ConfigError, match="unknown config key"):
        set_config_value(paths, "llm.modle", "x")
    with pytest.raises(ConfigError, match="json_mode"):
        set_config_value(paths, "llm.json_mode", "yaml")
    assert not paths.config_file.exists()


def test_secret_masking() -> None:
    assert mask_secret("sk-1234567890abcd") == "****abcd"
    assert mask_secret("short") == "****"


@pytest.mark.parametrize(
    ("key", "value", "ok"),
    [
        ("tenant", "acme", True),
        ("tenant", "acme.corp_2-x", True),
        ("tenant", "../../../../etc", False),
        ("tenant", "..", False),
        ("tenant", ".", False),
        ("tenant", "a/b", False),
        ("tenant", "a\\b", False),
        ("tenant", "/etc", False),
        ("tenant", "sp ace", False),
        ("tenant", "ümlaut", False),
        ("tenant", "x" * 129, False),
        ("project", "_tenant", True),
        ("project", "", True),  # no project
        ("project", "../x", False),
        ("user", "anna", True),
        ("user", "anna/../../x", False),
        ("session", "s-1", True),
        ("session", "..", False),
    ],
)
def test_ids_are_single_path_segments(vance_home: Path, key: str, value: str, ok: bool) -> None:
    environ = {"VANCE_HOME": str(vance_home)}
    if ok:
        assert getattr(load_settings(flags={key: value}, environ=environ), key) == value
        return
    with pytest.raises(ConfigError, match=rf"^{key} \(--{key}\): {key} id"):
        load_settings(flags={key: value}, environ=environ)


@pytest.mark.parametrize("source", ["flag", "env", "file", "set"])
def test_every_source_checks_ids(vance_home: Path, source: str) -> None:
    environ = {"VANCE_HOME": str(vance_home)}
    bad = "../../../../tmp/evil"
    if source == "set":
        with pytest.raises(ConfigError, match="project id"):
            set_config_value(load_settings(environ=environ).paths, "project", bad)
        assert not (vance_home / "config.yaml").exists()
        return
    flags = {"project": bad} if source == "flag" else {}
    if source == "env":
        environ["VANCE_PROJECT"] = bad
    if source == "file":
        _write_config(vance_home, f"project: '{bad}'\n")
    where = {"flag": "--project", "env": "env:VANCE_PROJECT", "file": "config.yaml"}[source]
    with pytest.raises(ConfigError, match=rf"project \(.*{where}\): project id"):
        load_settings(flags=flags, environ=environ)


def test_default_user_becomes_a_valid_id(monkeypatch: pytest.MonkeyPatch,
                                         vance_home: Path) -> None:
    import getpass

    monkeypatch.setattr(getpass, "getuser", lambda: "CORP\\Anna Maier")
    assert load_settings(environ={"VANCE_HOME": str(vance_home)}).user == "CORP_Anna_Maier"
    monkeypatch.setattr(getpass, "getuser", lambda: "..")
    assert load_settings(environ={"VANCE_HOME": str(vance_home)}).user == "user"


BOUNDS = [
    # (key, value, accepted)
    ("llm.timeout", "30", True),
    ("llm.timeout", "0.5", True),
    ("llm.timeout", "3600", True),
    ("llm.timeout", "3601", False),
    ("llm.timeout", "inf", False),
    ("llm.timeout", "nan", False),
    ("llm.timeout", "0", False),
    ("llm.timeout", "-1", False),
    ("llm.timeout", "soon", False),
    ("fallback.timeout", "604800", True),
    ("fallback.timeout", "1e9", False),
    ("fallback.timeout", "inf", False),
    ("process.heartbeat_interval", "5", True),
    ("process.heartbeat_interval", "1e5", False),
    ("process.stale_timeout", "30", True),
    ("process.stale_timeout", "inf", False),
    ("llm.max_retries", "0", True),
    ("llm.max_retries", "10", True),
    ("llm.max_retries", "11", False),
    ("llm.max_retries", "1000000", False),
    ("llm.max_retries", "-1", False),
    ("llm.max_retries", "2.5", False),
    ("fallback.max_repairs", "10", True),
    ("fallback.max_repairs", "1000", False),
    ("llm.base_url", "http://localhost:11434/v1", True),
    ("llm.base_url", "https://api.openai.com/v1", True),
    ("llm.base_url", "HTTP://127.0.0.1:8080/v1", True),
    ("llm.base_url", "ftp://x", False),
    ("llm.base_url", "localhost:11434/v1", False),
    ("llm.base_url", "http://", False),
    ("llm.base_url", "http:///v1", False),
    ("llm.base_url", "http://host:99999/v1", False),
    ("llm.base_url", "file:///etc/passwd", False),
]


@pytest.mark.parametrize(("key", "value", "ok"), BOUNDS)
@pytest.mark.parametrize("source", ["env", "file", "set"])
def test_settings_are_bounded_the_same_from_every_source(
        vance_home: Path, key: str, value: str, ok: bool, source: str) -> None:
    from vance_cli.base.config import spec_for

    environ = {"VANCE_HOME": str(vance_home)}
    paths = load_settings(environ=environ).paths
    if source == "set":
        if ok:
            set_config_value(paths, key, value)
        else:
            with pytest.raises(ConfigError, match=rf"^{key}: "):
                set_config_value(paths, key, value)
            assert not paths.config_file.exists()
        return
    if source == "env":
        environ[spec_for(key).env[0]] = value
        where = f"env:{spec_for(key).env[0]}"
    else:
        parent, _, leaf = key.partition(".")
        _write_config(vance_home, f"{parent}:\n  {leaf}: '{value}'\n")
        where = "config.yaml"
    if ok:
        load_settings(environ=environ)
    else:
        with pytest.raises(ConfigError, match=rf"^{key} \(.*{where}\): "):
            load_settings(environ=environ)


def test_url_credentials_are_not_echoed(vance_home: Path) -> None:
    paths = load_settings(environ={"VANCE_HOME": str(vance_home)}).paths
    with pytest.raises(ConfigError) as info:
        set_config_value(paths, "llm.base_url", "ftp://me:sk-secret-1234@host/v1")
    assert "sk-secret" not in str(info.value)


def test_catalog_file_is_made_absolute(vance_home: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    monkeypatch.chdir(work)
    paths = load_settings(environ={"VANCE_HOME": str(vance_home)}).paths
    # config set: from the current folder, stored absolute (normalised)
    assert set_config_value(paths, "catalog.file", "sub/../cat.yaml") == str(work / "cat.yaml")
    assert "file: " + str(work / "cat.yaml") in paths.config_file.read_text()
    # env and flags: from the current folder
    environ = {"VANCE_HOME": str(vance_home), "VANCE_ENGINE_CATALOG": "env.yaml"}
    assert load_settings(environ=environ).catalog_file == str(work / "env.yaml")
    environ["VANCE_ENGINE_CATALOG"] = "~/cat.yaml"
    assert load_settings(environ=environ).catalog_file == str(Path.home() / "cat.yaml")
    # a relative path written into the file by hand: from the config file's folder
    _write_config(vance_home, "catalog:\n  file: ops/engines.yaml\n")
    settings = load_settings(environ={"VANCE_HOME": str(vance_home)})
    assert settings.catalog_file == str(vance_home.resolve() / "ops" / "engines.yaml")


@pytest.mark.parametrize("kind", ["folder", "link loop"])
def test_a_config_file_that_cannot_be_read_is_an_error_not_a_missing_file(
        vance_home: Path, kind: str) -> None:
    from vance_cli.base.errors import DocumentError

    vance_home.mkdir(parents=True, exist_ok=True)
    path = vance_home / "config.yaml"
    if kind == "folder":
        path.mkdir()
    else:
        path.symlink_to(path)
    with pytest.raises(DocumentError) as caught:
        load_settings(environ={"VANCE_HOME": str(vance_home)})
    assert str(path) in str(caught.value)
