"""scripts/publish_hub.py --dry-run writes every repository folder offline; the folders are what the Hub needs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gecobench.hub_publish import (
    LEADERBOARD_SPACE,
    PACKAGE_NAME,
    SPACE_REQUIRED_FIELDS,
    split_front_matter,
    with_package_line,
)
from gecobench.metrics import available_modules

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "scripts"))
import publish_hub

GIT_SOURCE = "git+https://github.com/OWNER/REPO@v0.2.1"


def fake_checkpoint(folder: Path, regime: str = "CE", seed: int = 0) -> Path:
    folder.mkdir(parents=True)
    info = {"regime": regime, "base_model": "tiny", "base_revision": "r", "geco_config": "binary_all", "seed": seed,
            "num_labels": 2}
    (folder / "gecobench_model.json").write_text(json.dumps(info))
    (folder / "README.md").write_text("---\nlicense: bsd-3-clause\n---\n\n# card\n")
    (folder / "model.safetensors").write_bytes(b"\0" * 64)
    return folder


def space_meta(folder: Path) -> dict:
    meta, body = split_front_matter((folder / "README.md").read_text(encoding="utf-8"), str(folder))
    for key in SPACE_REQUIRED_FIELDS:
        assert meta.get(key), (folder, key)
    assert meta["sdk"] == "gradio" and (folder / meta["app_file"]).is_file() and body.strip()
    return meta


def test_dry_run_writes_every_space_model_and_store_folder(tmp_path: Path, capsys: pytest.CaptureFixture):
    fake_checkpoint(tmp_path / "zoo" / "binary_all" / "CE" / "seed0")
    (tmp_path / "results" / "explainer_score").mkdir(parents=True)
    (tmp_path / "results" / "explainer_score" / "abc.json").write_text("{}")
    out = tmp_path / "hub"
    code = publish_hub.main(["--org", "test-org", "--dry-run", str(out), "--quiet", "--only", "metrics", "models",
                             "results", "requests", "space", "--zoo", str(tmp_path / "zoo"),
                             "--results", str(tmp_path / "results"), "--package-source", GIT_SOURCE])
    assert code == 0, capsys.readouterr().err
    manifest = {r["repo_id"]: r for r in json.loads((out / "manifest.json").read_text())}
    modules = available_modules()
    assert len(modules) >= 12
    for name in modules:
        entry = manifest[f"test-org/{name}"]
        folder = out / entry["folder"]
        assert entry["repo_type"] == "space" and entry["url"] == f"https://huggingface.co/spaces/test-org/{name}"
        space_meta(folder)
        assert (folder / f"{name}.py").is_file()
        requirements = (folder / "requirements.txt").read_text().splitlines()
        assert f"{PACKAGE_NAME} @ {GIT_SOURCE}" in requirements and PACKAGE_NAME not in requirements
    space = manifest[f"test-org/{LEADERBOARD_SPACE}"]
    meta = space_meta(out / space["folder"])
    assert space["space_variables"] == {"GECOBENCH_REFERENCE_REPO": "test-org/gecobench-reference",
                                        "GECOBENCH_RESULTS_REPO": "test-org/gecobench-results",
                                        "GECOBENCH_REQUESTS_REPO": "test-org/gecobench-requests"}
    assert "test-org/gecobench-results" in meta["datasets"]
    assert f"{PACKAGE_NAME} @ {GIT_SOURCE}" in (out / space["folder"] / "requirements.txt").read_text().splitlines()
    # only what the Space runs: its app and modules, not the test-only figures nor the maintainer helpers
    published = {p.name for p in (out / space["folder"]).glob("*.py")}
    assert {"app.py", "texts.py", "glossary.py"} <= published
    assert not published & {"figures.py", "screenshot.py", "sample_records.py"}, published
    model = manifest["test-org/gecobench-CE-binary_all-seed0"]
    assert model["repo_type"] == "model"
    assert {p.name for p in (out / model["folder"]).iterdir()} == {"gecobench_model.json", "README.md", "model.safetensors"}
    results = out / manifest["test-org/gecobench-results"]["folder"]
    assert (results / "explainer_score" / "abc.json").is_file()
    for store in ("test-org/gecobench-results", "test-org/gecobench-requests"):
        meta, _ = split_front_matter((out / manifest[store]["folder"] / "README.md").read_text(), store)
        assert meta["pretty_name"] and manifest[store]["repo_type"] == "dataset"


def test_bad_arguments_get_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture):
    assert publish_hub.main(["--org", "bad org/x", "--dry-run", str(tmp_path / "o"), "--only", "requests"]) == 2
    assert "--org" in capsys.readouterr().err
    checkpoint = fake_checkpoint(tmp_path / "zoo" / "c")
    (checkpoint / "gecobench_model.json").write_text('{"regime": "CE"}')
    assert publish_hub.main(["--org", "o", "--dry-run", str(tmp_path / "o"), "--only", "models",
                             "--zoo", str(tmp_path / "zoo")]) == 2
    assert "gecobench_model.json lacks the field(s)" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no bare 'gecobench-hub' line"):
        with_package_line("evaluate\n", "gecobench-hub @ x")
    # publishing for real without a token stops before any network call
    assert publish_hub.main(["--org", "o", "--only", "requests", "--quiet"]) == 2
    assert "token" in capsys.readouterr().err


@pytest.mark.slow  # builds the wheel, exports GECO and starts every Space in a fresh environment: minutes
def test_published_folders_start_in_a_fresh_environment_from_their_requirements(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture
):
    import datasets
    from test_packaging import clean_env, fresh_venv

    out = tmp_path / "hub"
    code = publish_hub.main(["--org", "test-org", "--dry-run", str(out), "--quiet", "--only", "geco", "metrics",
                             "space", "--geco-dir", str(shared_data / "geco")])
    assert code == 0, capsys.readouterr().err
    manifest = {r["repo_id"]: r for r in json.loads((out / "manifest.json").read_text())}
    # the dataset repo loads like load_dataset("test-org/geco", "binary_all")
    geco = out / manifest["test-org/geco"]["folder"]
    assert len(datasets.load_dataset(str(geco), "binary_all", split="test", cache_dir=str(tmp_path / "hf"))) == 644
    space = out / manifest[f"test-org/{LEADERBOARD_SPACE}"]["folder"]
    (wheel,) = (space / "wheels").glob("gecobench_hub-*.whl")
    hub_line = f"{PACKAGE_NAME} @ https://huggingface.co/spaces/test-org/{LEADERBOARD_SPACE}/resolve/main/wheels/{wheel.name}"
    python = fresh_venv(tmp_path / "venv")
    env = clean_env(tmp_path)
    folders = [out / manifest[f"test-org/{name}"]["folder"] for name in available_modules()] + [space]
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index"]
    for requirements in sorted({(folder / "requirements.txt").read_text() for folder in folders}):
        lines = [line for line in requirements.splitlines() if line.strip() and not line.startswith("#")]
        assert hub_line in lines  # the URL of the wheel uploaded with the Space
        # every other requirement is satisfied by what the environment sees (the stand-in for PyPI here) ...
        (tmp_path / "others.txt").write_text("\n".join(line for line in lines if line != hub_line) + "\n")
        done = subprocess.run([*pip, "--dry-run", "-r", str(tmp_path / "others.txt")], capture_output=True, text=True,
                              timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        # ... and the package comes from the wheel that URL names (offline: the same file, from the Space folder)
        (tmp_path / "package.txt").write_text(f"{PACKAGE_NAME} @ {wheel.as_uri()}\n")
        done = subprocess.run([*pip, "--no-deps", "--ignore-installed", "-r", str(tmp_path / "package.txt")],
                              capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
    start = (
        "import os, runpy, sys, gradio\n"
        "for folder in sys.argv[1:]:\n"
        "    os.chdir(folder)\n"
        "    sys.path.insert(0, folder)\n"
        "    namespace = runpy.run_path('app.py', run_name='app')\n"
        "    app = namespace.get('demo') or namespace['build_app']()\n"
        "    assert isinstance(app, gradio.Blocks), folder\n"
        "    sys.path.remove(folder)\n"
        "    print('started', folder)\n"
    )
    env["GECOBENCH_RESULTS"] = str(tmp_path / "results")
    done = subprocess.run([str(python), "-c", start, *map(str, folders)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("started") == len(folders)


# ------------------------------------------------------------------------------------------- the reference dataset

REFERENCE_BASE = "tiny-minilm==0.1 (local)"
REFERENCE_COMMIT = "0123456789abcdef0123456789abcdef01234567"
REFERENCE_VERSION = "9.8.7"


def reference_record(explainer: str, correctness_filter: str, ma: float) -> dict:
    """A valid reference record whose provenance names a version and commit that are not this checkout's."""
    import random

    from _sample_records import make_explainer_record

    from gecobench.provenance import base_provenance
    from gecobench.records import (
        explainer_score_identity,
        record_id_for,
        validate_record,
    )

    provenance = {**base_provenance(0), "package_version": REFERENCE_VERSION, "git_commit": REFERENCE_COMMIT}
    record = make_explainer_record(explainer, "CE", "binary_all", REFERENCE_BASE, rng=random.Random(explainer),
                                   provenance=provenance, validate=False)
    record["protocol"] = {"split": "test", "filter": correctness_filter, "bootstrap_resamples": 1000,
                          "ci_level": 0.95}
    record["model"]["name"] = "binary_all/CE/seed0"
    record["metrics"]["mass_accuracy"].update(value=ma, ci_low=ma - 0.05, ci_high=ma + 0.05)
    record["record_id"] = record_id_for(explainer_score_identity(record))
    return validate_record(record)


@pytest.fixture
def reference_dir(tmp_path: Path) -> Path:
    """A ``reference/`` folder as ``make reference`` leaves it: ``store/`` (records, a side file) and the zoo
    summary beside it."""
    from gecobench.store import LocalStore

    root = tmp_path / "reference"
    store = LocalStore(root / "store")
    records = [reference_record("saliency", "all_gender_variants_correct", 0.61),
               reference_record("lime", "all_gender_variants_correct", 0.55),
               reference_record("saliency", "none", 0.52)]
    for record in records:
        store.append(record)
    (root / "store" / "sentence_scores").mkdir()
    (root / "store" / "sentence_scores" / f"{records[0]['record_id']}.json.gz").write_bytes(b"side file")
    zoo = [{"config": "binary_all", "regime": "CE", "seed": 0, "test_accuracy": 0.9, "base_model": REFERENCE_BASE}]
    (root / "zoo_summary.json").write_text(json.dumps(zoo))
    # one committed zero-shot attribution bundle beside the store, as make reference leaves them
    (root / "zero_shot_attributions").mkdir()
    committed = min((REPO_ROOT / "reference" / "zero_shot_attributions").glob("*.json.gz"))
    shutil.copyfile(committed, root / "zero_shot_attributions" / committed.name)
    return root


def publish_reference(out: Path, store: Path, *parts: str) -> int:
    return publish_hub.main(["--org", "test-org", "--dry-run", str(out), "--quiet", "--only", "reference", *parts,
                             "--reference", str(store), "--package-source", GIT_SOURCE])


def test_the_reference_store_is_published_as_its_own_dataset_and_named_by_the_space(
    tmp_path: Path, reference_dir: Path, capsys: pytest.CaptureFixture
):
    from gecobench.store import LocalStore

    out = tmp_path / "hub"
    assert publish_reference(out, reference_dir / "store", "space") == 0, capsys.readouterr().err
    manifest = {r["repo_id"]: r for r in json.loads((out / "manifest.json").read_text())}
    entry = manifest["test-org/gecobench-reference"]
    assert entry["repo_type"] == "dataset"
    assert entry["url"] == "https://huggingface.co/datasets/test-org/gecobench-reference"
    folder = out / entry["folder"]
    # read back with the store code: every record, validated, nothing skipped (zoo_summary.json is no document)
    published = LocalStore(folder).read_all()
    original = LocalStore(reference_dir / "store").read_all()
    assert published.warnings == []
    assert sorted(d["record_id"] for d in published.documents) == sorted(d["record_id"] for d in original.documents)
    side_files = [p.name for p in (reference_dir / "store" / "sentence_scores").iterdir()]
    assert sorted(p.name for p in (folder / "sentence_scores").iterdir()) == side_files
    assert json.loads((folder / "zoo_summary.json").read_text()) == json.loads(
        (reference_dir / "zoo_summary.json").read_text())
    (bundle,) = (reference_dir / "zero_shot_attributions").iterdir()
    assert (folder / "zero_shot_attributions" / bundle.name).read_bytes() == bundle.read_bytes()
    meta, body = split_front_matter((folder / "README.md").read_text(), "reference card")
    assert meta["pretty_name"] == "GECOBench reference results"
    # the card's facts come from the records' provenance, not from this checkout
    for fact in (REFERENCE_VERSION, REFERENCE_COMMIT, REFERENCE_BASE, "make reference", "zoo_summary.json",
                 "`binary_all`", "`CE`", "filter `all_gender_variants_correct`: 2", "filter `none`: 1",
                 "3 document(s) at publication", "`zero_shot_attributions/` — 1 bundle(s)"):
        assert fact in body, fact
    space = manifest[f"test-org/{LEADERBOARD_SPACE}"]
    assert space["space_variables"]["GECOBENCH_REFERENCE_REPO"] == "test-org/gecobench-reference"
    assert "test-org/gecobench-reference" in space_meta(out / space["folder"])["datasets"]


def test_a_missing_empty_or_invalid_reference_store_is_reported_not_published(
    tmp_path: Path, reference_dir: Path, capsys: pytest.CaptureFixture
):
    empty = tmp_path / "empty"
    empty.mkdir()
    for store, reason in ((tmp_path / "no-such-store", "does not exist"), (empty, "holds no explainer records")):
        out = tmp_path / f"hub-{store.name}"
        assert publish_reference(out, store) == 2
        err = capsys.readouterr().err
        assert f"error: the reference store {store} {reason}" in err and "make reference" in err
        assert not (out / "datasets" / "gecobench-reference").exists()
    (reference_dir / "zoo_summary.json").write_text('{"config": "binary_all"}')
    assert publish_reference(tmp_path / "hub-zoo", reference_dir / "store") == 2
    err = capsys.readouterr().err
    assert str(reference_dir / "zoo_summary.json") in err and "list of checkpoint rows" in err
    (reference_dir / "zoo_summary.json").write_text("[]")
    (bundle,) = (reference_dir / "zero_shot_attributions").iterdir()
    bundle.write_bytes(b"not gzip")
    assert publish_reference(tmp_path / "hub-bundle", reference_dir / "store") == 2
    err = capsys.readouterr().err
    assert bundle.name in err and "not a readable gzipped JSON file" in err
    bundle.unlink()
    broken = reference_dir / "store" / "explainer_score" / "broken.json"
    broken.write_text("{ not json")
    assert publish_reference(tmp_path / "hub-broken", reference_dir / "store") == 2
    err = capsys.readouterr().err
    assert "1 document(s) that do not validate" in err and "broken.json" in err


def test_the_space_opens_on_the_published_reference_its_variable_names(
    tmp_path: Path, reference_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
):
    """The Space variable the publisher sets makes the Space read the reference through the Hub store code; the
    Hub is the dry run's folder here (a stand-in for ``snapshot_download`` that honours its patterns)."""
    import fnmatch
    import shutil

    import huggingface_hub
    from test_space_sources import REFRESH_DEFAULTS, app_functions

    from leaderboard_space import sources
    from leaderboard_space.app import build_app

    out = tmp_path / "hub"
    assert publish_reference(out, reference_dir / "store", "space") == 0, capsys.readouterr().err
    manifest = {r["repo_id"]: r for r in json.loads((out / "manifest.json").read_text())}
    published = out / manifest["test-org/gecobench-reference"]["folder"]
    variables = manifest[f"test-org/{LEADERBOARD_SPACE}"]["space_variables"]
    downloads = []

    def snapshot_from_dry_run(repo_id, repo_type=None, allow_patterns=None, cache_dir=None, **kwargs):
        assert (repo_id, repo_type) == ("test-org/gecobench-reference", "dataset")
        downloads.append(repo_id)
        target = tmp_path / "snapshot"
        for path in published.rglob("*"):
            name = path.relative_to(published).as_posix()
            if path.is_file() and any(fnmatch.fnmatch(name, p) for p in allow_patterns or ["*"]):
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target / name)
        return str(target)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_from_dry_run)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("GECOBENCH_RESULTS_REPO", "GECOBENCH_REQUESTS_REPO", sources.REFERENCE_ENV):
        monkeypatch.delenv(name, raising=False)
    for key, value in variables.items():
        if key != "GECOBENCH_REQUESTS_REPO":  # the requests queue stays a local folder: nothing to submit here
            monkeypatch.setenv(key, value)
    monkeypatch.delenv("GECOBENCH_RESULTS_REPO")  # your results: an empty local folder
    (tmp_path / "user").mkdir()
    functions = app_functions(build_app(str(tmp_path / "user"), str(tmp_path / "requests")))
    status, source, *_ = functions["refresh"](*REFRESH_DEFAULTS)
    assert downloads, "the reference was not read through the Hub store"
    assert source["value"] == sources.REFERENCE
    assert "hf://datasets/test-org/gecobench-reference" in status and f"base model {REFERENCE_BASE}" in status
    assert "skipped" not in status
    ranking = functions["ranking_api"]("binary_all", REFERENCE_BASE, "CE", "0")
    explainers = sorted(row[ranking["headers"].index("Explainer")] for row in ranking["data"])
    assert explainers == ["lime", "saliency"]  # the paper's filter's two records, not the unfiltered one
    # without the Space variable, $GECOBENCH_REFERENCE as a local folder (the same published folder) works alike
    monkeypatch.delenv("GECOBENCH_REFERENCE_REPO")
    monkeypatch.setenv(sources.REFERENCE_ENV, str(published))
    status, source, *_ = app_functions(build_app(str(tmp_path / "user"), str(tmp_path / "requests")))["refresh"](
        *REFRESH_DEFAULTS)
    assert source["value"] == sources.REFERENCE and str(published) in status and "skipped" not in status
    assert len(downloads) == 1


def test_the_reference_location_comes_from_the_space_variable_first():
    from leaderboard_space.hub_config import reference_from_env

    assert reference_from_env({}) is None  # the caller's default: the repository's reference/store
    assert reference_from_env({"GECOBENCH_REFERENCE": "/data/ref"}) == "/data/ref"
    both = {"GECOBENCH_REFERENCE_REPO": "org/gecobench-reference", "GECOBENCH_REFERENCE": "/data/ref"}
    assert reference_from_env(both) == "hf://datasets/org/gecobench-reference"
    with pytest.raises(ValueError, match="GECOBENCH_REFERENCE_REPO"):
        reference_from_env({"GECOBENCH_REFERENCE_REPO": "gecobench-reference"})


def test_a_dry_run_repeated_into_the_same_folder_keeps_its_links(tmp_path):
    """Running the documented ``gecobench publish --dry-run DIR`` twice failed: the second copy of a hard-linked
    file onto itself ("… are the same file")."""
    from gecobench.hub_publish import _link_or_copy

    source = tmp_path / "results" / "record.json"
    source.parent.mkdir()
    source.write_text('{"a": 1}')
    target = tmp_path / "preview" / "record.json"
    _link_or_copy(source, target)
    _link_or_copy(source, target)
    assert target.samefile(source) and target.read_text() == '{"a": 1}'
    changed = tmp_path / "results" / "other.json"
    changed.write_text('{"b": 2}')
    _link_or_copy(changed, target)  # another file under the same name replaces the old one
    assert target.read_text() == '{"b": 2}' and source.read_text() == '{"a": 1}'
