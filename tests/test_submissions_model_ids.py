"""The worker's model ids: zoo checkpoints (every folder is ``seed<k>``) are named by their own metadata, a model
set whose ids collide is refused naming both paths, and the zero-shot checkpoint is hashed once per process."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from gecobench.evaluation.data import load_split, scorable
from gecobench.evaluation.runner import EvaluationSettings
from gecobench.store import LocalStore
from submissions import RequestStore, submit_request
from submissions.worker import (
    ModelSetError,
    WorkerConfig,
    check_zero_shot_references,
    model_id,
    model_ids,
    process_queue,
)

META = {"authors": "Ada", "description": "d", "license": "MIT", "contact": "ada@example.org"}
MAX_GROUPS = 3


def zoo_checkpoint(root: Path, tokenizer, config: str, regime: str, seed: int = 0, weights_seed: int = 0) -> str:
    """A tiny BERT checkpoint where the reference zoo keeps one: ``<root>/<config>/<regime>/seed<seed>``."""
    from tests.conftest import make_tiny_bert_classifier

    folder = root / config / regime / f"seed{seed}"
    make_tiny_bert_classifier(seed=weights_seed).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "gecobench_model.json").write_text(json.dumps({
        "regime": regime, "base_model": "tiny-bert", "base_revision": None, "geco_config": config, "seed": seed,
        "num_labels": 2}))
    return str(folder)


@pytest.fixture(scope="module")
def zoo(tmp_path_factory, bert_tokenizer) -> dict[str, str]:
    root = tmp_path_factory.mktemp("runs") / "reference" / "zoo"
    return {regime: zoo_checkpoint(root, bert_tokenizer, "binary_all", regime, weights_seed=i)
            for i, regime in enumerate(("CE", "CEfAf", "ZS"))}


def config_for(tmp_path: Path, models: list[str], geco_dir: Path, **extra) -> WorkerConfig:
    settings = EvaluationSettings(max_groups=MAX_GROUPS, bootstrap=50, filter="none", properties=False,
                                  data_dir=str(geco_dir))
    config = WorkerConfig(model_paths=models, configs=["binary_all"], results_location=str(tmp_path / "results"),
                          data_dir=str(geco_dir), settings=settings, checkpoint_dir=str(tmp_path / "ckpt"),
                          unsafe_no_sandbox=True)
    for name, value in extra.items():
        setattr(config, name, value)
    return config


def rows_for(name: str, geco_dir: Path, on_ground_truth: bool) -> bytes:
    """A precomputed file's rows for model id ``name``: near the ground truth, or uniform over the words."""
    split = load_split("binary_all", "test", geco_dir)
    rows = [split.rows[i] for g in split.groups[:MAX_GROUPS] for i in g if scorable(split.rows[i])]
    lines = [json.dumps({"model": name, "config": "binary_all", "sentence_id": r.sentence_id, "label": r.label,
                         "attributions": [float(g) + 0.001 if on_ground_truth else 1.0 for g in r.ground_truth]})
             for r in rows]
    return ("\n".join(lines) + "\n").encode()


def test_zoo_checkpoints_are_named_by_their_config_regime_and_seed(zoo, tmp_path):
    assert {regime: model_id(path) for regime, path in zoo.items()} == {
        "CE": "binary_all/CE/seed0", "CEfAf": "binary_all/CEfAf/seed0", "ZS": "binary_all/ZS/seed0"}
    assert {Path(path).name for path in zoo.values()} == {"seed0"}  # what the folder name alone gave them all
    config = WorkerConfig(model_paths=[zoo["CEfAf"], zoo["CE"]])
    assert config.model_set_name() == "binary_all/CE/seed0,binary_all/CEfAf/seed0"
    # the id is the checkpoint's, wherever the worker keeps it
    moved = tmp_path / "elsewhere"
    shutil.copytree(zoo["CE"], moved)
    assert model_id(moved) == "binary_all/CE/seed0"
    # no (or unusable) metadata: the folder's name
    bare = tmp_path / "OLA-binary_all-s0-demo"
    bare.mkdir()
    assert model_id(bare) == "OLA-binary_all-s0-demo"
    (bare / "gecobench_model.json").write_text(json.dumps({"regime": "OLA", "geco_config": "../x", "seed": 0}))
    assert model_id(bare) == "OLA-binary_all-s0-demo"


def test_a_precomputed_file_covers_each_zoo_model_under_its_own_id(zoo, tmp_path, geco_dir):
    # CE's rows sit on the ground truth, CEfAf's and the ZS reference's are uniform: had the three one id, one
    # model's rows would stand for all of them
    payload = (rows_for("binary_all/CE/seed0", geco_dir, True) + rows_for("binary_all/CEfAf/seed0", geco_dir, False)
               + rows_for("binary_all/ZS/seed0", geco_dir, False))
    requests = RequestStore(tmp_path / "requests")
    upload = submit_request(requests, "precomputed", {**META, "name": "mixed", "version": "1.0.0"}, "mixed.jsonl",
                            payload)
    config = config_for(tmp_path, [zoo["CE"], zoo["CEfAf"]], geco_dir)

    assert process_queue(requests, config) == {upload.request_id: "FINISHED"}

    records = {r["model"]["name"]: r for r in LocalStore(config.results_location).read_all().documents}
    assert set(records) == {"binary_all/CE/seed0", "binary_all/CEfAf/seed0"}
    ce, cefaf = records["binary_all/CE/seed0"]["metrics"], records["binary_all/CEfAf/seed0"]["metrics"]
    assert ce["mass_accuracy"]["value"] > 0.95 > cefaf["mass_accuracy"]["value"]
    # RMA against the file's own ZS rows (found in the zoo layout, binary_all/ZS/seed0, not in the set)
    assert ce["relative_mass_accuracy"]["value"] > 0
    assert cefaf["relative_mass_accuracy"]["value"] == pytest.approx(0.0, abs=1e-12)


def test_two_models_of_one_id_are_refused_naming_both(zoo, tmp_path, geco_dir, bert_tokenizer, capsys):
    # another zoo's CE seed 0 (other weights): the same <config>/<regime>/seed<k>
    twin = zoo_checkpoint(tmp_path / "other" / "zoo", bert_tokenizer, "binary_all", "CE", weights_seed=9)
    with pytest.raises(ModelSetError) as raised:
        model_ids([zoo["CE"], twin])
    message = str(raised.value)
    assert zoo["CE"] in message and twin in message and "'binary_all/CE/seed0'" in message
    assert model_ids([zoo["CE"], zoo["CE"]]) == {"binary_all/CE/seed0": zoo["CE"]}  # one model listed twice

    config = config_for(tmp_path, [zoo["CE"], twin], geco_dir)
    with pytest.raises(ModelSetError, match="the same id"):
        check_zero_shot_references(config)
    # the queue claims nothing: every request would be ambiguous
    requests = RequestStore(tmp_path / "requests")
    upload = submit_request(requests, "precomputed", {**META, "name": "oracle", "version": "1.0.0"}, "a.jsonl",
                            rows_for("binary_all/CE/seed0", geco_dir, True))
    with pytest.raises(ModelSetError):
        process_queue(requests, config)
    assert requests.get(upload.request_id).status == "PENDING"

    from submissions.cli import queue

    argv = ["--requests", str(requests.root), "--results", str(tmp_path / "r"), "--data-dir", str(geco_dir),
            "--unsafe-no-sandbox", "--models", zoo["CE"], twin]
    capsys.readouterr()
    assert queue.main(argv) == 2
    err = capsys.readouterr().err
    assert "refusing to start" in err and zoo["CE"] in err and twin in err
    assert queue.main(["--models", zoo["CE"], zoo["CEfAf"], "--list-models"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"binary_all/CE/seed0\t{zoo['CE']}",
                                                    f"binary_all/CEfAf/seed0\t{zoo['CEfAf']}"]


def test_a_zero_shot_reference_with_the_id_of_another_model_of_the_set_is_refused(
        zoo, tmp_path, geco_dir, bert_tokenizer):
    # the set holds binary_all/ZS/seed0; the reference given is another checkpoint with that id
    other_zs = zoo_checkpoint(tmp_path / "other" / "zoo", bert_tokenizer, "binary_all", "ZS", weights_seed=9)
    config = config_for(tmp_path, [zoo["CE"], zoo["ZS"]], geco_dir, zero_shot=other_zs)
    with pytest.raises(ModelSetError, match="has the id 'binary_all/ZS/seed0' of model") as raised:
        check_zero_shot_references(config)
    assert other_zs in str(raised.value) and zoo["ZS"] in str(raised.value)


def test_the_zero_shot_checkpoint_is_hashed_once_per_worker_process(zoo, tmp_path, geco_dir, monkeypatch):
    import gecobench.provenance
    import submissions.worker as worker
    from tests.test_submissions_worker import _published_bundle

    bundle = _published_bundle(tmp_path / "published", zoo["ZS"], geco_dir)
    calls: list[str] = []
    real = gecobench.provenance.checkpoint_fingerprints

    def counting(path):
        calls.append(str(path))
        return real(path)

    monkeypatch.setattr(gecobench.provenance, "checkpoint_fingerprints", counting)
    monkeypatch.setattr(worker, "_FINGERPRINTS", {})
    config = config_for(tmp_path, [zoo["CE"], zoo["CEfAf"]], geco_dir, published_reference=str(bundle))
    # two models of one base, checked at start and again by a request: one hash of the ZS checkpoint
    for _ in range(2):
        check_zero_shot_references(config)
    assert calls == [zoo["ZS"]]
    # a changed file is hashed again
    weights = next(Path(zoo["ZS"]).glob("*.safetensors"))
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    check_zero_shot_references(config)
    assert calls == [zoo["ZS"], zoo["ZS"]]
