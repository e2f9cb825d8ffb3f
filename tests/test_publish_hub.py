"""scripts/publish_hub.py --dry-run writes every repository folder offline; the folders are what the Hub needs."""

from __future__ import annotations

import json
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
    assert space["space_variables"] == {"GECOBENCH_RESULTS_REPO": "test-org/gecobench-results",
                                        "GECOBENCH_REQUESTS_REPO": "test-org/gecobench-requests"}
    assert "test-org/gecobench-results" in meta["datasets"]
    assert f"{PACKAGE_NAME} @ {GIT_SOURCE}" in (out / space["folder"] / "requirements.txt").read_text().splitlines()
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
