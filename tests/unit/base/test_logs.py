from __future__ import annotations

import pytest

from vance_cli.base import logs


def test_warn_runs_the_setups_first_then_logs(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(logs, "_setups", {})
    calls: list[str] = []
    logs.before_warnings("a", lambda: calls.append("old a"))
    logs.before_warnings("a", lambda: calls.append("a"))  # the same name: replaced
    logs.before_warnings("b", lambda: calls.append("b"))
    assert calls == []  # nothing runs until a warning is written
    logs.warn("logs_test.module", "a hook failed")
    logs.warn("logs_test.module", "again")
    assert calls == ["a", "b", "a", "b"]
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("logs_test.module", "WARNING", "a hook failed"),
        ("logs_test.module", "WARNING", "again")]
