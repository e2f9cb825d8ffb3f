"""``gecobench space``: the leaderboard Space, run locally (the options are those of :func:`leaderboard_space.app.main`)."""

from __future__ import annotations

import argparse


def build_parser() -> argparse.ArgumentParser:
    from leaderboard_space.app import build_parser as space_parser

    return space_parser(prog="gecobench space")


def main(argv: list[str] | None = None) -> int:
    from leaderboard_space.app import main as run_space

    run_space(argv, prog="gecobench space")
    return 0
