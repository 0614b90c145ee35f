"""The generator's command line writes image and ground truth pairs."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from tools.groundtruth import load_scene
from tools.scenegen import UnknownProfileError, generate_scene
from tools.scenegen.__main__ import main
from tools.scenegen.render import FELT_COLOURS_BGR, TABLES_BY_NAME


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


def test_chosen_table_and_felt_change_the_picture_but_not_the_ground_truth() -> None:
    drawn = generate_scene("overhead", 104, image_scale=0.2)
    chosen = generate_scene("overhead", 104, image_scale=0.2, felt="beige", table="beige-wood")
    assert chosen.ground_truth == drawn.ground_truth
    assert not np.array_equal(chosen.image_bgr, drawn.image_bgr)


def test_beige_wood_table_is_close_to_beige_felt_in_colour() -> None:
    # The hard case it exists for: the felt/table step is a few Lab units.
    felt = np.asarray(FELT_COLOURS_BGR["beige"], np.float32)
    table = np.asarray(TABLES_BY_NAME["beige-wood"][0], np.float32)
    felt_lab, table_lab = (
        cv2.cvtColor(c.reshape(1, 1, 3), cv2.COLOR_BGR2Lab).reshape(3) for c in (felt, table)
    )
    assert 1.0 < float(np.linalg.norm(felt_lab - table_lab)) < 6.0
    assert TABLES_BY_NAME["beige-wood"][1]  # wooden: it has grain


def test_cli_chooses_the_table_by_name(tmp_path: Path) -> None:
    argv = ["--profile", "nomat", "--seed", "900", "--scale", "0.2", "--out", str(tmp_path)]
    assert main([*argv, "--table", "beige-wood"]) == 0
    assert (tmp_path / "nomat_00900.jpg").exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"table": "oak-ish"}, "unknown table 'oak-ish'"),  # not a key of TABLES_BY_NAME
        ({"felt": "purple"}, "unknown felt 'purple'"),  # not a key of FELT_COLOURS_BGR
    ],
)
def test_unknown_table_or_felt_is_refused_with_the_choices(
    kwargs: dict[str, str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        generate_scene("overhead", 1, **kwargs)  # type: ignore[arg-type]
