"""Time this checkout against another one, item by item in turn (the benchmarks' ``--against``).

On a shared machine, whole benchmark runs one after the other differ by more
than a small change: 10 ms a frame, a third of a review. So a script starts
two workers, itself with ``--worker`` in this checkout and in the other one
(e.g. ``git worktree add /tmp/old COMMIT``), and asks them the same items in
turn, which one goes first drawn at random, so that the machine's drift and
the load of other work fall on both alike.

A worker reads one item a line from stdin and answers each with one line.
Only the parent imports this module: the other checkout may be older than it.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

#: The two workers' names.
NAMES = ("this", "other")


class TwoCheckouts:
    """A script's worker processes in this checkout and in ``other``.

    Parameters
    ----------
    script : Path
        The benchmark script; each worker runs it with ``worker_args``, from
        its checkout's root (so that it imports that checkout's code).
    other : Path
        The other checkout's root.
    worker_args : list of str
    """

    def __init__(self, script: Path, other: Path, worker_args: list[str]) -> None:
        args = [sys.executable, str(script.resolve()), *worker_args]
        self._workers = {
            name: subprocess.Popen(
                args, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
            for name, root in zip(NAMES, (Path.cwd(), other.resolve()), strict=True)
        }

    def read(self, name: str) -> str:
        """The next line the worker ``name`` writes."""
        stdout = self._workers[name].stdout
        assert stdout is not None  # opened as a pipe above
        return stdout.readline().strip()

    def ask(self, name: str, item: str) -> str:
        """The worker ``name``'s one-line answer to ``item``."""
        stdin = self._workers[name].stdin
        assert stdin is not None  # opened as a pipe above
        stdin.write(f"{item}\n")
        stdin.flush()
        return self.read(name)

    def in_turn(self, items: list[str], repeat: int, seed: int = 0) -> dict[str, list[str]]:
        """Both workers' answers to every item, ``repeat`` times over, in turn.

        Returns, per name, the answers in the order asked: the items, then
        the items again, ``repeat`` times.
        """
        rng = random.Random(seed)
        answers: dict[str, list[str]] = {name: [] for name in NAMES}
        for _ in range(repeat):
            for item in items:
                for name in rng.sample(NAMES, 2):
                    answers[name].append(self.ask(name, item))
        return answers

    def close(self) -> None:
        """End both workers (they stop at the end of their input)."""
        for worker in self._workers.values():
            assert worker.stdin is not None  # opened as a pipe above
            worker.stdin.close()
            worker.wait()
