"""The generator's command line writes image and ground truth pairs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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


def test_scaled_render_is_the_same_scene_through_a_scaled_camera() -> None:
    small = generate_scene("oblique", 101, image_scale=0.2)
    committed = load_scene(Path(__file__).resolve().parents[2] / "sample_images/oblique_00101.json")
    w, h = committed.camera.image_size_wh
    assert small.image_bgr.shape == (round(h * 0.2), round(w * 0.2), 3)
    truth = small.ground_truth
    for mine, full in zip(truth["winks"], committed.winks, strict=True):
        assert tuple(mine["centre_mm"]) == full.centre_mm
        assert mine["status"] == full.status.value
        if full.in_image:
            # Pixel centres at integers: u -> (u + 0.5) * s - 0.5.
            expected = [(c + 0.5) * 0.2 - 0.5 for c in full.pixel_centre]
            assert mine["pixel_centre"] == pytest.approx(expected, abs=0.01)


def test_image_scale_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="image_scale"):
        generate_scene("overhead", 1, image_scale=0.0)


def test_wear_changes_the_picture_but_not_the_ground_truth() -> None:
    plain = generate_scene("overhead", 104, image_scale=0.2)
    worn = generate_scene("overhead", 104, image_scale=0.2, wear=True)
    assert worn.ground_truth == plain.ground_truth
    assert not np.array_equal(worn.image_bgr, plain.image_bgr)
