"""The ``gecobench`` command: one subcommand per user job, each a module of this package.

``gecobench <job> [options]`` (or ``python -m gecobench <job>``) imports ``gecobench.cli.<module>`` only when that job
runs, so ``gecobench --help`` starts without torch. Every job module has ``build_parser()`` (its own ``--help``,
``prog="gecobench <job>"``) and ``main(argv) -> int`` (the exit status); ``scripts/<name>.py`` in a checkout are
shims onto them. A job with sub-jobs (``export``, ``spanish``) maps each to a module the same way.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass

PROG = "gecobench"
#: ``--data-dir``'s help, the same for every job that reads GECO (where :func:`geco_dataset.load_geco` looks)
GECO_DIR_HELP = ("local GECO release folder (default: $GECOBENCH_GECO_DIR, a checkout's ../shared/data/geco, else "
                 "the files downloaded from their canonical URLs into the datasets cache)")


@dataclass(frozen=True)
class Command:
    """One subcommand: the module holding its ``main``, the one-line summary shown by ``gecobench --help``."""

    module: str
    summary: str


#: The command tree, in the order a user meets the jobs. ``export`` and ``spanish`` have sub-jobs.
COMMANDS: dict[str, Command | dict[str, Command]] = {
    "demo": Command("gecobench.cli.demo", "run the whole main job offline on a small plan: data, models, "
                                          "explanations, records, leaderboard"),
    "train": Command("gecobench.cli.train", "train zoo models (regimes x seeds on one GECO config)"),
    "zoo": Command("gecobench.cli.zoo", "train the whole zoo (regimes x configs x seeds) and print its accuracy table"),
    "evaluate": Command("gecobench.cli.evaluate", "score explainers on trained models into a results store"),
    "leaderboard": Command("gecobench.cli.leaderboard", "print the leaderboard of a results store"),
    "submit": Command("gecobench.cli.submit", "submit an explainer (code or precomputed) or show the queue and scores"),
    "queue": Command("gecobench.cli.queue", "process the submission queue (sandboxed) into the results store"),
    "space": Command("gecobench.cli.space", "run the leaderboard Space locally"),
    "controls": {
        "train": Command("gecobench.cli.controls_train", "train the hub's hidden control models (secret seed, private "
                                                         "folder; maintainers)"),
        "score": Command("gecobench.cli.controls_score", "the built-in explainers' MA on the hidden control models"),
    },
    "spanish": {
        "score": Command("gecobench.cli.spanish", "score a masked LM on the Spanish templates (BPI/BRI with intervals)"),
        "recorded": Command("gecobench.cli.spanish_recorded",
                            "import the 20 models' published Spanish predictions as records"),
    },
    "export": {
        "datasets": Command("gecobench.cli.export_datasets", "export GECO or the Spanish templates as a Hub dataset folder"),
        "results": Command("gecobench.cli.export_results", "turn a results store into a Hub dataset folder"),
    },
    "publish": Command("gecobench.cli.publish", "publish datasets, metrics, models, results and the Space to the Hub"),
    "reference": Command("gecobench.cli.reference", "compute the reference results (zoo + every built-in explainer)"),
    "compare": Command("gecobench.cli.compare", "compare a store's Mass Accuracy with GECOBench's published medians"),
    "build-geco": Command("gecobench.cli.build_geco", "build GECO-style datasets from labelled sentences"),
}


def command_names() -> list[str]:
    """Every runnable command path, e.g. ``["demo", ..., "spanish score", "export results", ...]``."""
    names = []
    for name, entry in COMMANDS.items():
        names += [name] if isinstance(entry, Command) else [f"{name} {sub}" for sub in entry]
    return names


def module_of(words: Sequence[str]) -> str:
    """The module of command path ``words`` (``["export", "results"]`` → ``gecobench.cli.export_results``)."""
    entry: Command | dict[str, Command] = COMMANDS[words[0]]
    if isinstance(entry, dict):
        entry = entry[words[1]]
    return entry.module


def top_level_help(commands: dict[str, Command | dict[str, Command]] = COMMANDS, prog: str = PROG) -> str:
    """The text of ``gecobench --help`` (or of a group such as ``gecobench export --help``)."""
    width = max(len(name) for name in commands) + 2
    lines = [f"usage: {prog} <command> [options]", ""]
    if prog == PROG:
        lines += ["GECOBench Hub: gender-controlled benchmarks for the correctness and gender bias of explanations of",
                  "language models. Run `gecobench <command> --help` for the options and examples of each command.", ""]
    lines.append("commands:")
    for name, entry in commands.items():
        if isinstance(entry, Command):
            lines.append(f"  {name:<{width}}{entry.summary}")
        else:
            lines.append(f"  {name:<{width}}{' | '.join(entry)}  (`{prog} {name} --help`)")
            for sub, command in entry.items():
                lines.append(f"  {'':<{width}}  {sub}: {command.summary}")
    if prog == PROG:
        lines += ["", "options:", f"  {'-h, --help':<{width}}show this help and exit",
                  f"  {'--version':<{width}}print the package version and exit", "",
                  "examples:", "  gecobench demo --quick",
                  "  gecobench train --regime OLA --config binary_all --schedule demo --max-train-sentences 40",
                  ("  gecobench evaluate --explainers uniform_random saliency --models runs/zoo/binary_all/OLA/seed0 "
                   "--max-groups 4"),
                  "  gecobench leaderboard --results results"]
    return "\n".join(lines) + "\n"


def _unknown(word: str, choices: Sequence[str], prog: str) -> int:
    close = difflib.get_close_matches(word, list(choices), n=1)
    hint = f"; did you mean `{prog} {close[0]}`?" if close else ""
    print(f"{prog}: unknown command {word!r}{hint} (commands: {', '.join(choices)}; see `{prog} --help`)",
          file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``gecobench`` with ``argv`` (default: the process's arguments); returns the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    if not words or words[0] in ("-h", "--help", "help"):
        (sys.stdout if words else sys.stderr).write(top_level_help())
        return 0 if words else 2
    if words[0] == "--version":
        from gecobench import __version__

        print(f"gecobench-hub {__version__}")
        return 0
    if words[0] not in COMMANDS:
        return _unknown(words[0], list(COMMANDS), PROG)
    entry = COMMANDS[words[0]]
    consumed = 1
    if isinstance(entry, dict):
        group = f"{PROG} {words[0]}"
        if len(words) < 2 or words[1] in ("-h", "--help"):
            (sys.stdout if len(words) > 1 else sys.stderr).write(top_level_help(entry, group))
            return 0 if len(words) > 1 else 2
        if words[1] not in entry:
            return _unknown(words[1], list(entry), group)
        consumed = 2
    module = importlib.import_module(module_of(words[:consumed]))
    status = module.main(words[consumed:])
    return int(status or 0)
