"""Write the example games in ``examples/`` (run from the repo root).

    .venv/bin/python examples/make_examples.py

Each game is scripted: a few shots say exactly what happens (a pot, a squop,
a wink off), and between them every colour makes a plain shot (bringing a
wink in or moving a free one). The engine itself says whose turn it is, so
the records always agree with the rules; ``tests/rules/test_examples.py``
checks that each replays to its intended ending.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rules.board import Colour, WinkStatus  # noqa: E402
from rules.engine import Game  # noqa: E402
from rules.record import ShotRecord, parse_record  # noqa: E402
from tests.rules.boardkit import Scribe  # noqa: E402

Changes = dict[str, Any]
Script = Callable[[int, Colour, Scribe], Changes | None]


def plain_shot(colour: Colour, scribe: Scribe, n: int) -> Changes:
    """Bring a wink in (early on) or move a free, unpiled wink a little."""
    board = scribe.board
    unplayed = [w for w in board.of_colour(colour) if w.status is WinkStatus.UNPLAYED]
    loose = [
        w
        for w in board.of_colour(colour)
        if w.status is WinkStatus.FREE and not w.squops and w.mat_xy is not None
    ]
    if unplayed and (n % 3 != 2 or not loose):
        return {"play": [unplayed[0].id]}
    if not loose:
        return {"pass": True}  # every wink is in a pile: keep the squops
    w = loose[n % len(loose)]
    assert w.mat_xy is not None
    x, y = w.mat_xy
    step = 7.0 if n % 2 else -7.0
    return {"play": {w.id: (x + step, y + 5.0)}}


def dump_record(record: dict[str, Any]) -> str:
    """JSON with one shot header and one wink per line: readable and diffable."""
    lines = ["{"]
    for key, value in record.items():
        if key != "shots":
            lines.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    lines.append(' "shots": [')
    for i, shot in enumerate(record["shots"]):
        head = {k: v for k, v in shot.items() if k != "board"}
        text = "  " + json.dumps(head)[:-1]
        if "board" in shot:
            winks = ",\n".join("    " + json.dumps(w) for w in shot["board"]["winks"])
            text += ', "board": {"winks": [\n' + winks + "\n  ]}"
            if "tiddlies" in shot["board"]:
                text = text[:-1] + ', "tiddlies": ' + json.dumps(shot["board"]["tiddlies"]) + "}"
        text += "}" + ("," if i < len(record["shots"]) - 1 else "")
        lines.append(text)
    lines.append(" ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_game(
    name: str,
    scribe: Scribe,
    script: Script,
    *,
    max_shots: int = 400,
    dt: float = 25.0,
) -> dict[str, Any]:
    """Play ``script`` until the game ends; save ``examples/<name>.json``."""
    record = parse_record(scribe.record)
    game = Game.from_record(record)
    n = 0
    while game.result is None and n < max_shots:
        nxt = game.next_turn()
        if game.result is not None:
            break
        colour = nxt.colour if nxt.colour is not None else nxt.choices[0]
        changes = script(n, colour, scribe)
        if changes is None:
            changes = plain_shot(colour, scribe, n)
        event = changes.pop("event", None)
        play_colour = changes.pop("colour", colour.value)
        if changes.pop("pass", False):
            index = scribe.passes(play_colour, dt=dt)
        else:
            index = scribe.shot(play_colour, dt=dt, event=event, **changes)
        game.play(ShotRecord.model_validate(scribe.record["shots"][index]), index=index)
        # Off winks are put back (13.1) where the engine says, as a referee would.
        scribe.reset_to(game.board)
        n += 1
    if game.result is None:
        raise RuntimeError(f"{name}: the game did not end within {max_shots} shots")
    path = ROOT / "examples" / f"{name}.json"
    path.write_text(dump_record(scribe.record))
    print(f"{path.relative_to(ROOT)}: {n} shots, {game.result.notation} ({game.result.ended_by})")
    return scribe.record


def nth_shot(scribe: Scribe, colour: Colour) -> int:
    """How many shots ``colour`` has played so far in the record (the next is this one)."""
    return sum(1 for shot in scribe.record["shots"] if shot["colour"] == colour.value)


def time_limit_script(n: int, colour: Colour, scribe: Scribe) -> Changes | None:
    """A game of 10 minutes (rule 17.1) with pots, squops, a wink off and a pass.

    Keys are (colour, how many shots that colour has played before).
    """
    script: dict[tuple[str, int], Changes] = {
        ("red", 1): {"squop": {"red-L1": "green-L1"}},
        ("blue", 2): {"pot": ["blue-L1"]},  # rule 12: an extra shot follows
        ("yellow", 3): {"off": {"yellow-L1": (910.0, 120.0)}},  # rule 14: yellow forfeits
        ("green", 5): {"pass": True},
        ("blue", 6): {"pot": ["blue-S1", "red-L2"]},  # one extra shot: red's wink gives none
        ("yellow", 7): {"squop": {"yellow-S1": "blue-L2"}},
        ("red", 9): {"unsquop": "red-L1", "play": {"red-L1": (200.0, 250.0)}},
    }
    changes = script.get((colour.value, nth_shot(scribe, colour)))
    return None if changes is None else dict(changes)


def pot_out_script(n: int, colour: Colour, scribe: Scribe) -> Changes | None:
    """Blue pots out first, green second and red third: 6*-1* as in example F.2."""
    board = scribe.board
    c = colour.value
    left = [w.id for w in board.of_colour(colour) if w.status is not WinkStatus.POTTED]
    # Each colour pots two winks a turn from its second turn on; yellow never does.
    rounds = {"blue": 1, "green": 2, "red": 3}
    if c in rounds and n >= 4 * rounds[c] and left and nth_shot(scribe, colour) % 3 != 2:
        played = [
            w.id
            for w in board.of_colour(colour)
            if w.status in (WinkStatus.FREE, WinkStatus.UNPLAYED)
        ]
        if played:
            return {"pot": played[0]}
    return None


_SQUOP_UP_DONE: list[int] = []


def squop_up_script(n: int, colour: Colour, scribe: Scribe) -> Changes | None:
    """Blue and red squop up green and yellow; blue fails to free (22.4, 22.6).

    Rounds 1-6: every colour brings its winks in, red squopping the greens
    (red-S4 stays loose). Then blue squops the last green and every yellow,
    one wink covering the last two. With one loose wink that gives two
    squop-up turns; red uses the first, blue passes the second: a failure
    to free, and green takes a free shot with blue as the nominated colour.
    """
    board = scribe.board
    c = colour.value
    blues = ["blue-L1", "blue-L2", "blue-S1", "blue-S2", "blue-S3", "blue-S4"]
    greens = ["green-L1", "green-L2", "green-S1", "green-S2", "green-S3", "green-S4"]
    reds = ["red-L1", "red-L2", "red-S1", "red-S2", "red-S3", "red-S4"]
    yellows = ["yellow-L1", "yellow-L2", "yellow-S1", "yellow-S2", "yellow-S3", "yellow-S4"]
    rnd = n // 4
    if rnd < 6:
        i = rnd
        if c == "blue":
            return {"play": [blues[i]]}
        if c == "green":
            return {"play": [greens[i]]}
        if c == "red":
            return {"squop": {reds[i]: greens[i]}} if i < 5 else {"play": [reds[i]]}
        return {"play": [yellows[i]]}
    squopped = board.wink("green-S4").status is WinkStatus.SQUOPPED
    if _SQUOP_UP_DONE:
        return None  # after the free shot with a nominated colour: plain play to the end
    if c == "blue" and not squopped and board.wink("blue-L1").status is WinkStatus.FREE:
        return {"squop": {"blue-L1": "green-S4"}}
    if c == "blue":
        free_yellows = [y for y in yellows if board.wink(y).status is WinkStatus.FREE]
        free_blues = [
            b for b in blues if board.wink(b).status is WinkStatus.FREE and not board.wink(b).squops
        ]
        if len(free_yellows) == 2 and free_blues:
            return {"squop": {free_blues[0]: free_yellows}}
        if free_yellows and free_blues:
            return {"squop": {free_blues[0]: free_yellows[0]}}
        if squopped and not free_yellows and board.wink("green-S4").status is not WinkStatus.FREE:
            # The last squop-up turn: blue passes instead of freeing.
            return {"pass": True}
    if c == "red" and n > 24:
        if any(board.wink(y).status is WinkStatus.FREE for y in yellows) or not any(
            board.wink(g).status is WinkStatus.FREE for g in greens + yellows
        ):
            return {"play": {"red-S4": (300.0, -200.0 + n)}}
    if c == "green" and board.wink("green-S4").status is WinkStatus.SQUOPPED:
        # The free shot with a nominated colour: green plays blue-L1 off green-S4.
        if board.wink("blue-L1").squops:
            _SQUOP_UP_DONE.append(n)
            return {"colour": "blue", "play": {"blue-L1": (-250.0, 150.0)}, "unsquop": "blue-L1"}
    if c == "yellow" and n > 24:
        free = [
            y
            for y in yellows
            if board.wink(y).status is WinkStatus.FREE and not board.wink(y).squops
        ]
        if free:
            x, y = board.wink(free[0]).mat_xy or (0.0, 0.0)
            return {"play": {free[0]: (x + 5.0, y - 30.0)}}
    return None


def main() -> None:
    write_game("game_time_limit", Scribe("blue", "pairs", timed_period_s=600.0), time_limit_script)
    write_game("game_pot_out", Scribe("green", "pairs"), pot_out_script, dt=20.0)
    write_game(
        "game_squop_up",
        Scribe("blue", "singles", timed_period_s=840.0),
        squop_up_script,
        dt=20.0,
    )


if __name__ == "__main__":
    main()
