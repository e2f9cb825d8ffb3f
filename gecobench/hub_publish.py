"""Publish the whole hub — datasets, metric Spaces, zoo models, results and requests stores, the leaderboard
Space — as Hugging Face Hub repositories, or write every repository folder locally (a dry run, no network).

Repositories under ``ORG`` (the names :func:`plan_repositories` uses):

========================== ======= =====================================================================
``ORG/geco``               dataset the four GECO configs as parquet + card (``load_dataset("ORG/geco", "binary_all")``)
``ORG/spanish-templates``  dataset the Spanish templates and lexicons as parquet + card
``ORG/<metric>``           space   one ``evaluate`` metric module each (``evaluate.load("ORG/mass_accuracy")``)
``ORG/gecobench-<regime>-<config>-seed<seed>`` model one per zoo checkpoint, its card as README
``ORG/gecobench-results``  dataset the results store the leaderboard reads
``ORG/gecobench-reference`` dataset the reference results (``make reference``'s ``reference/store``), read-only
``ORG/gecobench-requests`` dataset the submissions' request queue
``ORG/gecobench-leaderboard`` space the Gradio leaderboard; the three stores are Space variables
========================== ======= =====================================================================

The Spaces install the package from :func:`package_requirement`: by default the wheel built from this checkout,
uploaded with the leaderboard Space (``wheels/``) and named by its ``resolve/main`` URL, because a Space installs
``requirements.txt`` before its own files are present; ``package_source`` (a tagged git URL, say) replaces it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gecobench.domain import MODEL_INFO_FILE

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE_NAME = "gecobench-hub"
PARTS: tuple[str, ...] = ("geco", "spanish", "metrics", "models", "results", "reference", "requests", "space")
LEADERBOARD_SPACE = "gecobench-leaderboard"
RESULTS_DATASET = "gecobench-results"
REFERENCE_DATASET = "gecobench-reference"
# gecobench.reference.REFERENCE_STORE and ZOO_SUMMARY, spelled out: importing that module loads torch
DEFAULT_REFERENCE_STORE = REPO_ROOT / "reference" / "store"
ZOO_SUMMARY_NAME = "zoo_summary.json"  # beside the store, written by ``make reference`` with it
REQUESTS_DATASET = "gecobench-requests"
# what the Hub needs in a Space's README front matter to build it
SPACE_REQUIRED_FIELDS: tuple[str, ...] = ("title", "sdk", "app_file")
# the outputs and caches a source copy for the wheel leaves out
_NOT_IN_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", "results",
    "requests", "runs", "artifacts", ".cache", "site", "exports", "metric_modules",
)


@dataclass
class HubRepository:
    """One repository to publish: its id and type, the local folder with its files, and Space variables."""

    repo_id: str
    repo_type: str  # "dataset", "model" or "space"
    folder: Path
    space_variables: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        prefix = {"dataset": "datasets/", "space": "spaces/", "model": ""}[self.repo_type]
        return f"https://huggingface.co/{prefix}{self.repo_id}"


def check_org(org: str) -> str:
    """``org`` if it is a valid Hub namespace; a ValueError names what is wrong."""
    if not re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?", org or "") or "--" in org or ".." in org:
        raise ValueError(f"--org must be a Hub user or organisation name (letters, digits, '-', '_', '.'), got {org!r}")
    return org


def split_front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
    """The YAML front matter of a README as a dict, and the body after it; errors name ``where``."""
    if not text.startswith("---\n"):
        raise ValueError(f"{where}: no YAML front matter (the file must start with '---')")
    end = text.find("\n---", 4)
    if end < 0:
        raise ValueError(f"{where}: the front matter has no closing '---'")
    meta = yaml.safe_load(text[4:end]) or {}
    if not isinstance(meta, dict):
        raise ValueError(f"{where}: the front matter is not a mapping")
    return meta, text[end + 4 :].lstrip("\n")


def join_front_matter(meta: dict[str, Any], body: str) -> str:
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n\n" + body


def _link_or_copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        if target.samefile(source):
            return  # a dry run repeated into the same folder: the link of the last one is already there
        # never write through an old hard link: that would change the file it shares with its source
        target.unlink()
    try:
        os.link(source, target)  # checkpoints are large: a hard link costs nothing in a dry run
    except OSError:
        shutil.copy2(source, target)


def build_wheel(out_dir: Path, source: Path = REPO_ROOT) -> Path:
    """Build the package's wheel from a copy of ``source`` (nothing is written into the checkout)."""
    tree = out_dir / "source"
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(source, tree, ignore=_NOT_IN_SOURCE)
    dist = out_dir / "dist"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", str(dist), str(tree)], capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"building the wheel failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    wheels = sorted(dist.glob("gecobench_hub-*.whl"))
    if not wheels:
        raise RuntimeError(f"pip wheel wrote no gecobench_hub wheel into {dist}")
    shutil.rmtree(tree)
    return wheels[-1]


def package_requirement(org: str, wheel_name: str | None, package_source: str | None) -> str:
    """The requirements line that installs the package on a Space."""
    if package_source:
        return package_source if package_source.startswith(PACKAGE_NAME) else f"{PACKAGE_NAME} @ {package_source}"
    if not wheel_name:
        raise ValueError("no package source: build the wheel or pass --package-source")
    return f"{PACKAGE_NAME} @ https://huggingface.co/spaces/{org}/{LEADERBOARD_SPACE}/resolve/main/wheels/{wheel_name}"


def with_package_line(requirements: str, requirement: str) -> str:
    """``requirements`` with its bare ``gecobench-hub`` line replaced by ``requirement`` (comments kept)."""
    lines = requirements.splitlines()
    replaced = [requirement if line.strip() == PACKAGE_NAME else line for line in lines]
    if replaced == lines:
        raise ValueError(f"the requirements name no bare '{PACKAGE_NAME}' line to pin:\n{requirements}")
    return "\n".join(replaced) + "\n"


def write_metric_space(module_dir: Path, out: Path, requirement: str) -> Path:
    """A metric module's Space folder: the module, its card (Space front matter), app.py, pinned requirements."""
    name = module_dir.name
    out.mkdir(parents=True, exist_ok=True)
    for file in (f"{name}.py", "app.py"):
        shutil.copyfile(module_dir / file, out / file)
    meta, body = split_front_matter((module_dir / "README.md").read_text(encoding="utf-8"), str(module_dir / "README.md"))
    meta.setdefault("title", name)
    meta.update({"sdk": "gradio", "app_file": "app.py"})
    (out / "README.md").write_text(join_front_matter(meta, body), encoding="utf-8")
    (out / "requirements.txt").write_text(
        with_package_line((module_dir / "requirements.txt").read_text(encoding="utf-8"), requirement), encoding="utf-8"
    )
    return out


def write_store_dataset(out: Path, title: str, description: str, source: Path | None) -> Path:
    """A store dataset folder (``explainer_score/*.json`` …, the ``sentence_scores/`` side files the Space's
    drill-down fetches, or empty) with a card."""
    from gecobench.evaluation.sentence_scores import SIDE_FOLDER, SIDE_SUFFIX
    from gecobench.store import PARTS_FILE, LocalStore

    out.mkdir(parents=True, exist_ok=True)
    n = 0
    if source is not None and source.is_dir():
        # a store made of parts (the reference's promoted seeds) is published as one flat store
        for folder in LocalStore(source).folders():
            for path in sorted(folder.rglob("*.json")):
                if not path.name.startswith(".") and not (path.parent == folder and path.name == PARTS_FILE):
                    _link_or_copy(path, out / path.relative_to(folder))
                    n += 1
            for path in sorted((folder / SIDE_FOLDER).glob(f"*{SIDE_SUFFIX}")):
                if not path.name.startswith("."):
                    _link_or_copy(path, out / SIDE_FOLDER / path.name)
    meta = {"pretty_name": title, "license": "bsd-3-clause", "tags": ["gecobench", "leaderboard"]}
    body = f"# {title}\n\n{description}\n\n{n} document(s) at publication. Written by GECOBench Hub; append-only.\n"
    (out / "README.md").write_text(join_front_matter(meta, body), encoding="utf-8")
    return out


def read_reference_store(store: Path) -> list[dict[str, Any]]:
    """The validated documents of the reference store; a ValueError says why it cannot be published: the folder
    is missing, holds no explainer record (``make reference`` has not run), or holds records that fail
    validation (a published reference is read back as a whole, so none may be skipped)."""
    from gecobench.store import LocalStore

    hint = "run `make reference` first, or leave the 'reference' part out (--only …)"
    if not store.is_dir():
        raise ValueError(f"the reference store {store} does not exist: {hint}")
    report = LocalStore(store).read_all()
    if report.warnings:
        shown = "\n  ".join(report.warnings[:5])
        more = f"\n  … and {len(report.warnings) - 5} more" if len(report.warnings) > 5 else ""
        raise ValueError(f"the reference store {store} holds {len(report.warnings)} document(s) that do not "
                         f"validate; fix or remove them before publishing:\n  {shown}{more}")
    if not any(d.get("record_type") == "explainer_score" for d in report.documents):
        raise ValueError(f"the reference store {store} holds no explainer records: {hint}")
    return report.documents


def _distinct(values: Any) -> list[str]:
    return sorted({str(v) for v in values if v not in (None, "")})


def reference_card(records: Sequence[dict[str, Any]], zoo_summary: list[dict[str, Any]] | None,
                   bundles: Sequence[str] = ()) -> str:
    """The body of the reference dataset's card: what the grid holds, which package version and commit made it
    (from the records' provenance, not from this checkout), the base model, the protocol, how to rebuild it."""
    explainer_records = [r for r in records if r.get("record_type") == "explainer_score"]

    def listed(values: list[str]) -> str:
        return ", ".join(f"`{v}`" for v in values) or "not recorded"

    def field_of(section: str, key: str) -> list[str]:
        return _distinct((r.get(section) or {}).get(key) for r in explainer_records)

    def protocol_value(key: str) -> list[str]:
        return field_of("protocol", key)

    per_filter = Counter(str((r.get("protocol") or {}).get("filter") or "not recorded") for r in explainer_records)
    filter_counts = "; ".join(f"filter `{f}`: {n}" for f, n in sorted(per_filter.items()))
    explainers = listed(_distinct((r.get("explainer") or {}).get("name") for r in explainer_records))
    lines = [
        ("The **reference results** of GECOBench Hub: the package's own evaluation of its built-in explainers on "
         "its model zoo, every test sentence of each GECO config. The leaderboard Space opens on them (its Space "
         "variable `GECOBENCH_REFERENCE_REPO` names this repository) and reads them only; submissions go to the "
         "results store, never here."),
        "",
        "## The grid",
        "",
        (f"* explainer records: {len(explainer_records)} ({filter_counts} — records of different correctness "
         "filters are never ranked together)"),
        f"* GECO configs: {listed(field_of('dataset', 'config'))}",
        f"* training regimes: {listed(field_of('model', 'regime'))}; seeds: {listed(field_of('model', 'seed'))}",
        f"* explainers: {explainers}",
        f"* base model: {listed(field_of('model', 'base_model'))} (revision {listed(field_of('model', 'base_revision'))})",
        "",
        "## Provenance",
        "",
        f"* package: `gecobench-hub` {listed(field_of('provenance', 'package_version'))}",
        f"* git commit: {listed(field_of('provenance', 'git_commit'))}",
        (f"* GECO split: {listed(protocol_value('split'))}; bootstrap resamples: "
         f"{listed(protocol_value('bootstrap_resamples'))}; interval level: {listed(protocol_value('ci_level'))}"),
        ("* each record's `protocol` holds the rest (target, filter, faithfulness and Co-12 settings) and every "
         "metric carries its bootstrap interval (`ci_low`, `ci_high`)"),
        "",
        "## How it was produced",
        "",
        ("`make reference` (`scripts/reference.py`, the plan in `gecobench/reference.py`) trains the zoo and "
         "evaluates every explainer on it, writing this store (`reference/store` in the repository) and the zoo's "
         "summary. Every stage resumes; rerunning it at the commit above rebuilds these records."),
        "",
        "## Files",
        "",
        "* `explainer_score/<record_id>.json` — one validated record per (explainer, model, config, filter, seed)",
        "* `sentence_scores/<record_id>.json.gz` — per-sentence scores behind the Space's drill-down (where made)",
    ]
    if zoo_summary is not None:
        trained = _distinct(f"{row.get('config')}/{row.get('regime')}/seed{row.get('seed')}" for row in zoo_summary)
        lines.append(f"* `{ZOO_SUMMARY_NAME}` — the zoo: {len(trained)} checkpoint(s) with test accuracy, schedule, "
                     "base model and revision, package version and commit (the weights are not published here)")
    else:
        lines.append(f"* no `{ZOO_SUMMARY_NAME}`: it was missing beside the store at publication")
    if bundles:
        lines.append(f"* `zero_shot_attributions/` — {len(bundles)} bundle(s) of the zero-shot models' attributions "
                     "(every explainer, every scorable test sentence): the RMA reference, read instead of computed "
                     "by `scripts/evaluate_explainers.py --reference-attributions <this dataset>` when the zero-shot "
                     "checkpoint, data and protocol match")
    return "\n".join(lines)


def write_reference_dataset(out: Path, store: Path, progress: Callable[[str], None] = lambda message: None,
                            records: Sequence[dict[str, Any]] | None = None) -> Path:
    """The reference dataset folder: the validated store (records and side files), ``zoo_summary.json`` from
    beside the store, and a card that says what the grid is and where it came from. ``records``: the store's
    documents when :func:`read_reference_store` has already read them."""
    records = read_reference_store(store) if records is None else records
    summary_path = store.parent / ZOO_SUMMARY_NAME
    zoo_summary = None
    if summary_path.is_file():
        zoo_summary = json.loads(summary_path.read_text(encoding="utf-8"))
        if not isinstance(zoo_summary, list) or not all(isinstance(row, dict) for row in zoo_summary):
            raise ValueError(f"{summary_path} must be a JSON list of checkpoint rows (objects), as make reference "
                             "writes it")
    else:
        progress(f"no {summary_path}: the reference dataset is published without the zoo summary")
    from gecobench.evaluation.published_reference import (
        BUNDLE_FOLDER,
        dataset_bundles,
        read_bundle,
    )

    bundles = dataset_bundles(store.parent)
    for bundle in bundles:
        read_bundle(bundle)  # a bundle that does not validate stops the publication, naming the file
    folder = write_store_dataset(out, "GECOBench reference results",
                                 reference_card(records, zoo_summary, [b.name for b in bundles]), store)
    if zoo_summary is not None:
        shutil.copyfile(summary_path, folder / ZOO_SUMMARY_NAME)
    if bundles:
        (folder / BUNDLE_FOLDER).mkdir(exist_ok=True)
        for bundle in bundles:
            shutil.copyfile(bundle, folder / BUNDLE_FOLDER / bundle.name)
    return folder


def write_leaderboard_space(out: Path, org: str, requirement: str, wheel: Path | None) -> HubRepository:
    """The leaderboard Space folder: the app, its card, pinned requirements, the wheel; stores as variables."""
    source = REPO_ROOT / "leaderboard_space"
    out.mkdir(parents=True, exist_ok=True)
    # every module of leaderboard_space/ is one the Space runs (the test and maintainer helpers live in tests/ and
    # scripts/maintainer/, tests/test_packaging.py checks it)
    for path in sorted(source.glob("*.py")):
        shutil.copyfile(path, out / path.name)
    meta, body = split_front_matter((source / "README.md").read_text(encoding="utf-8"), str(source / "README.md"))
    meta.update({"sdk": "gradio", "app_file": "app.py"})
    meta["datasets"] = [f"{org}/geco", f"{org}/{REFERENCE_DATASET}", f"{org}/{RESULTS_DATASET}",
                        f"{org}/{REQUESTS_DATASET}"]
    (out / "README.md").write_text(join_front_matter(meta, body), encoding="utf-8")
    requirements = (source / "requirements.txt").read_text(encoding="utf-8")
    (out / "requirements.txt").write_text(with_package_line(requirements, requirement), encoding="utf-8")
    if wheel is not None:
        (out / "wheels").mkdir(exist_ok=True)
        shutil.copyfile(wheel, out / "wheels" / wheel.name)
    # the names leaderboard_space/hub_config.py reads (not imported: the Space's modules need gradio)
    variables = {
        "GECOBENCH_REFERENCE_REPO": f"{org}/{REFERENCE_DATASET}",
        "GECOBENCH_RESULTS_REPO": f"{org}/{RESULTS_DATASET}",
        "GECOBENCH_REQUESTS_REPO": f"{org}/{REQUESTS_DATASET}",
    }
    return HubRepository(f"{org}/{LEADERBOARD_SPACE}", "space", out, variables)


def zoo_checkpoints(zoo: Path | None) -> list[Path]:
    """Checkpoint folders (holding ``gecobench_model.json``) under ``zoo``, sorted."""
    if zoo is None or not zoo.is_dir():
        return []
    return sorted(p.parent for p in zoo.rglob(MODEL_INFO_FILE))


def model_repo_name(info: dict[str, Any]) -> str:
    return f"gecobench-{info['regime']}-{info['geco_config']}-seed{info['seed']}"


def plan_repositories(
    org: str,
    out_dir: Path,
    parts: Sequence[str] = PARTS,
    zoo: Path | None = None,
    results: Path | None = None,
    package_source: str | None = None,
    geco_dir: str | None = None,
    spanish_dir: str | None = None,
    progress: Callable[[str], None] = lambda message: None,
    reference: Path | None = None,
) -> list[HubRepository]:
    """Write the folder of every repository to publish under ``out_dir/<kind>/<name>`` and return them.

    ``reference``: the reference store to publish (default the repository's ``reference/store``); the
    ``reference`` part stops with a ValueError when it is missing, empty or holds invalid records."""
    check_org(org)
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise ValueError(f"unknown part(s) {unknown}; expected some of {list(PARTS)}")
    reference_store = reference if reference is not None else DEFAULT_REFERENCE_STORE
    # checked before the slow parts (the wheel, GECO's export): an unpublishable reference stops at once
    reference_records = read_reference_store(reference_store) if "reference" in parts else None
    out_dir.mkdir(parents=True, exist_ok=True)
    repos: list[HubRepository] = []
    wheel = None
    needs_package = {"metrics", "space"} & set(parts)
    if needs_package and not package_source:
        progress("building the wheel")
        wheel = build_wheel(out_dir / "_wheel")
    requirement = package_requirement(org, wheel.name if wheel else None, package_source) if needs_package else ""
    # the exporters are imported when used: the Space imports this module (its texts) and should not load `datasets`
    if "geco" in parts:
        from geco_dataset.export import export_geco

        progress("exporting GECO")
        repos.append(HubRepository(f"{org}/geco", "dataset",
                                   export_geco(out_dir / "datasets" / "geco", data_dir=geco_dir, overwrite=True)))
    if "spanish" in parts:
        from geco_dataset.export import export_spanish_templates

        progress("exporting the Spanish templates")
        folder = export_spanish_templates(out_dir / "datasets" / "spanish-templates", data_dir=spanish_dir, overwrite=True)
        repos.append(HubRepository(f"{org}/spanish-templates", "dataset", folder))
    if "metrics" in parts:
        from gecobench.metrics import available_modules, module_path

        for name in available_modules():
            progress(f"metric Space {name}")
            folder = write_metric_space(Path(module_path(name)), out_dir / "spaces" / name, requirement)
            repos.append(HubRepository(f"{org}/{name}", "space", folder))
    if "models" in parts:
        # imported here: the model loader pulls in transformers, needed only when models are published
        from gecobench.models.loading import read_model_info

        for checkpoint in zoo_checkpoints(zoo):
            info = read_model_info(checkpoint)
            if not (checkpoint / "README.md").is_file():
                raise FileNotFoundError(f"{checkpoint} has no README.md model card; write it with write_model_card")
            name = model_repo_name(info)
            progress(f"model {name}")
            target = out_dir / "models" / name
            for path in sorted(p for p in checkpoint.rglob("*") if p.is_file()):
                _link_or_copy(path, target / path.relative_to(checkpoint))
            repos.append(HubRepository(f"{org}/{name}", "model", target))
    if "results" in parts:
        folder = write_store_dataset(out_dir / "datasets" / RESULTS_DATASET, "GECOBench results",
                                     "Validated records (`explainer_score/`, `model_bias/`) the leaderboard shows.",
                                     results)
        repos.append(HubRepository(f"{org}/{RESULTS_DATASET}", "dataset", folder))
    if "reference" in parts:
        progress("reference results")
        folder = write_reference_dataset(out_dir / "datasets" / REFERENCE_DATASET, reference_store, progress,
                                         reference_records)
        repos.append(HubRepository(f"{org}/{REFERENCE_DATASET}", "dataset", folder))
    if "requests" in parts:
        folder = write_store_dataset(out_dir / "datasets" / REQUESTS_DATASET, "GECOBench submission requests",
                                     "The queue of submitted explainers the leaderboard Space writes to.", None)
        repos.append(HubRepository(f"{org}/{REQUESTS_DATASET}", "dataset", folder))
    if "space" in parts:
        progress("leaderboard Space")
        repos.append(write_leaderboard_space(out_dir / "spaces" / LEADERBOARD_SPACE, org, requirement, wheel))
    if wheel is not None:
        shutil.rmtree(out_dir / "_wheel", ignore_errors=True)
    manifest = [
        {"repo_id": r.repo_id, "repo_type": r.repo_type, "folder": str(r.folder.relative_to(out_dir)),
         "url": r.url, "space_variables": r.space_variables}
        for r in repos
    ]
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return repos


def upload_repositories(repos: Sequence[HubRepository], token: str | None = None, private: bool = False,
                        api: Any = None, progress: Callable[[str], None] = lambda message: None) -> list[str]:
    """Create each repository (if needed), upload its folder and set its Space variables; return the URLs."""
    token = token or os.environ.get("HF_TOKEN")
    if not token:
        raise ValueError("publishing needs a token with write access: pass --token or set HF_TOKEN")
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    urls = []
    for repo in repos:
        progress(f"uploading {repo.url}")
        kwargs = {"space_sdk": "gradio"} if repo.repo_type == "space" else {}
        api.create_repo(repo.repo_id, repo_type=repo.repo_type, private=private, exist_ok=True, **kwargs)
        api.upload_folder(repo_id=repo.repo_id, repo_type=repo.repo_type, folder_path=str(repo.folder),
                          commit_message="Publish with GECOBench Hub scripts/publish_hub.py")
        for key, value in repo.space_variables.items():
            api.add_space_variable(repo.repo_id, key, value)
        urls.append(repo.url)
    return urls
