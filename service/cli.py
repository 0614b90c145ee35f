"""The ``winkref`` console command and its subcommands.

Each subcommand is a thin wrapper: it parses options, calls the ``run``
function of its module in :mod:`service.commands`, and prints the result.
Bad input never reaches the user as a traceback: every ``ValueError`` (our
error types all subclass it) and ``OSError`` becomes one line on stderr and
exit status 2.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import click
import typer

app = typer.Typer(
    name="winkref",
    help="A computer-vision referee for tiddlywinks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_BAD_INPUT = 2
EXIT_INTERNAL_ERROR = 1


@contextlib.contextmanager
def _user_errors(*, whole_mat: bool = False) -> Iterator[None]:
    """Turn input errors into one clear line and exit status 2.

    Anything else is a bug in winkref, not the user's fault: one line saying
    so (exit 1), with the traceback only when ``WINKREF_DEBUG`` is set.
    ``whole_mat``: the command needs the whole mat in view; when none is
    found, the line also points to ``review``, the command for a close-up.
    """
    try:
        yield
    except (ValueError, OSError) as exc:
        message = str(exc)
        if whole_mat:
            from calibration.result import MatPartlyOutOfFrameError, NoMatFoundError

            if isinstance(exc, NoMatFoundError | MatPartlyOutOfFrameError):
                message += (
                    "; if the photo is a close-up of a few winks, not the whole mat, "
                    "use 'winkref review PHOTO' instead"
                )
        typer.echo(f"winkref: error: {message}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except MemoryError:
        typer.echo(
            "winkref: error: not enough memory for this input; "
            "scale the photo down (a 12-megapixel photo is plenty) and try again",
            err=True,
        )
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except (typer.Exit, typer.Abort, click.ClickException):
        raise
    except Exception as exc:
        if os.environ.get("WINKREF_DEBUG"):
            raise
        typer.echo(
            f"winkref: internal error ({type(exc).__name__}: {exc}); this is a bug in "
            "winkref, not your input: please report it with the command and files used "
            "(run with WINKREF_DEBUG=1 to see the traceback)",
            err=True,
        )
        raise typer.Exit(EXIT_INTERNAL_ERROR) from None


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"winkref {version('winkref')}")
        except PackageNotFoundError:
            typer.echo("winkref (not installed as a package: run it from its .venv)")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print winkref's version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """A computer-vision referee for tiddlywinks."""
    # An explicit callback keeps every command a subcommand whatever their
    # number (typer collapses a one-command app), and gives `--help` its text.


def _emit(text: str) -> None:
    if text:
        typer.echo(text)


@app.command()
def replay(
    record: Annotated[Path, typer.Argument(help="A recorded game (RECORD.json).")],
    json_output: Annotated[
        bool, typer.Option("--json", help="Print events and result as JSON.")
    ] = False,
) -> None:
    """Replay a recorded game and announce what the referee would say."""
    from service.commands import replay as cmd

    with _user_errors():
        _emit(cmd.run(record, json_output=json_output))


@app.command()
def review(
    photo: Annotated[Path, typer.Argument(help="A close-up photo of the disputed pair.")],
    pair: Annotated[
        str | None, typer.Option("--pair", help="The pair as ID1,ID2 (ids as shown).")
    ] = None,
    near: Annotated[
        str | None, typer.Option("--near", help="Pick the pair nearest pixel X,Y.")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON.")] = False,
    annotate: Annotated[
        Path | None, typer.Option("--annotate", help="Write a zoomed picture to OUT.png.")
    ] = None,
    second: Annotated[
        Path | None, typer.Option("--second", help="A second photo from another side.")
    ] = None,
) -> None:
    """The umpire's verdict on a disputed squop from a close-up photo."""
    from service.commands import review as cmd

    with _user_errors():
        _emit(
            cmd.run(
                photo,
                pair=pair,
                near=near,
                json_output=json_output,
                annotate_path=annotate,
                second=second,
            )
        )


@app.command()
def count(
    photo: Annotated[Path, typer.Argument(help="A photo of the whole mat at the end of time.")],
    calibration: Annotated[
        Path | None,
        typer.Option("--calibration", help="Calibration JSON; default: calibrate from PHOTO."),
    ] = None,
    ruleset: Annotated[str, typer.Option("--ruleset", help="Rules to score by.")] = "etwa-2012",
    game_format: Annotated[
        str, typer.Option("--format", help="pairs, singles or three.")
    ] = "pairs",
    json_output: Annotated[bool, typer.Option("--json", help="Print the count as JSON.")] = False,
    annotate: Annotated[
        Path | None, typer.Option("--annotate", help="Write the labelled photo to OUT.png.")
    ] = None,
    squop: Annotated[
        list[str] | None,
        typer.Option("--squop", help="Umpire's ruling UPPER,LOWER: UPPER squops LOWER."),
    ] = None,
    no_squop: Annotated[
        list[str] | None,
        typer.Option("--no-squop", help="Umpire's ruling A,B: neither squops the other."),
    ] = None,
    status: Annotated[
        list[str] | None,
        typer.Option("--status", help="Umpire's ruling ID=STATUS (free, potted, off, unplayed)."),
    ] = None,
    closeup: Annotated[
        list[Path] | None,
        typer.Option(
            "--closeup",
            help="A close-up photo of a pair in doubt: its verdict is taken as the ruling.",
        ),
    ] = None,
) -> None:
    """The end-of-time tiddly count and game score (rule 19)."""
    from service.commands import count as cmd

    with _user_errors(whole_mat=True):
        _emit(
            cmd.run(
                photo,
                calibration_path=calibration,
                ruleset=ruleset,
                game_format=game_format,
                json_output=json_output,
                annotate_path=annotate,
                squops=squop or (),
                apart=no_squop or (),
                statuses=status or (),
                closeups=closeup or (),
            )
        )


@app.command()
def analyze(
    image: Annotated[Path, typer.Argument(help="A photo of the mat.")],
    calibration: Annotated[
        Path | None,
        typer.Option("--calibration", help="Calibration JSON; default: calibrate from IMAGE."),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the board as JSON.")] = False,
    annotate: Annotated[
        Path | None, typer.Option("--annotate", help="Write the annotated photo to OUT.png.")
    ] = None,
) -> None:
    """Every wink's colour, size, position and status, with squops and piles."""
    from service.commands import analyze as cmd

    with _user_errors(whole_mat=True):
        _emit(
            cmd.run(
                image,
                calibration_path=calibration,
                json_output=json_output,
                annotate_path=annotate,
            )
        )


@app.command()
def calibrate(
    image: Annotated[
        Path | None, typer.Argument(help="A photo of the whole mat (or use --camera N).")
    ] = None,
    camera: Annotated[
        int | None, typer.Option("--camera", help="Grab a frame from camera N instead.")
    ] = None,
    output: Annotated[
        Path, typer.Option("-o", "--output", help="Where to write the calibration file.")
    ] = Path("calib.json"),
    corners: Annotated[
        str | None,
        typer.Option("--corners", help="The mat's corners by hand: x1,y1,x2,y2,x3,y3,x4,y4 (px)."),
    ] = None,
    annotate: Annotated[
        Path | None,
        typer.Option("--annotate", help="Annotated picture; default: next to the output file."),
    ] = None,
    distortion: Annotated[
        str | None,
        typer.Option(
            "--distortion",
            help="Known lens distortion k1,k2,p1,p2[,k3] (OpenCV's order); "
            "default: estimated from the mat's edges.",
        ),
    ] = None,
) -> None:
    """Find the mat, print the fit and its error in mm, and write the calibration file."""
    from service.commands import calibrate as cmd

    with _user_errors(whole_mat=True):
        _emit(
            cmd.run(
                image,
                camera_index=camera,
                output=output,
                corners=corners,
                annotate_path=annotate,
                distortion=distortion,
            )
        )


@app.command()
def watch(
    source: Annotated[
        Path | None,
        typer.Argument(
            help="A video file, or a folder of photos taken after each shot (or use --camera N)."
        ),
    ] = None,
    squidge_off: Annotated[
        str,
        typer.Option(
            "--squidge-off", help="The colour that won the squidge-off and plays first (rule 6)."
        ),
    ] = "",
    camera: Annotated[
        int | None, typer.Option("--camera", help="Watch camera N live instead.")
    ] = None,
    calibration: Annotated[
        Path | None,
        typer.Option("--calibration", help="Calibration JSON; default: from the first picture."),
    ] = None,
    ruleset: Annotated[
        str | None,
        typer.Option(
            "--ruleset", help="Rules to play by; default: etwa-2012 (or the resumed game's)."
        ),
    ] = None,
    game_format: Annotated[
        str | None,
        typer.Option(
            "--format", help="pairs, singles or three; default: pairs (or the resumed game's)."
        ),
    ] = None,
    time_limit: Annotated[
        float | None,
        typer.Option("--time-limit", help="The timed period in minutes; default: the format's."),
    ] = None,
    record: Annotated[
        Path | None,
        typer.Option(
            "--record",
            help="Where to save the game record after each shot; "
            "default: winkref-game-DATE-TIME.json here.",
        ),
    ] = None,
    save_frames: Annotated[
        Path | None,
        typer.Option("--save-frames", help="Folder to keep the picture of every shot in."),
    ] = None,
    settle: Annotated[
        float,
        typer.Option("--settle", help="Seconds the picture must be still after a shot."),
    ] = 1.0,
    interval: Annotated[
        float,
        typer.Option("--interval", help="Seconds between the photos of a folder (game clock)."),
    ] = 30.0,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print one JSON object per line.")
    ] = False,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            help="Go on with the game saved in this record (after a stop or a crash).",
        ),
    ] = None,
    start_as_seen: Annotated[
        bool,
        typer.Option(
            "--start-as-seen",
            help="Take the first still view as the starting position (rule 5.2), every "
            "wink behind its own baseline, when the referee keeps waiting on a misread one; "
            "the video or photos must begin with the starting position.",
        ),
    ] = False,
) -> None:
    """The live referee: watch a game shot by shot and announce what the rules say."""
    from service.commands import watch as cmd

    with _user_errors(whole_mat=True):
        cmd.check_source(source, camera)
        if not squidge_off and resume is None:
            raise cmd.WatchOptionsError(
                "--squidge-off COLOUR is needed: the colour that won the squidge-off "
                "plays first (rule 6)"
            )
        cmd.run(
            source,
            squidge_off=squidge_off,
            emit=lambda line: typer.echo(line),
            camera_index=camera,
            calibration_path=calibration,
            ruleset=ruleset,
            game_format=game_format,
            time_limit_min=time_limit,
            record_path=record,
            frames_dir=save_frames,
            settle_s=settle,
            interval_s=interval,
            json_output=json_output,
            resume_path=resume,
            start_as_seen=start_as_seen,
        )


def main() -> None:
    """Console-script entry point."""
    # Typer turns an empty argument into Path("."), the current folder, which
    # the user never named (e.g. `winkref analyze "$PHOTO"` with PHOTO unset).
    empty = [k for k, arg in enumerate(sys.argv[1:], start=1) if not arg.strip()]
    if empty:
        after = f" after {sys.argv[empty[0] - 1]!r}" if empty[0] > 1 else ""
        typer.echo(
            f"winkref: error: an empty argument ({sys.argv[empty[0]]!r}) was given{after}; "
            "give the file name or value it stands for (is a shell variable unset?)",
            err=True,
        )
        sys.exit(2)
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("winkref: interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
