"""The ``gecobench`` command: one subcommand per user job, each a module of its package.

``gecobench <job> [options]`` (or ``python -m gecobench <job>``) imports the job's module only when that job runs,
so ``gecobench --help`` starts without torch. Every job module has ``build_parser()`` (its own ``--help``,
``prog="gecobench <job>"``) and ``main(argv) -> int`` (the exit status); ``scripts/<name>.py`` in a checkout are
shims onto them. A job with sub-jobs (``export``, ``spanish``) maps each to a module the same way.

The core's jobs are :data:`CORE_COMMANDS`, modules of this package. The packages above the core (the layers of
docs/architecture.md) add theirs through the ``gecobench.commands`` entry-point group of their distribution's
metadata: each entry names a :class:`Command` defined in a module that loads nothing heavy, so listing the
commands imports no job. The core never imports those packages by name, and a missing registration (no package
metadata, metadata older than the registry) is said, never silently a shorter command list.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata

PROG = "gecobench"
#: the distribution whose metadata registers the upper layers' jobs
DISTRIBUTION = "gecobench-hub"
#: the entry-point group of those jobs: ``<command word> = <module>:<Command object>``
COMMAND_GROUP = "gecobench.commands"
#: ``--data-dir``'s help, the same for every job that reads GECO (where :func:`geco_dataset.load_geco` looks)
GECO_DIR_HELP = ("local GECO release folder (default: $GECOBENCH_GECO_DIR, a checkout's ../shared/data/geco, else "
                 "the files downloaded from their canonical URLs into the datasets cache)")


@dataclass(frozen=True)
class Command:
    """One subcommand: the module holding its ``main``, the one-line summary shown by ``gecobench --help``.

    ``after`` places a registered command (an entry point) in ``gecobench --help``: right after the command of
    that name, so the list keeps the order a user meets the jobs in (``None``, or a name not there: at the end)."""

    module: str
    summary: str
    after: str | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.module, str) and self.module and isinstance(self.summary, str) and self.summary):
            raise ValueError(f"a command needs a module path and a one-line summary, got {self!r}")


#: a command word → its job, or (a group such as ``export``) each sub-word → its job
CommandTree = dict[str, Command | dict[str, Command]]

#: The core's command tree, in the order a user meets the jobs (the registered jobs go in at their ``after``).
#: ``export`` and ``spanish`` have sub-jobs.
CORE_COMMANDS: CommandTree = {
    "demo": Command("gecobench.cli.demo", "run the whole main job offline on a small plan: data, models, "
                                          "explanations, records, leaderboard"),
    "train": Command("gecobench.cli.train", "train zoo models (regimes x seeds on one GECO config)"),
    "zoo": Command("gecobench.cli.zoo", "train the whole zoo (regimes x configs x seeds) and print its accuracy table"),
    "evaluate": Command("gecobench.cli.evaluate", "score explainers on trained models into a results store"),
    "leaderboard": Command("gecobench.cli.leaderboard", "print the leaderboard of a results store"),
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


@dataclass(frozen=True)
class CommandList:
    """The whole command tree (the core's and the registered jobs, in ``gecobench --help`` order) and what kept a
    registered job out of it (each problem one sentence; empty when every registration loaded)."""

    tree: CommandTree
    problems: tuple[str, ...] = ()


def registered_commands() -> tuple[dict[str, Command], list[str]]:
    """The jobs registered in the ``gecobench.commands`` entry-point group, by command word, and the problems
    met: the distribution not installed (no metadata), its metadata registering none (installed before the
    registry: install again), an entry that does not load or is no :class:`Command`, a word taken twice."""
    try:
        own = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return {}, [f"the {DISTRIBUTION} distribution is not installed (no package metadata), so the commands "
                    f"registered as `{COMMAND_GROUP}` entry points are missing: install it (`pip install -e .` "
                    "in a checkout, or `make setup`)"]
    problems = []
    if not own.entry_points.select(group=COMMAND_GROUP):
        problems.append(f"the installed metadata of {DISTRIBUTION} registers no `{COMMAND_GROUP}` entry points "
                        "(installed before they existed?), so their commands are missing: install it again "
                        "(`pip install -e .` in a checkout, or `make setup`)")
    found: dict[str, Command] = {}
    for entry in sorted(metadata.entry_points(group=COMMAND_GROUP), key=lambda e: e.name):
        if entry.name in CORE_COMMANDS or entry.name in found:
            problems.append(f"`{COMMAND_GROUP}` entry point {entry.name} = {entry.value} is left out: "
                            f"`{PROG} {entry.name}` is already a command")
            continue
        try:
            command = entry.load()
        except Exception as err:  # one broken registration must not take the whole command down
            problems.append(f"command {entry.name!r} ({entry.value}) cannot be loaded: {type(err).__name__}: {err}")
            continue
        if not isinstance(command, Command):
            problems.append(f"`{COMMAND_GROUP}` entry point {entry.name} = {entry.value} is a "
                            f"{type(command).__name__}, not a gecobench.cli.Command: left out")
            continue
        found[entry.name] = command
    return found, problems


def ordered_tree(core: CommandTree, registered: dict[str, Command]) -> CommandTree:
    """``core`` with each registered command right after the one its ``after`` names (a chain, such as one after
    ``leaderboard`` and the next after that one, is followed); the others at the end, by name."""
    names = list(core)
    pending = dict(sorted(registered.items()))
    while True:
        placeable = [name for name, command in pending.items() if command.after in names]
        if not placeable:
            break
        for name in reversed(placeable):  # several after one command: in the order of their names
            names.insert(names.index(pending[name].after) + 1, name)
            del pending[name]
    names += list(pending)
    return {name: core[name] if name in core else registered[name] for name in names}


@functools.cache
def command_list() -> CommandList:
    """The command tree of this installation, found once per process (:func:`registered_commands`)."""
    registered, problems = registered_commands()
    return CommandList(ordered_tree(CORE_COMMANDS, registered), tuple(problems))


def command_tree() -> CommandTree:
    """Every command: the core's and the registered ones, in ``gecobench --help`` order."""
    return command_list().tree


def command_names() -> list[str]:
    """Every runnable command path, e.g. ``["demo", ..., "spanish score", "export results", ...]``."""
    names = []
    for name, entry in command_tree().items():
        names += [name] if isinstance(entry, Command) else [f"{name} {sub}" for sub in entry]
    return names


def module_of(words: Sequence[str]) -> str:
    """The module of command path ``words`` (``["export", "results"]`` → ``gecobench.cli.export_results``)."""
    entry: Command | dict[str, Command] = command_tree()[words[0]]
    if isinstance(entry, dict):
        entry = entry[words[1]]
    return entry.module


def top_level_help(commands: CommandTree | None = None, prog: str = PROG) -> str:
    """The text of ``gecobench --help`` (or of a group such as ``gecobench export --help``); ``commands``
    defaults to :func:`command_tree`."""
    commands = command_tree() if commands is None else commands
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
    _say_problems()
    return 2


def _say_problems() -> None:
    """Why registered commands are missing, on stderr (the help text on stdout stays the commands')."""
    for problem in command_list().problems:
        print(f"{PROG}: note: {problem}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``gecobench`` with ``argv`` (default: the process's arguments); returns the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    if not words or words[0] in ("-h", "--help", "help"):
        (sys.stdout if words else sys.stderr).write(top_level_help())
        _say_problems()
        return 0 if words else 2
    if words[0] == "--version":
        from gecobench import __version__

        print(f"gecobench-hub {__version__}")
        return 0
    commands = command_tree()
    if words[0] not in commands:
        return _unknown(words[0], list(commands), PROG)
    entry = commands[words[0]]
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
