"""The file tools: the project fence on resolved paths, the deny floor, the caps."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vance_cli.tools.files import LIST_MAX, READ_MAX_BYTES, SEARCH_MAX_MATCHES
from vance_cli.tools.registry import builtin
from vance_cli.tools.tool import ToolContext, ToolResult


def call(name: str, context: ToolContext, **args: object) -> ToolResult:
    return builtin(name).run(args, context)


def test_read_file_returns_the_text_of_a_project_file(context: ToolContext) -> None:
    (context.project / "src").mkdir()
    (context.project / "src/app.py").write_text("def login(user):\n    return check(user)\n")
    result = call("read_file", context, path="src/app.py")
    assert result.ok
    assert result.text == "def login(user):\n    return check(user)\n"
    assert result.details["path"] == "src/app.py"


@pytest.mark.parametrize("raw", ["../../etc/passwd", "/etc/passwd", "../outside.txt"])
def test_a_path_outside_the_project_is_refused_with_the_reason(
        context: ToolContext, raw: str) -> None:
    (context.project.parent / "outside.txt").write_text("secret")
    result = call("read_file", context, path=raw)
    assert not result.ok
    assert "outside the project folder" in result.text
    assert "secret" not in result.text


def test_keys_under_home_are_on_the_deny_floor(context: ToolContext) -> None:
    (context.home / ".ssh").mkdir()
    (context.home / ".ssh/id_rsa").write_text("PRIVATE KEY")
    result = call("read_file", context, path=str(context.home / ".ssh/id_rsa"))
    assert not result.ok and "deny floor" in result.text and "~/.ssh" in result.text
    assert "PRIVATE KEY" not in result.text


def test_tilde_paths_are_expanded_before_the_floor_check(
        context: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(context.home))
    result = call("read_file", context, path="~/.ssh/id_rsa")
    assert not result.ok and "deny floor" in result.text


def test_the_floor_holds_even_when_the_project_is_the_home_folder(tmp_path: Path) -> None:
    home = tmp_path.resolve()
    (home / ".ssh").mkdir()
    (home / ".ssh/id_rsa").write_text("PRIVATE KEY")
    (home / ".aws").mkdir()
    (home / ".aws/credentials").write_text("AKIA")
    context = ToolContext(project=home, home=home, state_dir=home / "state")
    for path in (".ssh/id_rsa", ".aws/credentials", "./.ssh/../.ssh/id_rsa"):
        result = call("read_file", context, path=path)
        assert not result.ok and "deny floor" in result.text, path
    listing = call("list_files", context, path=".", recursive=True).text
    assert ".ssh" not in listing and ".aws" not in listing


def test_env_files_and_the_vance_folders_are_on_the_floor(context: ToolContext) -> None:
    (context.project / ".env").write_text("API_KEY=x")
    (context.project / ".env.local").write_text("API_KEY=y")
    for raw in (".env", ".env.local", str(context.state_dir / "vance.db"),
                str(context.config_dir / "config.yaml")):
        result = call("read_file", context, path=raw)
        assert not result.ok and "deny floor" in result.text, raw


def test_a_symlink_out_of_the_project_is_refused(context: ToolContext) -> None:
    secret = context.project.parent / "secret.txt"
    secret.write_text("TOP SECRET")
    (context.project / "link.txt").symlink_to(secret)
    (context.project / "dirlink").symlink_to(context.project.parent)
    for raw in ("link.txt", "dirlink/secret.txt"):
        result = call("read_file", context, path=raw)
        assert not result.ok and "symbolic link" in result.text, raw
        assert "TOP SECRET" not in result.text


def test_a_symlink_onto_the_floor_is_refused(context: ToolContext) -> None:
    (context.home / ".ssh").mkdir()
    (context.home / ".ssh/id_rsa").write_text("PRIVATE KEY")
    (context.project / "key").symlink_to(context.home / ".ssh/id_rsa")
    result = call("read_file", context, path="key")
    assert not result.ok and "deny floor" in result.text


def test_a_symlink_inside_the_project_is_followed(context: ToolContext) -> None:
    (context.project / "real.txt").write_text("hello")
    (context.project / "alias.txt").symlink_to(context.project / "real.txt")
    assert call("read_file", context, path="alias.txt").text == "hello"


def test_a_long_file_is_cut_with_a_marker_that_says_how_to_go_on(context: ToolContext) -> None:
    line = "x" * 99 + "\n"
    (context.project / "big.txt").write_text(line * (2 * READ_MAX_BYTES // len(line)))
    first = call("read_file", context, path="big.txt")
    assert first.ok and first.details["truncated"]
    assert len(first.text.encode()) < READ_MAX_BYTES + 200
    next_line = first.details["lines"][1] + 1
    assert f"start_line={next_line}" in first.text
    second = call("read_file", context, path="big.txt", start_line=next_line)
    assert second.ok and second.text.startswith(line)


def test_binary_files_and_folders_are_refused_with_a_reason(context: ToolContext) -> None:
    (context.project / "blob.bin").write_bytes(b"\x00\x01\x02")
    (context.project / "sub").mkdir()
    assert "binary" in call("read_file", context, path="blob.bin").text
    assert "list_files" in call("read_file", context, path="sub").text
    assert "does not exist" in call("read_file", context, path="nope.txt").text


def test_bad_arguments_come_back_as_a_failed_result(context: ToolContext) -> None:
    result = call("read_file", context, file="x")
    assert not result.ok and "bad arguments" in result.text and "path" in result.text


def test_list_files_lists_and_caps(context: ToolContext) -> None:
    (context.project / "src").mkdir()
    (context.project / "src/a.py").write_text("")
    (context.project / "README.md").write_text("")
    (context.project / ".git").mkdir()
    (context.project / ".git/config").write_text("")
    flat = call("list_files", context).text.splitlines()
    assert flat == [".git/", "README.md", "src/"]
    deep = call("list_files", context, recursive=True, pattern="*.py").text.splitlines()
    assert deep == ["src/a.py"]
    for i in range(LIST_MAX + 5):
        (context.project / f"f{i:04}.txt").write_text("")
    many = call("list_files", context)
    assert many.details["truncated"] and "cut at" in many.text


def test_search_files_finds_lines_and_caps_them(context: ToolContext) -> None:
    (context.project / "src").mkdir()
    (context.project / "src/app.py").write_text("import os\ndef login():\n    pass\n")
    (context.project / ".env").write_text("def login_secret\n")
    result = call("search_files", context, pattern=r"def \w+")
    assert result.text == "src/app.py:2: def login():"
    (context.project / "many.txt").write_text("hit\n" * (SEARCH_MAX_MATCHES + 10))
    many = call("search_files", context, pattern="hit", glob="*.txt")
    assert many.details["truncated"] and many.details["matches"] == SEARCH_MAX_MATCHES
    bad = call("search_files", context, pattern="(")
    assert not bad.ok and "regular expression" in bad.text


def test_search_files_does_not_follow_links_out(context: ToolContext) -> None:
    (context.project.parent / "outside.txt").write_text("needle\n")
    (context.project / "out.txt").symlink_to(context.project.parent / "outside.txt")
    os.symlink(context.project.parent, context.project / "up")
    result = call("search_files", context, pattern="needle")
    assert result.text == "no line matches 'needle'"
