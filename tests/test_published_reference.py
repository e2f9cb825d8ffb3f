"""Published zero-shot reference attributions: exported from a run's checkpoints, read instead of computed by a
later run with the same zero-shot checkpoint, data and protocol, validated when read, ignored when they do not
match."""

from __future__ import annotations

import dataclasses
import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from conftest import write_tiny_zoo

from gecobench.evaluation import EvaluationSettings, ExplainerSpec, run_evaluation
from gecobench.evaluation.checkpoints import CheckpointStore, reference_unit_name
from gecobench.evaluation.data import load_split
from gecobench.evaluation.published_reference import (
    COMPUTED,
    export_bundle,
    load_published_references,
    merge_bundles,
    read_bundle,
)
from gecobench.evaluation.runner import checkpoint_key, reference_chunk_rows
from gecobench.explainers.base import get_explainer
from gecobench.provenance import fingerprint_directory, function_fingerprint
from gecobench.store import LocalStore

torch.set_num_threads(1)

EXPLAINERS = ["saliency", "lime:n_samples=12"]


def _settings(geco_dir: Path) -> EvaluationSettings:
    return EvaluationSettings(data_dir=str(geco_dir), filter="none", properties=False, faithfulness=False,
                              max_groups=6, chunk_size=2, bootstrap=20, batch_size=4)


@pytest.fixture(scope="module")
def zoo(tmp_path_factory, bert_tokenizer) -> dict[str, str]:
    return write_tiny_zoo(tmp_path_factory.mktemp("zoo"), bert_tokenizer)


@pytest.fixture(scope="module")
def published(zoo, geco_dir, tmp_path_factory) -> dict[str, Any]:
    """The reference run: the CE model and its zero-shot model, then the zero-shot unit exported as a bundle."""
    root = tmp_path_factory.mktemp("reference-run")
    settings = _settings(geco_dir)
    run_evaluation(EXPLAINERS, [zoo["CE"], zoo["ZS"]], ["binary_all"], settings, store_location=str(root / "store"),
                   checkpoint_dir=root / "ck", progress=False, filters=("paper", "none"))
    split = load_split("binary_all", "test", str(geco_dir))
    specs = [ExplainerSpec.parse(e) for e in EXPLAINERS]
    path = export_bundle(
        CheckpointStore(root / "ck"), root / "bundles",
        reference={"name": "ZS", "function_sha256": function_fingerprint(zoo["ZS"]), "base_model": "tiny-bert",
                   "seed": 1},
        dataset={"config": split.config, "split": split.split, "fingerprint": split.fingerprint},
        attribution_protocol=settings.attribution_protocol(), chunk_rows=reference_chunk_rows(split, settings),
        explainer_keys=[checkpoint_key(s, get_explainer(s.name, **s.params)) for s in specs], provenance={})
    records = LocalStore(root / "store").read_all("explainer_score").documents
    return {"bundle": path, "checkpoints": root / "ck", "records": {(r["model"]["regime"], r["explainer"]["name"], r["protocol"]["filter"]): r
                                        for r in records}}


def _run_model_alone(zoo, geco_dir, root: Path, location) -> dict:
    run_evaluation(EXPLAINERS, [zoo["CE"]], ["binary_all"], _settings(geco_dir), store_location=str(root / "store"),
                   checkpoint_dir=root / "ck", progress=False, reference_attributions=location)
    records = LocalStore(root / "store").read_all("explainer_score").documents
    return {r["explainer"]["name"]: r for r in records}


def _rewrite(source: Path, target: Path, change: Callable[[dict], None], rekey: bool = False) -> Path:
    document = json.loads(gzip.decompress(source.read_bytes()))
    change(document)
    if rekey:  # keep the bundle self-consistent: its unit follows from its checkpoint, data and protocol
        document["unit"] = reference_unit_name(document["reference"]["function_sha256"],
                                               document["dataset"]["fingerprint"], document["attribution_protocol"])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(gzip.compress(json.dumps(document).encode()))
    return target


def test_a_published_reference_is_read_instead_of_computed_and_gives_the_same_records(
        zoo, geco_dir, published, tmp_path) -> None:
    bundle = read_bundle(published["bundle"])
    assert bundle.explainer_keys() == sorted(
        checkpoint_key(spec, get_explainer(spec.name, **spec.params)) for spec in map(ExplainerSpec.parse, EXPLAINERS))
    alone = _run_model_alone(zoo, geco_dir, tmp_path, published["bundle"].parent)
    # nothing of the zero-shot model was computed or checkpointed: the reference came from the bundle
    assert CheckpointStore(tmp_path / "ck").reference_units() == []
    for name in ("saliency", "lime"):
        record, before = alone[name], published["records"][("CE", name, "none")]
        assert record["model"]["zero_shot_reference_source"] == bundle.source
        assert before["model"]["zero_shot_reference_source"] == COMPUTED
        assert record["metrics"]["relative_mass_accuracy"]["value"] is not None
        assert record["metrics"] == before["metrics"]  # the same attributions, bit for bit
        assert record["record_id"] == before["record_id"]  # where the reference came from is not identity


def test_a_bundle_of_another_zero_shot_checkpoint_is_ignored(zoo, geco_dir, published, tmp_path) -> None:
    other = _rewrite(published["bundle"], tmp_path / "bundles" / "other.json.gz",
                     lambda d: d["reference"].update(function_sha256="0" * 64), rekey=True)
    alone = _run_model_alone(zoo, geco_dir, tmp_path, other)
    assert alone["saliency"]["model"]["zero_shot_reference_source"] == COMPUTED
    assert len(CheckpointStore(tmp_path / "ck").reference_units()) == 1  # computed here, so checkpointed here


def test_another_explainer_version_is_not_served_from_the_bundle(zoo, geco_dir, published, tmp_path) -> None:
    saliency = checkpoint_key(ExplainerSpec.parse("saliency"), get_explainer("saliency"))

    def older_saliency(document: dict) -> None:
        document["explainers"][saliency.rsplit("-v", 1)[0] + "-v0.0.1"] = document["explainers"].pop(saliency)

    renamed = _rewrite(published["bundle"], tmp_path / "bundles" / "renamed.json.gz", older_saliency)
    alone = _run_model_alone(zoo, geco_dir, tmp_path, renamed)
    assert alone["saliency"]["model"]["zero_shot_reference_source"] == COMPUTED
    assert alone["lime"]["model"]["zero_shot_reference_source"] == read_bundle(renamed).source


def _first_chunk(document: dict) -> dict:
    return next(iter(next(iter(document["explainers"].values())).values()))


@pytest.mark.parametrize(("change", "rekey", "message"), [
    (lambda d: d.update(format_version=99), False, "version 99"),
    (lambda d: d.update(unit="reference-0000000000000000"), False, "does not follow"),
    (lambda d: d.pop("attribution_protocol"), False, "missing field(s) attribution_protocol"),
    (lambda d: d["explainers"].update(lime={"first": {}}), False, "explainers must map"),
])
def test_a_malformed_bundle_is_refused_when_loaded_with_the_file_named(published, tmp_path, change, rekey,
                                                                        message) -> None:
    bad = _rewrite(published["bundle"], tmp_path / "bad.json.gz", change, rekey)
    with pytest.raises(ValueError, match="bad.json.gz") as err:
        load_published_references(bad)
    assert message in str(err.value)


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: _first_chunk(d)["scores"][0].append(0.5), "words but"),
    (lambda d: _first_chunk(d)["scores"][0].__setitem__(0, float("nan")), "not a finite number"),
    (lambda d: _first_chunk(d)["rows"].reverse(), "does not match the data"),
])
def test_a_bundle_that_does_not_fit_the_data_stops_the_run(zoo, geco_dir, published, tmp_path, change,
                                                          message) -> None:
    bad = _rewrite(published["bundle"], tmp_path / "bundles" / "unfit.json.gz", change)
    with pytest.raises(ValueError, match=message) as err:
        _run_model_alone(zoo, geco_dir, tmp_path, bad)
    assert "unfit.json.gz" in str(err.value)
    assert not (tmp_path / "store" / "explainer_score").exists() or not any(
        (tmp_path / "store" / "explainer_score").iterdir())


def test_export_refuses_an_incomplete_unit(zoo, geco_dir, tmp_path) -> None:
    settings = _settings(geco_dir)
    split = load_split("binary_all", "test", str(geco_dir))
    with pytest.raises(ValueError, match="incomplete: saliency-.* chunk 0"):
        export_bundle(CheckpointStore(tmp_path / "empty"), tmp_path / "out",
                      reference={"name": "ZS", "function_sha256": function_fingerprint(zoo["ZS"])},
                      dataset={"config": split.config, "split": split.split, "fingerprint": split.fingerprint},
                      attribution_protocol=settings.attribution_protocol(),
                      chunk_rows=reference_chunk_rows(split, settings),
                      explainer_keys=[checkpoint_key(ExplainerSpec.parse("saliency"), get_explainer("saliency"))],
                      provenance={})
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_locations_a_file_a_folder_a_dataset_folder_and_a_hub_id(published, tmp_path, monkeypatch) -> None:
    bundle = published["bundle"]
    unit = read_bundle(bundle).unit
    dataset = tmp_path / "dataset"
    (dataset / "zero_shot_attributions").mkdir(parents=True)
    (dataset / "zero_shot_attributions" / bundle.name).write_bytes(bundle.read_bytes())
    for location in (bundle, bundle.parent, dataset):
        assert load_published_references(location).get(unit) is not None, location
    assert len(load_published_references(None)) == 0
    with pytest.raises(ValueError, match="no published reference bundles"):
        load_published_references(tmp_path)  # a folder holding neither bundles nor zero_shot_attributions/
    # a Hub dataset id is downloaded with huggingface_hub; offline the error names the id
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", lambda repo_id, **kwargs: str(dataset))
    assert load_published_references("ORG/gecobench-reference").get(unit) is not None

    def unreachable(repo_id, **kwargs):
        raise OSError("the Hub is unreachable")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    with pytest.raises(ValueError, match="ORG/gecobench-reference.*unreachable"):
        load_published_references("ORG/gecobench-reference")
    with pytest.raises(FileNotFoundError, match="neither a file"):
        load_published_references(tmp_path / "missing" / "folder")


def test_two_different_bundles_of_one_unit_are_an_error(published, tmp_path) -> None:
    folder = tmp_path / "two"
    first = _rewrite(published["bundle"], folder / "a.json.gz", lambda d: None)
    _rewrite(first, folder / "b.json.gz", lambda d: _first_chunk(d)["scores"][0].__setitem__(0, 0.123))
    with pytest.raises(ValueError, match="same unit"):
        load_published_references(folder)


def test_the_explainer_version_is_part_of_the_checkpoint_key() -> None:
    spec = ExplainerSpec.parse("lime:n_samples=12")
    lime = get_explainer("lime", n_samples=12)
    assert checkpoint_key(spec, lime) == f"{spec.key()}-v{lime.version}"
    other = dataclasses.replace(spec)
    newer = get_explainer("lime", n_samples=12)
    newer.version = "99.0.0"
    assert checkpoint_key(other, newer) != checkpoint_key(spec, lime)
    odd = get_explainer("lime", n_samples=12)
    odd.version = "../../x"  # a version is part of a path: never a way out of the checkpoint folder
    key = checkpoint_key(spec, odd)
    assert "/" not in key and ".." not in key


def test_the_zero_shot_checkpoint_can_be_named_and_must_be_zero_shot(zoo, geco_dir, published, tmp_path) -> None:
    alone = tmp_path / "elsewhere" / "CE"  # the model without its zero-shot model beside it
    shutil.copytree(zoo["CE"], alone)
    run_evaluation(["saliency"], [str(alone)], ["binary_all"], _settings(geco_dir), store_location=str(tmp_path / "a"),
                   checkpoint_dir=tmp_path / "ck", progress=False)
    (record,) = LocalStore(tmp_path / "a").read_all("explainer_score").documents
    assert record["model"]["zero_shot_reference"] is None
    assert "no zero-shot (ZS) model" in record["metrics"]["relative_mass_accuracy"]["reason"]
    run_evaluation(["saliency"], [str(alone)], ["binary_all"], _settings(geco_dir), store_location=str(tmp_path / "b"),
                   checkpoint_dir=tmp_path / "ck", progress=False, zero_shot=zoo["ZS"],
                   reference_attributions=published["bundle"])
    (record,) = LocalStore(tmp_path / "b").read_all("explainer_score").documents
    assert record["model"]["zero_shot_reference"] == "ZS"
    assert record["model"]["zero_shot_reference_source"] == read_bundle(published["bundle"]).source
    with pytest.raises(ValueError, match="regime is 'CE', not 'ZS'"):
        run_evaluation(["saliency"], [zoo["CE"]], ["binary_all"], _settings(geco_dir),
                       store_location=str(tmp_path / "c"), checkpoint_dir=tmp_path / "ck", progress=False,
                       zero_shot=zoo["CE"])


def test_a_zero_shot_model_rebuilt_bit_for_bit_matches_and_a_changed_one_does_not(zoo, geco_dir, published,
                                                                                  tmp_path) -> None:
    rebuilt = tmp_path / "rebuilt" / "ZS"  # the same weights saved again: other metadata, same function
    shutil.copytree(zoo["ZS"], rebuilt)
    info = json.loads((rebuilt / "gecobench_model.json").read_text())
    (rebuilt / "gecobench_model.json").write_text(json.dumps({**info, "created_at": "another day"}))
    tokenizer_config = json.loads((rebuilt / "tokenizer_config.json").read_text())
    (rebuilt / "tokenizer_config.json").write_text(json.dumps({**tokenizer_config, "local_files_only": True}))
    config = json.loads((rebuilt / "config.json").read_text())  # saved from another environment
    (rebuilt / "config.json").write_text(json.dumps({**config, "_name_or_path": "/elsewhere/.venv/base",
                                                     "transformers_version": "0.0.1"}))
    assert fingerprint_directory(rebuilt) != fingerprint_directory(zoo["ZS"])
    assert function_fingerprint(rebuilt) == function_fingerprint(zoo["ZS"])
    alone = tmp_path / "elsewhere" / "CE"
    shutil.copytree(zoo["CE"], alone)
    run_evaluation(["saliency"], [str(alone)], ["binary_all"], _settings(geco_dir), store_location=str(tmp_path / "a"),
                   checkpoint_dir=tmp_path / "ck", progress=False, zero_shot=str(rebuilt),
                   reference_attributions=published["bundle"])
    (record,) = LocalStore(tmp_path / "a").read_all("explainer_score").documents
    assert record["model"]["zero_shot_reference_source"] == read_bundle(published["bundle"]).source
    assert record["model"]["zero_shot_reference_sha256"] == fingerprint_directory(rebuilt)

    config = json.loads((rebuilt / "config.json").read_text())
    (rebuilt / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))  # a change of function
    assert function_fingerprint(rebuilt) != function_fingerprint(zoo["ZS"])
    (rebuilt / "config.json").write_text(json.dumps(config))

    from safetensors.torch import load_file, save_file

    weights = load_file(rebuilt / "model.safetensors")
    name = min(weights)
    weights[name] = weights[name] + 1e-3
    save_file(weights, rebuilt / "model.safetensors", metadata={"format": "pt"})
    assert function_fingerprint(rebuilt) != function_fingerprint(zoo["ZS"])
    run_evaluation(["saliency"], [str(alone)], ["binary_all"], _settings(geco_dir), store_location=str(tmp_path / "b"),
                   checkpoint_dir=tmp_path / "ck", progress=False, zero_shot=str(rebuilt),
                   reference_attributions=published["bundle"])
    (record,) = LocalStore(tmp_path / "b").read_all("explainer_score").documents
    assert record["model"]["zero_shot_reference_source"] == COMPUTED


def test_a_run_over_the_first_groups_reads_the_whole_split_bundle_but_not_a_cut_chunk(zoo, geco_dir, published,
                                                                                      tmp_path) -> None:
    """A bundle over the whole split serves a run with ``max_groups`` its whole chunks (same rows, same seeds); a
    last chunk cut short by ``max_groups`` was batched otherwise in the bundle, so the run computes it."""
    whole = _rewrite(published["bundle"], tmp_path / "bundles" / "whole.json.gz",
                     lambda d: d["attribution_protocol"].update(max_sentence_groups=None), rekey=True)
    source = read_bundle(whole).source

    def run(max_groups: int, name: str) -> dict:
        settings = dataclasses.replace(_settings(geco_dir), max_groups=max_groups)
        run_evaluation(["saliency"], [zoo["CE"]], ["binary_all"], settings, store_location=str(tmp_path / name),
                       checkpoint_dir=tmp_path / f"ck-{name}", progress=False, reference_attributions=whole)
        (record,) = LocalStore(tmp_path / name).read_all("explainer_score").documents
        return record

    assert run(4, "whole-chunks")["model"]["zero_shot_reference_source"] == source
    assert CheckpointStore(tmp_path / "ck-whole-chunks").reference_units() == []
    cut = run(5, "cut-chunk")  # chunks of 2 groups: the third holds 1 of the bundle's 2
    assert cut["model"]["zero_shot_reference_source"] == f"mixed: {COMPUTED}, {source}"
    (unit,) = CheckpointStore(tmp_path / "ck-cut-chunk").reference_units()
    assert [p.name for p in unit.glob("*/chunk-*.json")] == ["chunk-00002.json"]


def _write_checkpoint(folder: Path, model_type: str, tensors: dict[str, torch.Tensor]) -> Path:
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_type": model_type, "hidden_size": 4}))
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


def test_the_function_fingerprint_leaves_out_only_the_tensors_a_zero_shot_model_derives(tmp_path) -> None:
    """A zero-shot model's label embeddings are computed when it is built; another kind of CPU gives them other last
    bits. Two such builds are one function (the published reference serves both); any other weight, or the label
    embeddings of a model type that does not derive them, still changes the fingerprint."""
    generator = torch.Generator().manual_seed(0)
    encoder = torch.randn(3, 4, generator=generator)
    labels = torch.randn(2, 4, generator=generator)
    last_bit = torch.nextafter(labels, torch.full_like(labels, float("inf")))  # one ulp up: another CPU's sums
    built_here = _write_checkpoint(tmp_path / "here", "gecobench_zero_shot",
                                   {"backbone.w": encoder, "label_embeddings": labels})
    built_there = _write_checkpoint(tmp_path / "there", "gecobench_zero_shot",
                                    {"backbone.w": encoder.clone(), "label_embeddings": last_bit})
    assert fingerprint_directory(built_here) != fingerprint_directory(built_there)
    assert function_fingerprint(built_here) == function_fingerprint(built_there)
    other_encoder = _write_checkpoint(tmp_path / "encoder", "gecobench_zero_shot",
                                      {"backbone.w": torch.nextafter(encoder, torch.zeros_like(encoder)),
                                       "label_embeddings": labels})
    assert function_fingerprint(other_encoder) != function_fingerprint(built_here)
    renamed = _write_checkpoint(tmp_path / "renamed", "gecobench_zero_shot",
                                {"backbone.v": encoder, "label_embeddings": labels})
    assert function_fingerprint(renamed) != function_fingerprint(built_here)
    # a fine-tuned classifier has no derived tensors: every bit of its weights counts
    bert_here = _write_checkpoint(tmp_path / "bert-here", "bert", {"backbone.w": encoder, "label_embeddings": labels})
    bert_there = _write_checkpoint(tmp_path / "bert-there", "bert",
                                   {"backbone.w": encoder, "label_embeddings": last_bit})
    assert function_fingerprint(bert_here) != function_fingerprint(bert_there)
    # a weights file that is not safetensors is named, not hashed as if it were
    (built_there / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    with pytest.raises(ValueError, match=r"model\.safetensors: not a safetensors file"):
        function_fingerprint(built_there)


def _export(published: dict[str, Any], geco_dir: Path, keys: list[str], output: Path) -> Path:
    """The published fixture's zero-shot unit, exported again for ``keys`` only."""
    document = read_bundle(published["bundle"]).document
    chunk_rows = reference_chunk_rows(load_split("binary_all", "test", str(geco_dir)), _settings(geco_dir))
    return export_bundle(CheckpointStore(published["checkpoints"]), output, reference=document["reference"],
                         dataset=document["dataset"], attribution_protocol=document["attribution_protocol"],
                         chunk_rows=chunk_rows, explainer_keys=keys, provenance={"part": output.name})


def test_bundles_of_one_unit_for_other_explainers_merge_into_one(published, geco_dir, tmp_path) -> None:
    whole = read_bundle(published["bundle"])
    first, second = whole.explainer_keys()
    only_first = _export(published, geco_dir, [first], tmp_path / "first")
    only_second = _export(published, geco_dir, [second], tmp_path / "second")
    assert read_bundle(only_first).explainer_keys() == [first]
    merged = read_bundle(merge_bundles([only_first, only_second], tmp_path / "merged"))
    assert merged.unit == whole.unit and merged.explainer_keys() == [first, second]
    assert merged.document["explainers"] == whole.document["explainers"]
    provenance = merged.document["explainer_provenance"]
    assert provenance[first]["part"] == "first" and provenance[second]["part"] == "second"
    assert merged.document["provenance"] == {"part": "first"}
    # merged again with one of its parts (an explainer in both, same scores): nothing changes, provenance kept
    again = read_bundle(merge_bundles([merged.path, only_second], tmp_path / "merged"))
    assert again.sha256 == merged.sha256


def test_bundles_that_disagree_or_are_not_one_unit_are_not_merged(published, tmp_path) -> None:
    bundle = read_bundle(published["bundle"])
    key = bundle.explainer_keys()[0]

    def nudge(document: dict) -> None:
        chunk = next(iter(document["explainers"][key].values()))
        chunk["scores"][0][0] += 1.0

    other_scores = _rewrite(published["bundle"], tmp_path / "nudged" / "b.json.gz", nudge)
    with pytest.raises(ValueError, match=f"disagree on {key}"):
        merge_bundles([published["bundle"], other_scores], tmp_path / "out")
    other_data = _rewrite(published["bundle"], tmp_path / "data" / "b.json.gz",
                          lambda d: d["dataset"].update(fingerprint="0" * 16), rekey=True)
    with pytest.raises(ValueError, match="differ in unit, dataset"):
        merge_bundles([published["bundle"], other_data], tmp_path / "out")
    with pytest.raises(ValueError, match="no bundles"):
        merge_bundles([], tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written by a refused merge
