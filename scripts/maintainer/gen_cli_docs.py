#!/usr/bin/env python
"""Write every command-line tool's ``--help`` into docs/reference/cli.md (the CLI reference page).

The page is generated, never edited by hand, so it cannot drift from the commands: tests/test_docs.py runs
this with ``--check`` and fails when the page is stale. The ``gecobench`` command and each of its subcommands run
as ``python -m gecobench <command> --help``, the maintainers' scripts as ``python scripts/maintainer/<name>.py
--help``, from the repository root with a fixed terminal width (so argparse wraps the same way on every machine).
The shims left in ``scripts/`` (old command lines) are listed with the command they run.

Examples:
  python scripts/maintainer/gen_cli_docs.py            # rewrite docs/reference/cli.md
  python scripts/maintainer/gen_cli_docs.py --check    # exit 1 if the page is out of date
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "docs" / "reference" / "cli.md"
HELP_COLUMNS = "100"

PAGE_HEADER = """# Command-line tools

`pip install gecobench-hub` installs one command, **`gecobench`** (also `python -m gecobench`), with a subcommand per
job; each subcommand's logic is a module of `gecobench.cli`, or of the package above the core that registers it
(`submissions.cli`, `leaderboard_space.app`), reusing the library. The files in `scripts/` of a
checkout are shims onto those commands, kept for old command lines; `scripts/maintainer/` holds the maintainers'
tools (this page, the metric cards' numbers, the docs' screenshots), which are not installed.
This page is **generated** by `python scripts/maintainer/gen_cli_docs.py` from each command's `--help` (do not edit it
by hand; `tests/test_docs.py` fails when it is stale).
"""
#: The installed command, documented with every subcommand.
COMMAND = "gecobench"


@dataclass
class HelpText:
    """One script's ``--help`` output, or why it could not be produced."""

    script: str
    text: str
    ok: bool
    subcommands: list[HelpText] = field(default_factory=list)


#: Command-line entry points outside scripts/ (the Space runs locally as a script too).
EXTRA_SCRIPTS = ("leaderboard_space/app.py",)


def shim_commands(root: Path = REPO_ROOT) -> dict[str, str]:
    """The shims in ``root/scripts``: ``scripts/<name>.py`` → the ``gecobench`` command it runs (a shim imports
    from one command's module and nothing else)."""
    if not (root / "gecobench" / "cli" / "__init__.py").is_file():
        return {}
    from gecobench.cli import command_names, module_of

    commands = {module_of(name.split()): f"{COMMAND} {name}" for name in command_names()}
    shims = {}
    for path in sorted((root / "scripts").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
        if len(imports) == 1 and isinstance(imports[0], ast.ImportFrom) and imports[0].module in commands:
            shims[str(path.relative_to(root))] = commands[imports[0].module]
    return shims


def list_scripts(root: Path = REPO_ROOT) -> list[str]:
    """The entry points documented on the page, each with a section: the ``gecobench`` command (when ``root`` has
    it), scripts/ that are not shims, sorted, then the maintainers' scripts/maintainer/, then extras."""
    found = [COMMAND] if (root / "gecobench" / "cli" / "__init__.py").is_file() else []
    shims = shim_commands(root)
    for folder in (root / "scripts", root / "scripts" / "maintainer"):
        found += sorted(str(p.relative_to(root)) for p in folder.glob("*.py")
                        if not p.name.startswith("_") and str(p.relative_to(root)) not in shims)
    return found + [extra for extra in EXTRA_SCRIPTS if (root / extra).is_file()]


def help_text(script: str, root: Path = REPO_ROOT, timeout: float = 300.0) -> HelpText:
    """``<script> --help`` from ``root``, plus ``<script> <sub> --help`` for its sub-commands: the ``gecobench``
    command's from :func:`gecobench.cli.command_names`, a script's from argparse's sub-command line."""
    if script == COMMAND:
        from gecobench.cli import command_names

        main_help = _run_help(script, [], root, timeout)

        def command_helps(name: str) -> list[HelpText]:
            sub = _run_help(script, name.split(), root, timeout)
            return [sub, *_argparse_subcommands(sub, script, name.split(), root, timeout)]

        with ThreadPoolExecutor(max_workers=2) as pool:  # each help starts a Python: two at a time
            for helps in pool.map(command_helps, command_names()):
                main_help.subcommands += helps
        return main_help
    main_help = _run_help(script, [], root, timeout)
    main_help.subcommands += _argparse_subcommands(main_help, script, [], root, timeout)
    return main_help


def _argparse_subcommands(parent: HelpText, script: str, words: list[str], root: Path,
                          timeout: float) -> list[HelpText]:
    if not parent.ok:
        return []
    # argparse lists sub-commands as a positional "{a,b,c}" line (option choices follow their --flag);
    # their options live in their own --help.
    choices = re.search(r"^  \{([\w,-]+)\}(\s|$)", parent.text, re.MULTILINE)
    return [_run_help(script, [*words, sub], root, timeout) for sub in (choices.group(1).split(",") if choices else [])]


def _run_help(script: str, words: list[str], root: Path, timeout: float) -> HelpText:
    name = " ".join([script, *words])
    env = {**os.environ, "COLUMNS": HELP_COLUMNS, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "PYTHONIOENCODING": "utf-8"}
    try:
        program = ["-m", "gecobench"] if script == COMMAND else [script]
        done = subprocess.run([sys.executable, *program, *words, "--help"], check=False, cwd=root, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return HelpText(name, f"`{name} --help` did not finish within {timeout:.0f} s", ok=False)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        return HelpText(name, f"`{name} --help` exited with status {done.returncode}:\n{tail}", ok=False)
    return HelpText(name, done.stdout.rstrip(), ok=True)


def render_page(helps: list[HelpText], shims: dict[str, str] | None = None) -> str:
    """The Markdown page: an index of the commands and scripts, the shims, then one section per command and script
    with its help in a text block."""
    lines = [PAGE_HEADER]
    lines.append("| command | first line of its description |")
    lines.append("|---|---|")
    for item in helps:
        for entry in [item, *(sub for sub in item.subcommands if _is_command(item, sub))]:
            lines.append(f"| [`{entry.script}`](#{_anchor(entry.script)}) | {_summary(entry)} |")
    if shims:
        lines += ["", "Old command lines still work in a checkout; each shim runs its command:", "",
                  "| shim | runs |", "|---|---|"]
        lines += [f"| `{shim}` | [`{command}`](#{_anchor(command)}) |" for shim, command in shims.items()]
    for item in helps:
        lines += _section(item, "##")
        for sub in item.subcommands:
            lines += _section(sub, "##" if _is_command(item, sub) else "###")
    return "\n".join(lines) + "\n"


def _is_command(item: HelpText, sub: HelpText) -> bool:
    """Whether ``sub`` is a subcommand of the ``gecobench`` command tree (``gecobench export results``), not an
    argparse sub-command of one (``gecobench submit status``)."""
    if item.script != COMMAND:
        return False
    from gecobench.cli import command_names

    return sub.script.removeprefix(f"{COMMAND} ") in command_names()


def _section(item: HelpText, level: str) -> list[str]:
    lines = ["", f"{level} `{item.script}` {{#{_anchor(item.script)}}}", ""]
    if not item.ok:
        lines += ['!!! failure "`--help` failed"', ""]
        lines += ["    " + line if line else "" for line in ["```text", *item.text.splitlines(), "```"]]
        return lines
    return lines + ["```text", item.text, "```"]


def _anchor(script: str) -> str:
    if script.startswith(f"{COMMAND} "):
        script = script.removeprefix(f"{COMMAND} ")
    return script.removeprefix("scripts/").replace(".py", "").replace("_", "-").replace(" ", "-").replace("/", "-")


def _summary(item: HelpText) -> str:
    if not item.ok:
        return "**`--help` fails** (see below)"
    # The description is the first non-empty line after the usage block.
    lines = item.text.splitlines()
    index = 0
    while index < len(lines) and lines[index].strip():
        index += 1
    for line in lines[index:]:
        if line.strip() and not line.strip().endswith(":"):
            return line.strip().replace("|", "\\|")
    return ""


def generate(root: Path = REPO_ROOT, workers: int = 2) -> tuple[str, list[HelpText]]:
    """Run every script's ``--help`` (``workers`` at a time) and return the page and the per-script results."""
    scripts = list_scripts(root)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        helps = list(pool.map(lambda s: help_text(s, root), scripts))
    return render_page(helps, shim_commands(root)), helps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="page to write (default docs/reference/cli.md)")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if --out differs from a fresh page")
    parser.add_argument("--workers", type=int, default=2, help="scripts run in parallel (default 2)")
    args = parser.parse_args(argv)

    page, helps = generate(REPO_ROOT, args.workers)
    failed = [h.script for top in helps for h in [top, *top.subcommands] if not h.ok]
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
        if current != page:
            print(f"{args.out} is out of date; run: python scripts/maintainer/gen_cli_docs.py", file=sys.stderr)
            return 1
        print(f"{args.out} is up to date ({len(helps)} entry points)")
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(page, encoding="utf-8")
        print(f"wrote {args.out} ({len(helps)} entry points)")
    if failed:
        print("--help failed for: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
