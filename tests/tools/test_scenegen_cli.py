"""The generator's command line writes image and ground truth pairs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.groundtruth import load_scene
from tools.scenegen import UnknownProfileError, generate_scene
from tools.scenegen.__main__ import main


def test_cli_writes_one_pair_per_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["--profile", "nomat", "--seed", "900", "--count", "1", "--out", str(tmp_path)]) == 0
    )
    assert (tmp_path / "nomat_00900.jpg").stat().st_size > 10_000
    scene = load_scene(tmp_path / "nomat_00900.json")
    assert scene.scene_id == "nomat_00900"
    assert "nomat_00900.jpg" in capsys.readouterr().out


def test_unknown_profile_is_refused_with_the_choices() -> None:
    with pytest.raises(UnknownProfileError, match="'sideways'.*overhead"):
        generate_scene("sideways", 1)
