"""Export to Hub-ready folders: load_dataset on the folder equals the builders; the card; the push code path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import datasets
import pytest
import yaml

from geco_dataset import GECO_CONFIGS, GECO_SPLITS, load_geco
from geco_dataset.export import (
    export_geco,
    export_spanish_templates,
    push_folder_to_hub,
)
from geco_dataset.spanish import SPANISH_CONFIGS, _load_spanish

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "export_datasets.py"


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("export_cache")


@pytest.fixture(scope="module")
def geco_export(tmp_path_factory, geco_dir, cache) -> Path:
    return export_geco(tmp_path_factory.mktemp("geco_export") / "repo", data_dir=geco_dir, cache_dir=cache)


@pytest.fixture(scope="module")
def spanish_export(tmp_path_factory, spanish_dir, cache) -> Path:
    return export_spanish_templates(tmp_path_factory.mktemp("es_export") / "repo", data_dir=spanish_dir, cache_dir=cache)


def _front_matter(readme: Path) -> tuple[dict, str]:
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    end = text.index("\n---\n", 4)
    return yaml.safe_load(text[4:end]), text[end + 5 :]


@pytest.mark.parametrize("config", GECO_CONFIGS)
def test_load_dataset_on_geco_export_equals_builder(geco_export, geco_dir, cache, config, tmp_path):
    loaded = datasets.load_dataset(str(geco_export), config, cache_dir=str(tmp_path))
    assert set(loaded) == set(GECO_SPLITS)
    for split in GECO_SPLITS:
        built = load_geco(config, split, data_dir=geco_dir, cache_dir=cache)
        assert loaded[split].features == built.features
        assert loaded[split].to_list() == built.to_list()


def test_geco_card(geco_export):
    meta, body = _front_matter(geco_export / "README.md")
    assert [c["config_name"] for c in meta["configs"]] == list(GECO_CONFIGS)
    for entry in meta["configs"]:
        for data_file in entry["data_files"]:
            assert (geco_export / data_file["path"]).is_file()
    info = {entry["config_name"]: entry for entry in meta["dataset_info"]}
    assert {s["name"]: s["num_examples"] for s in info["nonbinary_all"]["splits"]} == {"train": 3864, "test": 966}
    feature_names = [f["name"] for f in info["binary_all"]["features"]]
    assert feature_names[:3] == ["words", "ground_truth", "label"]
    assert meta["license"] == "cc-by-sa-4.0"
    assert "GECOBench" in meta["citation"] and "Frontiers" in meta["citation"]
    for needle in ("Wilming", "Repair rule", "1534", "988", "n_ground_truth = 0", "@article", "D_S"):
        assert needle in body, needle
    assert "{{" not in body.replace("{{GECOBench}", "")


def test_spanish_export_equals_builders(spanish_export, spanish_dir, cache, tmp_path):
    meta, body = _front_matter(spanish_export / "README.md")
    assert [c["config_name"] for c in meta["configs"]] == list(SPANISH_CONFIGS)
    assert "Garrido-Mu" in meta["citation"] and "Language Resources and Evaluation" in body
    for config in SPANISH_CONFIGS:
        loaded = datasets.load_dataset(str(spanish_export), config, split="train", cache_dir=str(tmp_path))
        built = _load_spanish(config, spanish_dir, True, cache)
        assert loaded.features == built.features
        assert loaded.to_list() == built.to_list()


def test_export_refuses_non_empty_folder(geco_export, geco_dir, cache):
    with pytest.raises(FileExistsError, match="not empty"):
        export_geco(geco_export, data_dir=geco_dir, cache_dir=cache)


class FakeApi:
    def __init__(self):
        self.calls = []

    def create_repo(self, **kwargs):
        self.calls.append(("create_repo", kwargs))

    def upload_folder(self, **kwargs):
        self.calls.append(("upload_folder", kwargs))
        return type("Commit", (), {"commit_url": "https://hub/commit/1"})()


def test_push_uses_upload_folder(spanish_export):
    api = FakeApi()
    url = push_folder_to_hub(spanish_export, "me/spanish", token="hf_x", private=True, api=api)
    assert url == "https://hub/commit/1"
    (name1, create), (name2, upload) = api.calls
    assert (name1, name2) == ("create_repo", "upload_folder")
    assert create["repo_type"] == "dataset" and create["private"] is True and create["repo_id"] == "me/spanish"
    assert upload["repo_type"] == "dataset" and upload["folder_path"] == str(spanish_export)


def test_push_argument_errors(spanish_export, tmp_path, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(ValueError, match="needs a token"):
        push_folder_to_hub(spanish_export, "me/spanish", api=FakeApi())
    with pytest.raises(ValueError, match="owner/name"):
        push_folder_to_hub(spanish_export, "no-owner", token="t", api=FakeApi())
    with pytest.raises(FileNotFoundError, match="no README.md"):
        push_folder_to_hub(tmp_path, "me/x", token="t", api=FakeApi())


def test_script_help_and_token_check(tmp_path):
    env_run = {"capture_output": True, "text": True, "timeout": 120}
    result = subprocess.run([sys.executable, str(SCRIPT), "--help"], check=False, **env_run)
    assert result.returncode == 0 and "--push-to-hub" in result.stdout and "spanish_templates" in result.stdout
    import os

    env = {k: v for k, v in os.environ.items() if k != "HF_TOKEN"}
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--dataset", "geco", "--out", str(tmp_path / "o"), "--push-to-hub", "me/geco"],
        env=env, check=False, **env_run,
    )
    assert result.returncode != 0 and "needs a token" in result.stderr
    assert not (tmp_path / "o").exists()


def test_script_exports(tmp_path, spanish_dir):
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("export_datasets_script", SCRIPT)
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "es"
    assert module.main(["--dataset", "spanish_templates", "--out", str(out), "--data-dir", str(spanish_dir)]) == 0
    assert (out / "README.md").is_file() and (out / "templates_2023" / "train-00000-of-00001.parquet").is_file()
