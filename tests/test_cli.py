"""The ``gecobench`` command: every subcommand's ``--help`` and examples, the shims in ``scripts/``, and the jobs
whose output users read (``submit status`` scores, ``spanish score`` BPI/BRI, the short errors)."""

from __future__ import annotations

import ast
import io
import json
import re
import shlex
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from importlib.metadata import EntryPoint, EntryPoints, PackageNotFoundError, entry_points
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from gecobench import cli
from gecobench.cli import Command, command_names, command_tree, main, module_of


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``gecobench argv`` in-process: (exit status, stdout, stderr); argparse's exits become the status."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    return status, out.getvalue(), err.getvalue()


def _module(name: str):
    import importlib

    return importlib.import_module(module_of(name.split()))


# ------------------------------------------------------------------------------------------- the command tree

def test_the_command_tree_has_one_subcommand_per_user_job() -> None:
    # in the order a user meets the jobs; submit, queue and space are registered by the packages above the core
    wanted = ["demo", "train", "zoo", "evaluate", "leaderboard", "submit", "queue", "space", "controls", "spanish",
              "export", "publish", "reference", "compare", "build-geco"]
    assert list(command_tree()) == wanted
    status, out, err = run_cli(["--help"])
    assert status == 0 and err == ""
    assert [line.split()[0] for line in out.split("commands:\n")[1].split("\n\n")[0].splitlines()
            if line.startswith("  ") and not line.startswith("    ")] == wanted
    for name, entry in command_tree().items():
        assert re.search(rf"^  {re.escape(name)}\s", out, re.MULTILINE), name
        for sub in ([] if isinstance(entry, Command) else entry):
            assert f"{sub}: " in out, (name, sub)


def test_the_upper_layers_register_their_jobs_through_entry_points() -> None:
    """gecobench.cli names no package above the core: submit and queue come from submissions', space from
    leaderboard_space's ``gecobench.commands`` entry points (setup.cfg), loaded without importing the jobs."""
    registered = {e.name: e.value for e in entry_points(group=cli.COMMAND_GROUP)}
    assert registered == {"submit": "submissions.cli:SUBMIT", "queue": "submissions.cli:QUEUE",
                          "space": "leaderboard_space:SPACE"}
    assert {name: module_of([name]) for name in registered} == {
        "submit": "submissions.cli.submit", "queue": "submissions.cli.queue", "space": "leaderboard_space.app"}
    assert set(registered).isdisjoint(cli.CORE_COMMANDS)
    assert all(isinstance(c, dict) or c.module.startswith("gecobench.cli.") for c in cli.CORE_COMMANDS.values())
    assert cli.command_list().problems == ()


def test_help_lists_every_command_without_loading_a_job_or_torch() -> None:
    probe = ("import io, json, sys, contextlib\nfrom gecobench.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as out:\n    main(['--help'])\n"
             "print(json.dumps([out.getvalue(), sorted(sys.modules)]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True,
                          cwd=REPO_ROOT)
    text, modules = json.loads(done.stdout)
    assert done.stderr == "" and all(f"  {name} " in text for name in ("submit", "queue", "space"))
    heavy = {"torch", "transformers", "gradio", "numpy", "jsonschema", "datasets"}
    assert not heavy & {m.split(".")[0] for m in modules}, sorted(heavy & {m.split(".")[0] for m in modules})
    jobs = {module_of(name.split()) for name in command_names()}
    assert not jobs & set(modules), sorted(jobs & set(modules))


class _Metadata:
    """A stand-in for :mod:`importlib.metadata` as :mod:`gecobench.cli` uses it: the distribution, or none."""

    PackageNotFoundError = PackageNotFoundError

    def __init__(self, entries: list[tuple[str, str]] | None) -> None:
        self.entries = None if entries is None else EntryPoints(
            EntryPoint(name, value, cli.COMMAND_GROUP) for name, value in entries)

    def distribution(self, name: str):
        if self.entries is None:
            raise self.PackageNotFoundError(name)
        return type("Distribution", (), {"entry_points": self.entries})()

    def entry_points(self, group: str):
        return [] if self.entries is None else self.entries.select(group=group)


@pytest.fixture
def fake_metadata(monkeypatch):
    """Install a stand-in metadata (``fake_metadata(entries)``; None: the distribution is not installed)."""
    def install(entries: list[tuple[str, str]] | None) -> None:
        monkeypatch.setattr(cli, "metadata", _Metadata(entries))
        cli.command_list.cache_clear()

    yield install
    cli.command_list.cache_clear()


def test_without_package_metadata_the_missing_commands_are_named_not_silent(fake_metadata) -> None:
    fake_metadata(None)
    status, out, err = run_cli(["--help"])
    assert status == 0 and "  evaluate " in out and "  submit " not in out
    assert "gecobench-hub distribution is not installed" in err and "pip install -e ." in err
    status, _, err = run_cli(["submit", "status"])
    assert status == 2 and "unknown command 'submit'" in err and "not installed" in err
    fake_metadata([])  # installed before the registry existed
    status, _, err = run_cli(["queue"])
    assert status == 2 and "registers no `gecobench.commands` entry points" in err and "install it again" in err


def test_a_broken_registration_is_named_and_the_others_still_run(fake_metadata) -> None:
    fake_metadata([("submit", "submissions.cli:SUBMIT"), ("ghost", "no_such_package_here:COMMAND"),
                   ("odd", "gecobench.cli:PROG"), ("demo", "submissions.cli:QUEUE")])
    assert list(command_tree()) == [*list(cli.CORE_COMMANDS)[:5], "submit", *list(cli.CORE_COMMANDS)[5:]]
    problems = "\n".join(cli.command_list().problems)
    assert "'ghost' (no_such_package_here:COMMAND) cannot be loaded: ModuleNotFoundError" in problems
    assert "odd = gecobench.cli:PROG is a str, not a gecobench.cli.Command" in problems
    assert "`gecobench demo` is already a command" in problems
    status, out, _ = run_cli(["submit", "--help"])
    assert status == 0 and out.startswith("usage: gecobench submit")


def test_registered_commands_go_after_the_one_they_name() -> None:
    core = {"a": Command("m.a", "A"), "b": Command("m.b", "B")}
    registered = {"z": Command("m.z", "Z", after="y"), "y": Command("m.y", "Y", after="a"),
                  "x": Command("m.x", "X"), "w": Command("m.w", "W", after="nowhere"),
                  "v": Command("m.v", "V", after="a")}
    assert list(cli.ordered_tree(core, registered)) == ["a", "v", "y", "z", "b", "w", "x"]
    with pytest.raises(ValueError, match="module path and a one-line summary"):
        Command("", "no module")


@pytest.mark.parametrize("name", command_names())
def test_every_subcommand_has_help_whose_examples_parse(name: str) -> None:
    status, out, err = run_cli([*name.split(), "--help"])
    assert status == 0, err
    assert out.startswith(f"usage: gecobench {name}"), out[:200]
    parser = _module(name).build_parser()
    # every example of the help that is a plain `gecobench <name> …` command (continuation lines joined) names
    # only options the parser knows, with the values it accepts
    for example in help_examples(out, name):
        words = shlex.split(example, comments=True)[len(name.split()) + 1:]
        for index, word in enumerate(words):  # the shell's redirections and pipes are not the command's
            if word in (">", ">>", "|", "&&", ";", "2>&1"):
                words = words[:index]
                break
        with redirect_stderr(io.StringIO()) as complaint:
            try:
                parser.parse_args(words)
            except SystemExit:
                pytest.fail(f"example `{example}` of `gecobench {name} --help` does not parse: {complaint.getvalue()}")


def help_examples(text: str, name: str) -> list[str]:
    """The ``gecobench <name> …`` commands of a help text, with backslash continuations joined; commands with an
    ellipsis (``...``) are sketches, not examples, and are left out."""
    lines = text.splitlines()
    examples = []
    for index, line in enumerate(lines):
        if not line.strip().startswith(f"gecobench {name} ") and line.strip() != f"gecobench {name}":
            continue
        command = line.strip()
        while command.endswith("\\") and index + 1 < len(lines):
            index += 1
            command = command[:-1].rstrip() + " " + lines[index].strip()
        if "..." not in command:
            examples.append(command)
    return examples


def test_unknown_commands_are_refused_with_a_suggestion() -> None:
    status, _, err = run_cli(["evalute"])
    assert status == 2 and "unknown command 'evalute'" in err and "gecobench evaluate" in err
    status, _, err = run_cli(["export", "result"])
    assert status == 2 and "gecobench export results" in err
    status, _, err = run_cli([])
    assert status == 2 and "usage: gecobench" in err
    status, out, _ = run_cli(["export", "--help"])
    assert status == 0 and "datasets" in out and "results" in out


def test_python_dash_m_gecobench_is_the_command() -> None:
    done = subprocess.run([sys.executable, "-m", "gecobench", "--version"], capture_output=True, text=True,
                          timeout=120, check=False, cwd=REPO_ROOT)
    from gecobench import __version__

    assert done.returncode == 0 and done.stdout.strip() == f"gecobench-hub {__version__}", done.stderr


def test_scripts_are_shims_onto_the_command_modules_and_nothing_edits_sys_path() -> None:
    modules = {module_of(name.split()) for name in command_names()}
    shims = sorted((REPO_ROOT / "scripts").glob("*.py"))
    assert shims
    for shim in shims:
        tree = ast.parse(shim.read_text(encoding="utf-8"))
        imports = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        assert len(imports) == 1 and imports[0] in modules, (shim.name, imports)
    for path in [*(REPO_ROOT / "scripts").rglob("*.py"), *(REPO_ROOT / "gecobench").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"sys\.path\.(insert|append)", text), f"{path.relative_to(REPO_ROOT)} edits sys.path"


# ------------------------------------------------------------------------------------------- submit status

def _finished_request(tmp_path: Path) -> tuple[Path, Path, dict]:
    """A requests store holding one FINISHED request whose result is a (committed reference) record."""
    from submissions.requests import RequestStore
    from submissions.submit import submit_file

    record_file = min((REPO_ROOT / "reference" / "store" / "explainer_score").glob("*.json"))
    record = json.loads(record_file.read_text(encoding="utf-8"))
    results = tmp_path / "results"
    (results / "explainer_score").mkdir(parents=True)
    shutil.copyfile(record_file, results / "explainer_score" / record_file.name)
    requests = tmp_path / "requests"
    store = RequestStore(requests)
    code = tmp_path / "x_explainer.py"
    code.write_text("class X:\n    name = 'x_explainer'\n    def explain(self, model, tokenizer, words, targets):\n"
                    "        return []\n", encoding="utf-8")
    view = submit_file(store, "code", {"name": "x_explainer", "version": "1.0.0", "authors": "A",
                                       "description": "d", "license": "MIT", "contact": "a@b"}, code)
    store.transition(view.request_id, "RUNNING")
    store.transition(view.request_id, "FINISHED", result_record_ids=[record["record_id"]])
    return requests, results, record


def test_submit_status_shows_each_finished_requests_mass_accuracy(tmp_path: Path) -> None:
    from gecobench.formatting import format_interval

    requests, results, record = _finished_request(tmp_path)
    ma = record["metrics"]["mass_accuracy"]
    status, out, err = run_cli(["submit", "status", "--requests", str(requests), "--results", str(results)])
    assert status == 0, err
    assert "FINISHED" in out and "x_explainer 1.0.0" in out
    assert f"MA {format_interval(ma['value'], ma['ci_low'], ma['ci_high'])}" in out
    assert record["model"]["name"] in out and record["dataset"]["config"] in out

    status, out, _ = run_cli(["submit", "--requests", str(requests), "status", "--results", str(results), "--json"])
    (row,) = json.loads(out)
    (score,) = row["scores"]
    assert (score["mass_accuracy"], score["ci_low"], score["ci_high"]) == (ma["value"], ma["ci_low"], ma["ci_high"])

    # a results store without the record says where it looked instead of showing nothing
    (tmp_path / "empty").mkdir()
    status, out, _ = run_cli(["submit", "status", "--requests", str(requests), "--results", str(tmp_path / "empty")])
    assert status == 0 and "not in" in out and "--results" in out


def test_submit_example_writes_the_packaged_example_submission(tmp_path: Path) -> None:
    out_file = tmp_path / "mine.py"
    status, out, _ = run_cli(["submit", "example", str(out_file)])
    assert status == 0 and "gecobench submit code" in out
    shipped = (REPO_ROOT / "submissions" / "examples" / "gradient_norm_explainer.py").read_text(encoding="utf-8")
    assert out_file.read_text(encoding="utf-8") == shipped


# ------------------------------------------------------------------------------------------- spanish

def test_spanish_score_names_a_missing_local_model_folder(tmp_path: Path) -> None:
    missing = tmp_path / "my_checkpoint"
    for given in (str(missing), "./no/such/checkpoint"):
        status, out, err = run_cli(["spanish", "score", "--model", given])
        assert status == 2 and "no such local folder" in err and "Hub" not in err.split(";")[0], err
        assert out == ""


def test_spanish_score_prints_bpi_and_bri_with_intervals(tmp_path: Path, spanish_dir: Path) -> None:
    from spanish_helpers import make_tiny_bert_mlm

    from gecobench.formatting import format_interval
    from gecobench.store import LocalStore

    model = make_tiny_bert_mlm(tmp_path / "mlm")
    status, out, err = run_cli(["spanish", "score", "--model", str(model), "--model-id", "tiny/bert",
                                "--data-dir", str(spanish_dir), "--tagger", "cess", "--store", str(tmp_path / "s"),
                                "--cpu", "--no-progress", "--bootstrap-resamples", "50"])
    assert status == 0, err
    (record,) = LocalStore(tmp_path / "s").read_all("model_bias").documents
    for scheme, result in record["schemes"].items():
        overall = result["uncertainty"]["overall"]
        expected = format_interval(result["overall"]["bpi"], overall["bpi"]["ci_low"], overall["bpi"]["ci_high"],
                                   digits=2, signed=True)
        assert f"{scheme}: overall BPI {expected}" in out, (scheme, out)
        assert "BRI" in out
    assert "95% interval over templates" in out and "added" in out


# ------------------------------------------------------------------------------------------- user-facing errors

def test_load_geco_downloads_only_the_split_asked_for(monkeypatch, tmp_path: Path, shared_data: Path) -> None:
    from geco_dataset import geco

    fetched = []

    def fake_download(dl_manager, config: str, splits: tuple[str, ...]) -> dict[str, str]:
        fetched.extend((config, split) for split in splits)
        return {split: str(shared_data / "geco" / geco.geco_file_key(config, split)) for split in splits}

    monkeypatch.setattr(geco, "default_geco_dir", lambda: None)
    monkeypatch.setattr(geco, "_download_geco_files", fake_download)
    rows = geco.load_geco("binary_all", "test", cache_dir=tmp_path / "cache")
    assert fetched == [("binary_all", "test")] and len(rows) == 644


def test_load_geco_offline_names_the_file_and_both_ways_to_give_local_files(monkeypatch, tmp_path: Path) -> None:
    from geco_dataset import geco

    monkeypatch.setattr(geco, "default_geco_dir", lambda: None)
    monkeypatch.setenv("GECOBENCH_RAW_BASE_URL", "http://127.0.0.1:9")  # nothing listens on the discard port
    with pytest.raises(geco.GecoDownloadError) as caught:
        geco.load_geco("binary_subject", "test", cache_dir=tmp_path / "cache")
    message = str(caught.value)
    key = geco.geco_file_key("binary_subject", "test")
    assert key in message and "train" not in message
    assert "data_dir=" in message and "GECOBENCH_GECO_DIR" in message and "--data-dir" in message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__  # no chained 40-line traceback


def test_the_space_says_where_to_get_the_reference_in_installed_user_terms(tmp_path: Path) -> None:
    from leaderboard_space.sources import USER, chosen_source

    source, note = chosen_source("reference", 0, str(tmp_path / "site-packages" / "reference" / "store"))
    assert source == USER
    assert "--reference" in note and "GECOBENCH_REFERENCE_REPO" in note and "gecobench-reference" in note
    assert "make reference" not in note
    (tmp_path / "empty").mkdir()
    _, note = chosen_source("reference", 0, str(tmp_path / "empty"))
    assert "holds no explainer records" in note and "make reference" not in note


def test_evaluate_refuses_a_missing_explainer_file_in_one_line(tmp_path: Path) -> None:
    status, _, err = run_cli(["evaluate", "--explainers", "saliency", "--models", str(tmp_path),
                              "--import", str(tmp_path / "nope.py")])
    assert status == 2 and "nope.py" in err and "Traceback" not in err
