"""`vera.render.atomic_text`: a file is replaced whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vera import ConfigError
from vera.render import atomic_text


def test_a_failure_mid_write_leaves_the_previous_file(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text("previous")
    with pytest.raises(RuntimeError), atomic_text(path) as out:
        out.write("half of the new report")
        raise RuntimeError("the renderer failed")
    assert path.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


def test_a_refused_write_is_a_config_error_that_says_the_old_file_is_kept(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.json"
    path.write_text("previous")
    refused = r"cannot write the report to .*r\.json: .*left as it"
    with pytest.raises(ConfigError, match=refused), atomic_text(path, what="the report") as out:
        out.write("x")
        raise OSError(28, "No space left on device")
    assert path.read_text() == "previous"


def test_the_new_file_has_the_mode_a_plain_write_gives(tmp_path: Path) -> None:
    with atomic_text(tmp_path / "sub" / "new.txt") as out:
        out.write("whole")
    plain = tmp_path / "plain.txt"
    plain.write_text("whole")
    made = tmp_path / "sub" / "new.txt"
    assert made.read_text() == "whole"
    assert os.stat(made).st_mode == os.stat(plain).st_mode
