"""``python -m tools.scenegen --profile overhead --seed 101 [--count N] --out DIR``."""

from __future__ import annotations

import argparse
import sys
import time

from tools.scenegen import PROFILES, generate_scene, write_scene
from tools.scenegen.render import FELT_COLOURS_BGR, TABLES_BY_NAME


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.scenegen",
        description="Render tiddlywinks scenes with exact ground truth (tiddlywinks-gt/1).",
    )
    parser.add_argument("--profile", choices=PROFILES, required=True)
    parser.add_argument("--seed", type=int, required=True, help="first seed")
    parser.add_argument("--count", type=int, default=1, help="how many consecutive seeds")
    parser.add_argument("--out", default="sample_images/", help="output directory")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="image size factor (same scene, e.g. 0.25)"
    )
    parser.add_argument(
        "--wear",
        action="store_true",
        help="creases in the felt, a glossy table and a coloured light (picture only)",
    )
    parser.add_argument(
        "--felt", choices=tuple(FELT_COLOURS_BGR), help="this felt colour instead of the drawn one"
    )
    parser.add_argument(
        "--table",
        choices=tuple(TABLES_BY_NAME),
        help="this table instead of the drawn one (beige-wood: a pale wooden top close to beige "
        "felt, only chosen by name)",
    )
    parser.add_argument(
        "--tip-over-edge",
        action="store_true",
        help="a wink off the mat, tipped over the mat's edge (not in the start profile)",
    )
    args = parser.parse_args(argv)
    for seed in range(args.seed, args.seed + args.count):
        start = time.perf_counter()
        scene = generate_scene(
            args.profile,
            seed,
            image_scale=args.scale,
            wear=args.wear,
            felt=args.felt,
            table=args.table,
            tip_over_edge=args.tip_over_edge,
        )
        jpg, _ = write_scene(scene, args.out)
        print(f"{jpg}  ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
