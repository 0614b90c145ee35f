"""`winkref count`: tiddlies, ranks and notation from a board, and bad input.

The photo-to-board part is the frame pipeline's (tested with vision); here
the count is checked on boards with known answers, and the command's errors.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rules.board import Board, Colour, Doubt, Wink, WinkSize, WinkStatus, starting_board
from rules.rulings import apply_rulings
from service.cli import app
from service.commands.count import (
    BadFormatError,
    PairDoubt,
    _alternatives,
    _closeup_rulings,
    _unruled,
    _with_count_relevance,
    closeup_ruling,
    colour_counts,
    count_board,
    count_range,
    pair_doubts,
    pair_moves_count,
    parse_format,
    parse_rulings,
    report_json,
    report_text,
    summary_lines,
)

runner = CliRunner()


def _board() -> Board:
    """Blue: 1 potted + 2 free = 5; green: 1 free = 1 (one squopped by red);
    red: 1 potted = 3 + the squopper free = 4; yellow: 2 unplayed = 0."""
    w = [
        Wink(id="blue-L1", colour=Colour.BLUE, size=WinkSize.LARGE, status=WinkStatus.POTTED),
        Wink(id="blue-S1", colour=Colour.BLUE, size=WinkSize.SMALL, status=WinkStatus.FREE),
        Wink(id="blue-S2", colour=Colour.BLUE, size=WinkSize.SMALL, status=WinkStatus.FREE),
        Wink(id="green-S1", colour=Colour.GREEN, size=WinkSize.SMALL, status=WinkStatus.FREE),
        Wink(
            id="green-S2",
            colour=Colour.GREEN,
            size=WinkSize.SMALL,
            status=WinkStatus.SQUOPPED,
            uncertain=True,
        ),
        Wink(id="red-L1", colour=Colour.RED, size=WinkSize.LARGE, status=WinkStatus.POTTED),
        Wink(
            id="red-S1",
            colour=Colour.RED,
            size=WinkSize.SMALL,
            status=WinkStatus.FREE,
            squops=("green-S2",),
        ),
        Wink(id="yellow-S1", colour=Colour.YELLOW, size=WinkSize.SMALL, status=WinkStatus.UNPLAYED),
        Wink(id="yellow-S2", colour=Colour.YELLOW, size=WinkSize.SMALL, status=WinkStatus.UNPLAYED),
    ]
    return Board(winks=tuple(w))


def test_tiddlies_ranks_and_notation_of_a_known_board() -> None:
    tiddlies, score = count_board(_board())
    assert tiddlies == {Colour.BLUE: 5, Colour.GREEN: 1, Colour.RED: 4, Colour.YELLOW: 0}
    # Rule 19.2: 4, 2, 1, 0 points; blue+red 6, green+yellow 1.
    assert score.notation == "6–1"


def test_json_report_has_tiddlies_board_points_score_notation() -> None:
    board = _board()
    tiddlies, score = count_board(board)
    out = report_json(board, tiddlies, score)
    assert out["tiddlies"] == {"blue": 5, "green": 1, "red": 4, "yellow": 0}
    assert out["points"] == {"blue": 4, "yellow": 0, "green": 1, "red": 2}
    assert out["notation"] == "6–1"
    assert out["score"] == {"blue-red": 6, "green-yellow": 1}
    assert Board.from_json_dict(out["board"]) == board


def test_json_shared_points_are_numbers_as_in_replay() -> None:
    # Rule 19.2: four colours tied on 0 tiddlies share 4+2+1+0 points, 1¾ each;
    # the numbers are JSON numbers (as `replay --json` gives), the exact text is
    # in the notation.
    board = starting_board()
    tiddlies, score = count_board(board)
    out = report_json(board, tiddlies, score)
    assert out["points"] == {"blue": 1.75, "green": 1.75, "red": 1.75, "yellow": 1.75}
    assert out["score"] == {"blue-red": 3.5, "green-yellow": 3.5}
    assert out["notation"] == "3½–3½"


def test_unsure_winks_are_listed_not_hidden() -> None:
    board = _board()
    tiddlies, score = count_board(board)
    assert report_json(board, tiddlies, score)["uncertain"] == ["green-S2"]
    assert "green-S2" in report_text(board, tiddlies, score)
    assert colour_counts(board)["green"]["uncertain"] == 1


def _full_board(**statuses: tuple[WinkStatus, bool]) -> Board:
    """The starting position (rule 5.2) with the winks given as ``id=(status, uncertain)``."""
    board = starting_board()
    for key, (status, unsure) in statuses.items():
        wink = board.wink(key.replace("_", "-"))
        board = board.with_wink(wink.model_copy(update={"status": status, "uncertain": unsure}))
    return board


FREE, POTTED = (WinkStatus.FREE, False), (WinkStatus.POTTED, False)


def test_count_range_is_the_count_itself_when_nothing_is_unsure() -> None:
    board = _full_board(blue_S1=FREE, red_L1=POTTED)
    bounds = count_range(board)
    assert bounds.tiddlies[Colour.BLUE] == (1, 1)
    assert bounds.tiddlies[Colour.RED] == (3, 3)
    assert bounds.score_is_settled


def test_an_unsure_free_wink_could_be_squopped_and_that_can_change_the_score() -> None:
    # Blue 5 (potted + 2 free), red 3, green 3 (one of them unsure), yellow 0:
    # red and green share 2nd (1½ each), 5½–1½. Were green's unsure wink
    # squopped, green would be 3rd alone: 6–1 (rule 19.2).
    board = _full_board(
        blue_L1=POTTED,
        blue_S1=FREE,
        blue_S2=FREE,
        red_L1=POTTED,
        green_S1=FREE,
        green_S2=FREE,
        green_S3=(WinkStatus.FREE, True),
    )
    tiddlies, score = count_board(board)
    assert score.notation == "5½–1½"
    bounds = count_range(board)
    assert bounds.tiddlies[Colour.GREEN] == (2, 3)
    assert not bounds.score_is_settled
    assert count_board(board)[0][Colour.GREEN] == 3
    text = report_text(board, tiddlies, score, bounds=bounds)
    assert "green 2-3" in text
    assert "depends on them" in text


def test_an_unsure_squopped_wink_that_cannot_change_the_ranks_leaves_the_score_settled() -> None:
    # Blue 6 far ahead; green's unsure squopped wink could make green 2 (still 2nd).
    board = _full_board(
        blue_L1=POTTED,
        blue_L2=POTTED,
        green_S1=FREE,
        green_S2=(WinkStatus.SQUOPPED, True),
    )
    bounds = count_range(board)
    assert bounds.tiddlies[Colour.GREEN] == (1, 2)
    assert bounds.score_is_settled
    tiddlies, score = count_board(board)
    assert report_json(board, tiddlies, score, bounds=bounds)["tiddlies_range"]["green"] == [1, 2]


def test_a_wink_seen_nowhere_may_be_a_missed_free_one() -> None:
    # Yellow has five winks on the board: the sixth was seen neither on the
    # mat nor in the pot, so it may be a free wink the camera missed.
    board = _full_board(yellow_S1=FREE)
    board = board.with_winks(w for w in board.winks if w.id != "yellow-S4")
    assert count_range(board).tiddlies[Colour.YELLOW] == (1, 2)


def test_shared_ranks_give_half_points() -> None:
    # Two colours tie for first: they share 4 + 2 points (rule 19.2).
    board = Board(
        winks=(
            Wink(id="blue-S1", colour=Colour.BLUE, size=WinkSize.SMALL, status=WinkStatus.FREE),
            Wink(id="green-S1", colour=Colour.GREEN, size=WinkSize.SMALL, status=WinkStatus.FREE),
        )
    )
    _, score = count_board(board)
    assert score.notation == "3½–3½"


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("pairs", True),  # four players
        ("singles", True),  # two players
        ("quartet", False),  # not a format
    ],
)
def test_parse_format(name: str, ok: bool) -> None:
    if ok:
        assert parse_format(name).value == name
    else:
        with pytest.raises(BadFormatError, match="quartet"):
            parse_format(name)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["count", "/no/such/mat.jpg"], "does not exist"),  # missing file
        (["count", "{readme}"], "cannot read"),  # not an image
        (["count", "{readme}", "--ruleset", "nope"], "unknown ruleset 'nope'"),  # bad ruleset
        (["count", "{readme}", "--format", "quartet"], "quartet"),  # bad format
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path
) -> None:
    readme = tmp_path / "notes.txt"
    readme.write_text("not an image")
    result = runner.invoke(app, [a.format(readme=readme) for a in args])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def _felt_photo(second_mat: bool, table_bgr: tuple[int, int, int] = (40, 60, 90)):
    """A table with one (or two) light felt rectangles; corners of the first."""
    import numpy as np

    image = np.full((600, 1200, 3), table_bgr, np.uint8)
    image[100:400, 50:550] = (160, 170, 150)
    if second_mat:
        image[150:450, 650:1150] = (160, 170, 150)
    corners = [(50, 100), (550, 100), (550, 400), (50, 400)]
    return image, corners


@pytest.mark.parametrize(
    ("second_mat", "table_bgr", "refused"),
    [
        (False, (40, 60, 90), False),  # one mat on a dark table: counted
        (True, (40, 60, 90), True),  # a second mat beside it: refused, not half counted
        (False, (152, 166, 148), False),  # a table nearly the felt's colour: one mat
        (True, (10, 10, 10), True),  # a second mat on a black table
    ],
)
def test_a_photo_with_two_mats_is_refused(
    second_mat: bool, table_bgr: tuple[int, int, int], refused: bool
) -> None:
    from service.commands.count import TwoMatsError, check_single_mat

    image, corners = _felt_photo(second_mat, table_bgr)
    if refused:
        with pytest.raises(TwoMatsError, match="more than one mat"):
            check_single_mat(image, corners)
    else:
        check_single_mat(image, corners)


def test_a_felt_coloured_table_in_two_strips_round_a_wide_mat_is_not_a_second_mat() -> None:
    # The mat spans the photo's width, so the table shows only above and
    # below it: two separate felt-coloured strips, each a filled rectangle.
    import numpy as np

    from service.commands.count import check_single_mat

    image = np.full((600, 1200, 3), (152, 166, 148), np.uint8)
    image[200:400, 20:1180] = (160, 170, 150)
    corners = [(20, 200), (1180, 200), (1180, 400), (20, 400)]
    check_single_mat(image, corners)


def test_the_annotated_summary_gives_each_colour_its_tiddlies_range_and_the_score() -> None:
    board = _full_board(
        blue_L1=POTTED, blue_S1=FREE, blue_S2=FREE, red_L1=POTTED,
        green_S1=FREE, green_S2=FREE, green_S3=(WinkStatus.FREE, True),
    )  # fmt: skip
    tiddlies, score = count_board(board)
    lines = summary_lines(tiddlies, score, count_range(board))
    assert lines[:4] == [
        "blue: 5 tiddlies",
        "green: 3 tiddlies (2-3 if unsure winks differ)",
        "red: 3 tiddlies",
        "yellow: 0 tiddlies",
    ]
    assert lines[4] == "score 5½–1½"
    assert lines[5] == "score depends on the ? winks"


def test_the_umpires_rulings_are_counted_and_their_review_requests_dropped() -> None:
    # The referee's own reading first, then the same photo with the umpire
    # ruling one of the pairs it asked about the other way round.
    import json

    from service.commands.count import run

    photo = Path(__file__).parents[2] / "sample_images" / "overhead_00104.jpg"
    before = json.loads(run(photo, json_output=True))
    board = Board.from_json_dict(before["board"])
    # A squop the referee called and asked the umpire to check.
    upper, lower = next(
        (w, low)
        for w in board.winks
        for low in w.squops
        if any(r.startswith(f"{w.id} squops {low}?") for r in before["reviews"])
    )

    after = json.loads(run(photo, json_output=True, squops=[f"{lower},{upper.id}"]))
    ruled = Board.from_json_dict(after["board"])
    assert after["rulings"] == [f"{lower} squops {upper.id}"]
    assert upper.id in ruled.wink(lower).squops
    assert ruled.wink(upper.id).status is WinkStatus.SQUOPPED
    assert not [r for r in after["reviews"] if upper.id in r and lower in r]
    tiddlies, _ = count_board(ruled)
    assert after["tiddlies"] == {c.value: n for c, n in tiddlies.items()}


def test_a_ruling_naming_no_wink_on_the_board_is_one_clear_line() -> None:
    photo = Path(__file__).parents[2] / "sample_images" / "overhead_00104.jpg"
    result = runner.invoke(app, ["count", str(photo), "--squop", "red-S1,red-S9"])
    assert result.exit_code == 2
    assert "no wink 'red-S9' on the board" in result.output
    assert "Traceback" not in result.output


def test_the_text_count_says_which_potted_winks_were_inferred_not_seen() -> None:
    # The desk reading the table must learn, as --json says, that a potted count is a guess.
    photo = Path(__file__).parents[2] / "sample_images" / "overhead_00101.jpg"
    as_json = json.loads(runner.invoke(app, ["count", str(photo), "--json"]).output)
    inferred = [n for n in as_json["notes"] if "potted wink(s) inferred" in n]
    assert inferred  # a black pot: the winks in it (4, ground truth) cannot be seen
    result = runner.invoke(app, ["count", str(photo)])
    assert result.exit_code == 0, result.output
    for note in as_json["notes"]:
        assert f"note: {note}" in result.output


def test_contradicting_rulings_are_refused_before_the_photo_is_read(tmp_path: Path) -> None:
    # A typo in one ruling must not let the other silently decide the count.
    photo = tmp_path / "never_read.jpg"
    photo.write_bytes(b"not a photo: the rulings are checked first")
    result = runner.invoke(
        app, ["count", str(photo), "--squop", "red-S1,blue-L2", "--no-squop", "blue-L2,red-S1"]
    )
    assert result.exit_code == 2
    assert "contradict each other" in result.output
    assert "'red-S1 squops blue-L2'" in result.output


def test_a_wink_read_potted_can_be_ruled_free_and_on_top_of_another_from_the_command_line() -> None:
    # The status ruling is applied first, wherever it stands on the line.
    photo = Path(__file__).parents[2] / "sample_images" / "overhead_00104.jpg"
    result = runner.invoke(
        app,
        [
            "count",
            str(photo),
            "--json",
            "--squop",
            "yellow-S4,red-S1",
            "--status",
            "yellow-S4=free",
        ],
    )
    assert result.exit_code == 0, result.output
    import json

    board = Board.from_json_dict(json.loads(result.output)["board"])
    assert board.wink("yellow-S4").status is WinkStatus.FREE
    assert "red-S1" in board.wink("yellow-S4").squops
    assert board.wink("red-S1").status is WinkStatus.SQUOPPED


def test_an_uncertain_calibration_from_the_photo_is_said_with_the_count() -> None:
    # A fit to faint mat edges may be mm out: the desk is told, in words.
    from dataclasses import replace

    from calibration import calibrate
    from service.commands.count import run

    photo = Path(__file__).parents[2] / "sample_images" / "overhead_00104.jpg"

    def calibrated_as_if_faint(image):  # type: ignore[no-untyped-def]
        return replace(calibrate(image), mapping_sigma_mm=3.4)

    text = run(photo, calibrate=calibrated_as_if_faint)
    assert "note: the calibration from this photo may be about 3.4 mm out" in text


def test_count_takes_a_calibration_file_instead_of_calibrating_from_the_photo(
    tmp_path: Path,
) -> None:
    # A desk whose pale mat calibrates poorly from the photo gives a calibration
    # made by hand; here the sample's ground-truth camera stands in for it.
    samples = Path(__file__).parents[2] / "sample_images"
    photo, truth = samples / "overhead_00104.jpg", samples / "overhead_00104.json"
    result = runner.invoke(app, ["count", str(photo), "--calibration", str(truth), "--json"])
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.output)["tiddlies"]) == {"blue", "green", "red", "yellow"}

    # The file is what is used: calibrating from the photo is not tried.
    def not_to_be_called(image):  # type: ignore[no-untyped-def]
        raise AssertionError("calibrated from the photo although a file was given")

    from service.commands.count import run

    text = run(photo, calibration_path=truth, calibrate=not_to_be_called)
    assert "tiddlies" in text.lower()
    # A calibration made for another photo size is refused in words naming the file.
    other = json.loads(truth.read_text())
    other["camera"]["width"], other["camera"]["height"] = 2560, 1440
    other_path = tmp_path / "for_a_bigger_photo.json"
    other_path.write_text(json.dumps(other))
    wrong = runner.invoke(app, ["count", str(photo), "--calibration", str(other_path)])
    assert wrong.exit_code == 2
    assert "for_a_bigger_photo.json" in wrong.output and "2560x1440" in wrong.output
    assert "Traceback" not in wrong.output
    missing = runner.invoke(app, ["count", str(photo), "--calibration", str(tmp_path / "no.json")])
    assert missing.exit_code == 2
    assert "does not exist" in missing.output
    assert "Traceback" not in missing.output


def _wink(
    wink_id: str, status: WinkStatus, *, unsure: bool = True, squops=(), xy_mm=(200.0, 100.0)
) -> Wink:
    """A wink, by default in the middle of the field (no baseline near: it cannot be unplayed)."""
    colour, size = wink_id.split("-")
    placed = status is not WinkStatus.POTTED
    return Wink(
        id=wink_id,
        colour=Colour(colour),
        size=WinkSize.LARGE if size.startswith("L") else WinkSize.SMALL,
        status=status,
        uncertain=unsure,
        squops=tuple(squops),
        x_mm=xy_mm[0] if placed else None,
        y_mm=xy_mm[1] if placed else None,
    )


def _pair_board(*winks: Wink) -> Board:
    """The winks given on a board whose other winks are all potted (no other doubt)."""
    given = {w.id for w in winks}
    potted = [
        _wink(f"{c.value}-{s}", WinkStatus.POTTED, unsure=False)
        for c in Colour
        for s in ("L1", "L2", "S1", "S2", "S3", "S4")
        if f"{c.value}-{s}" not in given
    ]
    return Board(winks=(*winks, *potted))


FREE_, SQUOPPED_ = WinkStatus.FREE, WinkStatus.SQUOPPED


@pytest.mark.parametrize(
    ("winks", "doubt", "green_span", "red_span"),
    [
        # one colour, surely overlapping, top unseen: one of the two stays squopped whichever
        # is on top, so the count cannot rise (it may fall: a wink not seen may lie on the other)
        (
            (_wink("green-L1", FREE_, squops=["green-S1"]), _wink("green-S1", SQUOPPED_)),
            PairDoubt(("green-L1", "green-S1"), overlap_sure=True),
            (-1, 0),
            (0, 0),
        ),
        # two colours, surely overlapping, top unseen: either colour may lose its wink
        (
            (_wink("green-L1", FREE_, squops=["red-S1"]), _wink("red-S1", SQUOPPED_)),
            PairDoubt(("green-L1", "red-S1"), overlap_sure=True),
            (-1, 0),
            (0, 1),
        ),
        # one colour, maybe apart: the lower may be free after all, or the other on top
        (
            (_wink("green-L1", FREE_, squops=["green-S1"]), _wink("green-S1", SQUOPPED_)),
            PairDoubt(("green-L1", "green-S1"), overlap_sure=False),
            (-1, 1),
            (0, 0),
        ),
        # one colour, maybe apart, top unseen, both read free
        (
            (_wink("green-L1", FREE_), _wink("green-S1", FREE_)),
            PairDoubt(("green-L1", "green-S1"), overlap_sure=False),
            (-2, 0),
            (0, 0),
        ),
    ],
)
def test_doubted_pairs_are_read_every_way_they_could_be(winks, doubt, green_span, red_span):
    board = _pair_board(*winks)
    tiddlies, _ = count_board(board)
    bounds = count_range(board, doubts=[doubt])
    for colour, (down, up) in ((Colour.GREEN, green_span), (Colour.RED, red_span)):
        assert bounds.tiddlies[colour] == (tiddlies[colour] + down, tiddlies[colour] + up)


def test_a_wink_squopped_surely_by_a_third_stays_squopped_whichever_way_its_pair_goes():
    # red-L1 surely lies on green-S1; green-S1 and green-S2 surely overlap, top unseen.
    # green-S1 on green-S2: both squopped; green-S2 on green-S1: green-S2 free.
    board = _pair_board(
        _wink("red-L1", FREE_, unsure=False, squops=["green-S1"]),
        _wink("green-S1", SQUOPPED_, squops=["green-S2"]),
        _wink("green-S2", SQUOPPED_),
    )
    doubt = PairDoubt(("green-S1", "green-S2"), overlap_sure=True)
    tiddlies, _ = count_board(board)
    assert count_range(board, doubts=[doubt]).tiddlies[Colour.GREEN] == (
        tiddlies[Colour.GREEN],
        tiddlies[Colour.GREEN] + 1,
    )


def test_without_its_pairs_the_range_treats_the_winks_one_by_one():
    # The same one-colour pile as above with no pair given: each wink may flip.
    board = _pair_board(_wink("green-L1", FREE_, squops=["green-S1"]), _wink("green-S1", SQUOPPED_))
    tiddlies, _ = count_board(board)
    assert count_range(board).tiddlies[Colour.GREEN] == (
        tiddlies[Colour.GREEN] - 1,
        tiddlies[Colour.GREEN] + 1,
    )


@pytest.mark.parametrize(
    ("xy_mm", "could_be_unplayed"),
    [
        ((200.0, 100.0), False),  # the middle of the field: no baseline near
        ((-850.0, 420.0), True),  # in a corner, behind its baseline
        ((800.0, -380.0), True),  # 29 mm inside another corner's baseline: a close call
        ((780.0, -300.0), False),  # 83 mm inside it: clearly played
        (None, True),  # place unknown: anywhere
    ],
)
def test_an_unsure_free_wink_may_be_unplayed_only_near_a_baseline(xy_mm, could_be_unplayed):
    wink = _wink("blue-S1", FREE_)
    if xy_mm is None:
        wink = wink.model_copy(update={"x_mm": None, "y_mm": None})
    else:
        wink = wink.model_copy(update={"x_mm": xy_mm[0], "y_mm": xy_mm[1]})
    board = _pair_board(wink)
    tiddlies, _ = count_board(board)
    low = count_range(board).tiddlies[Colour.BLUE][0]
    # Were it squopped it would count nothing too: only a lone free wink is shown here.
    assert low == tiddlies[Colour.BLUE] - 1
    assert (WinkStatus.UNPLAYED in _alternatives(wink)) is could_be_unplayed


def test_the_pairs_a_frame_could_not_call_are_taken_from_its_squop_calls():
    from types import SimpleNamespace

    from vision.squop import SquopCall

    def call(up, low, sep, sigma, confidence, uncertain):
        return SquopCall(up, low, sep, sigma, sep < 0, confidence, uncertain, "")

    calls = (
        call(0, 1, -3.0, 0.5, 0.1, True),  # overlap 6 sigma deep, top unseen
        call(2, 3, -0.4, 0.5, 0.9, True),  # within 3 sigma of touching, top seen
        call(0, 2, 5.0, 0.5, 0.0, False),  # clearly apart: no doubt
        call(1, 4, -0.2, 0.5, 0.9, True),  # a detection dropped by the rule 2.1.1 count
        call(2, 5, -0.3, 0.5, 0.9, True),  # with a wink off the mat: it squops nothing (13)
    )
    board = _pair_board(
        _wink("green-L1", FREE_),
        _wink("green-S1", SQUOPPED_),
        _wink("red-L1", FREE_),
        _wink("blue-S2", SQUOPPED_),
        _wink("yellow-S1", WinkStatus.OFF),
    )
    analysis = SimpleNamespace(
        board=board,
        assembly=SimpleNamespace(
            detection_ids=("green-L1", "green-S1", "red-L1", "blue-S2", "", "yellow-S1"),
            squops=SimpleNamespace(calls=calls),
        ),
    )
    assert pair_doubts(analysis) == (
        PairDoubt(("green-L1", "green-S1"), overlap_sure=True),
        PairDoubt(("red-L1", "blue-S2"), overlap_sure=False),
    )


def test_a_ruled_pair_and_a_pair_with_a_ruled_wink_are_no_longer_in_doubt():
    doubts = [
        PairDoubt(("green-L1", "green-S1"), True),
        PairDoubt(("red-L1", "blue-S2"), False),
        PairDoubt(("yellow-L1", "blue-L1"), False),
    ]
    rulings = parse_rulings(["green-S1,green-L1"], [], ["blue-L1=free"])
    assert _unruled(doubts, rulings) == [doubts[1]]


# --------------------------------------------------------------------------
# Close-ups of pairs in doubt, given to the count
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def blue_on_red(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A close-up of a small blue wink lying 1 mm onto a large red one."""
    import sys

    import cv2

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vision"))
    from test_review import BLUE, RED, render

    path = tmp_path_factory.mktemp("closeups") / "IMG_0101.png"
    cv2.imwrite(str(path), render([(0.0, 0.0, 0.0, 22.0, RED), (18.0, 0.0, 1.6, 16.0, BLUE)]))
    return path


def _doubting(*pairs: tuple[str, str]) -> tuple[Board, list[PairDoubt]]:
    winks = {i for pair in pairs for i in pair}
    board = _pair_board(*(_wink(i, FREE_) for i in sorted(winks)))
    return board, [PairDoubt(pair, overlap_sure=False) for pair in pairs]


@pytest.mark.parametrize(
    ("pairs", "ruling", "said"),
    [
        # the only pair in doubt of a large red and a small blue: the close-up rules on it
        ((("red-L1", "blue-S2"), ("green-L1", "yellow-S1")), "blue-S2 squops red-L1", "squops"),
        # no pair in doubt looks like it: not used
        ((("green-L1", "yellow-S1"),), None, "none of the pairs in doubt"),
        # two such pairs: which one it shows is for the desk to say
        ((("red-L1", "blue-S2"), ("red-L2", "blue-S3")), None, "could be any of"),
    ],
)
def test_a_closeup_rules_on_the_one_pair_in_doubt_that_looks_like_it(
    blue_on_red: Path, pairs, ruling, said
) -> None:
    board, doubts = _doubting(*pairs)
    result = closeup_ruling(blue_on_red, board, doubts)
    assert (result.ruling.describe() if result.ruling else None) == ruling
    assert said in result.text
    assert str(blue_on_red) in result.text


def test_the_count_takes_a_closeups_verdict_as_the_ruling(blue_on_red: Path) -> None:
    board, doubts = _doubting(("red-L1", "blue-S2"))
    ruled = _closeup_rulings([blue_on_red], board, doubts)
    (only,) = ruled
    assert only.ruling == parse_rulings(["blue-S2,red-L1"])[0]
    # The same photo twice agrees with itself: one ruling, the second said to match it.
    twice = _closeup_rulings([blue_on_red, blue_on_red], board, doubts)
    assert [r.ruling is not None for r in twice] == [True, False]


@pytest.mark.parametrize(
    "name",
    [
        "closeup.jpg",  # a text file named .jpg
        "typo.jpg",  # a mistyped path: went unnoticed when the count was given anyway
    ],
)
def test_an_unreadable_closeup_is_refused_before_the_count(tmp_path: Path, name: str) -> None:
    (tmp_path / "closeup.jpg").write_text("not a photo")
    bad = tmp_path / name
    mat = Path(__file__).resolve().parents[2] / "sample_images" / "overhead_00104.jpg"
    result = runner.invoke(app, ["count", str(mat), "--closeup", str(bad)])
    assert result.exit_code == 2, result.output
    assert "game score" not in result.output
    assert f"cannot read image {str(bad)!r}" in result.output


def test_a_closeup_that_cannot_be_reviewed_rules_nothing_and_the_count_is_given(
    tmp_path: Path,
) -> None:
    # A readable photo with no pair in it: one such close-up must not cost
    # the desk the whole count.
    sample = Path(__file__).resolve().parents[2] / "sample_images"
    result = runner.invoke(
        app,
        [
            "count",
            str(sample / "overhead_00104.jpg"),
            "--closeup",
            str(sample / "nomat_00101.jpg"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "game score" in result.output
    (line,) = [t for t in result.output.splitlines() if t.startswith("close-up ")]
    assert "nomat_00101.jpg: not used:" in line
    assert "--squop UPPER,LOWER or --no-squop A,B" in line


@pytest.mark.parametrize(
    ("status", "doubts", "span"),
    [
        (FREE_, (Doubt.HIDDEN,), (-1, 0)),  # a wink not seen may lie on it
        (FREE_, (Doubt.BASELINE,), (-1, 0)),  # may be unplayed: counts nothing
        (FREE_, (Doubt.POT,), (0, 2)),  # at the pot's rim: potted would count 3
        (
            WinkStatus.POTTED,
            (Doubt.INFERRED,),
            (-3, 0),
        ),  # counted potted, maybe squopped on the mat
        (FREE_, (Doubt.SIZE,), (0, 0)),  # only its size was in doubt
        (FREE_, (), (-1, 0)),  # uncertain without saying why: free may be squopped or unplayed
    ],
)
def test_an_unsure_winks_alternatives_follow_why_it_is_unsure(status, doubts, span):
    wink = _wink("blue-S1", status).model_copy(update={"doubts": doubts})
    board = _pair_board(wink)
    tiddlies, _ = count_board(board)
    low, high = count_range(board).tiddlies[Colour.BLUE]
    assert (low - tiddlies[Colour.BLUE], high - tiddlies[Colour.BLUE]) == span


def test_a_one_colour_pile_whose_only_doubt_is_its_top_counts_exactly():
    # Vision says why both are unsure: only the squop call, and they surely overlap.
    board = _pair_board(
        _wink("green-L1", FREE_, squops=["green-S1"]).model_copy(update={"doubts": (Doubt.SQUOP,)}),
        _wink("green-S1", SQUOPPED_).model_copy(update={"doubts": (Doubt.SQUOP,)}),
    )
    doubt = PairDoubt(("green-L1", "green-S1"), overlap_sure=True)
    tiddlies, _ = count_board(board)
    assert count_range(board, doubts=[doubt]).tiddlies[Colour.GREEN] == (
        tiddlies[Colour.GREEN],
        tiddlies[Colour.GREEN],
    )


@pytest.mark.parametrize(
    ("winks", "doubt", "moves"),
    [
        # one colour, surely overlapping, nothing else on either: one stays squopped
        (
            (_wink("green-L1", FREE_, squops=["green-S1"]), _wink("green-S1", SQUOPPED_)),
            PairDoubt(("green-L1", "green-S1"), overlap_sure=True),
            False,
        ),
        # the same, but maybe apart: both could be free
        (
            (_wink("green-L1", FREE_, squops=["green-S1"]), _wink("green-S1", SQUOPPED_)),
            PairDoubt(("green-L1", "green-S1"), overlap_sure=False),
            True,
        ),
        # two colours: which is on top decides which colour loses a tiddly
        (
            (_wink("green-L1", FREE_, squops=["red-S1"]), _wink("red-S1", SQUOPPED_)),
            PairDoubt(("green-L1", "red-S1"), overlap_sure=True),
            True,
        ),
        # one colour, but a third wink surely on one of them: on top of it, both are squopped
        (
            (
                _wink("red-L1", FREE_, unsure=False, squops=["green-S1"]),
                _wink("green-S1", SQUOPPED_, squops=["green-S2"]),
                _wink("green-S2", SQUOPPED_),
            ),
            PairDoubt(("green-S1", "green-S2"), overlap_sure=True),
            True,
        ),
    ],
)
def test_a_review_is_said_not_to_matter_when_no_ruling_changes_the_count(winks, doubt, moves):
    assert pair_moves_count(_pair_board(*winks), doubt) is moves


def test_a_wink_ruled_on_for_one_pair_keeps_its_other_pair_in_doubt():
    # red-L1 is in doubt with blue-L1 and with green-S1; the umpire rules only the second.
    board = _pair_board(
        _wink("blue-L1", FREE_, squops=["red-L1"]),
        _wink("red-L1", SQUOPPED_),
        _wink("green-S1", FREE_),
    )
    doubts = [PairDoubt(("blue-L1", "red-L1"), False), PairDoubt(("red-L1", "green-S1"), False)]
    rulings = parse_rulings([], ["red-L1,green-S1"])
    ruled = apply_rulings(board, rulings)
    tiddlies, _ = count_board(ruled)
    low, high = count_range(ruled, doubts=_unruled(doubts, rulings)).tiddlies[Colour.RED]
    assert (low, high) == (tiddlies[Colour.RED], tiddlies[Colour.RED] + 1)  # blue may not squop it


def test_a_wink_squopped_only_by_one_that_may_be_off_may_be_free():
    # Rule 13: an off wink squops nothing; blue-L1 lies at the mat's edge.
    board = _pair_board(
        _wink("blue-L1", FREE_, squops=["red-L1"]).model_copy(update={"doubts": (Doubt.EDGE,)}),
        _wink("red-L1", SQUOPPED_, unsure=False),
    )
    tiddlies, _ = count_board(board)
    assert count_range(board).tiddlies[Colour.RED] == (
        tiddlies[Colour.RED],
        tiddlies[Colour.RED] + 1,
    )


def test_a_pair_is_said_not_to_matter_only_when_its_winks_are_in_no_other_doubt():
    def squop_doubt(w: Wink) -> Wink:
        return w.model_copy(update={"doubts": (Doubt.SQUOP,)})

    board = _pair_board(
        squop_doubt(_wink("green-L1", FREE_, squops=["green-S1"])),
        squop_doubt(_wink("green-S1", SQUOPPED_)),
        squop_doubt(_wink("red-L1", FREE_)),
    )
    sure = PairDoubt(("green-L1", "green-S1"), overlap_sure=True)
    reviews = ["green-L1 squops green-S1? ...; review close up"]
    (alone,) = _with_count_relevance(reviews, board, [sure], "etwa-2012")
    assert alone.endswith("whichever is on top)")
    # red-L1 may also lie on green-L1: then which green is on top decides green's count.
    also = PairDoubt(("red-L1", "green-L1"), overlap_sure=False)
    (shared,) = _with_count_relevance(reviews, board, [sure, also], "etwa-2012")
    assert shared == reviews[0]
