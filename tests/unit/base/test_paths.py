from __future__ import annotations

from pathlib import Path

import pytest

from vance_cli.base.errors import InvalidId
from vance_cli.base.paths import Paths


@pytest.mark.parametrize(
    ("tenant", "project"),
    [("../../etc", "p"), ("t", "../../../tmp/evil"), ("t", ".."), ("/abs", "p"), ("t", "a/b"),
     ("", "p"), ("t", "")],
)
def test_project_dir_refuses_ids_that_are_not_one_segment(tmp_path: Path, tenant: str,
                                                         project: str) -> None:
    # Defence in depth: settings check ids when read, Paths checks again.
    paths = Paths.resolve(tmp_path)
    with pytest.raises(InvalidId):
        paths.project_dir(tenant, project)


def test_project_dir_of_valid_ids_stays_below_data(tmp_path: Path) -> None:
    paths = Paths.resolve(tmp_path)
    folder = paths.project_dir("acme", "_user_anna.b")
    assert folder == paths.data_dir / "tenants" / "acme" / "projects" / "_user_anna.b"
    with pytest.raises(InvalidId):
        paths.tenant_dir("..")
