"""Importing the 20 models' published Spanish predictions as model_bias records."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from geco_dataset import load_lexicon
from gecobench.metrics.bias_indices import bias_indices
from gecobench.metrics.bias_indices import read_prediction_file as metric_rows
from gecobench.records import validate_record
from gecobench.spanish import (
    RECORDED_SOURCE,
    import_recorded_predictions,
    read_prediction_file,
)
from gecobench.spanish.recorded import SOURCE_REPOSITORY, read_models_tsv
from gecobench.store import LocalStore

# From the bias_indices card (metrics/bias_indices/README.md): top-10, supersenses, bias = male − female.
CARD_VALUES = {
    ("dccuchile/bert-base-spanish-wwm-uncased", "BODY"): (-13.34, -10.09),
    ("dccuchile/bert-base-spanish-wwm-uncased", "BEHAVIOR"): (4.62, 4.29),
    ("BSC-TeMU/roberta-base-bne", "FEELING"): (-2.33, -6.35),
    ("BSC-TeMU/roberta-base-bne", "SOCIAL"): (1.62, 3.36),
}


@pytest.fixture(scope="module")
def imported_top10(tmp_path_factory, spanish_dir):
    store = LocalStore(tmp_path_factory.mktemp("store"))
    ids = import_recorded_predictions(spanish_dir / "predictions", store, k=10, progress=False)
    return store, ids


def _by_model(store: LocalStore, k: int) -> dict[str, dict]:
    return {
        r["masked_lm"]["model_id"]: r
        for r in store.read_all("model_bias").documents if r["protocol"]["k"] == k
    }


def test_twenty_models_imported_with_source(imported_top10, spanish_dir):
    store, ids = imported_top10
    assert len(ids) == len(set(ids)) == 20
    records = _by_model(store, 10)
    expected_models = {m["model"] for m in read_models_tsv(spanish_dir / "templates" / "models.tsv")}
    assert set(records) == expected_models and len(expected_models) == 20
    for model_id, record in records.items():
        validate_record(record)
        assert record["masked_lm"]["source"] == RECORDED_SOURCE
        assert record["recorded_from"]["repository"] == SOURCE_REPOSITORY
        assert record["recorded_from"]["commit"]
        assert record["recorded_from"]["file"] == f"predictions/top10/{model_id.replace('/', '_')}.tsv"
        assert record["templates"]["config"] == "templates_2023"
        assert record["counts"]["n_predictions"] == 96 * 2 * 10


def test_import_is_idempotent(imported_top10, spanish_dir):
    store, ids = imported_top10
    before = sorted(p.name for p in (store.root / "model_bias").glob("*.json"))
    again = import_recorded_predictions(spanish_dir / "predictions", store, k=10, progress=False)
    assert again == ids
    assert sorted(p.name for p in (store.root / "model_bias").glob("*.json")) == before


def test_record_values_reproduce_the_card(imported_top10):
    store, _ = imported_top10
    records = _by_model(store, 10)
    for (model_id, category), (bpi_bias, bri_bias) in CARD_VALUES.items():
        bias = records[model_id]["schemes"]["supersenses_top10"]["bias"]
        assert bias["bpi"][category] == pytest.approx(bpi_bias, abs=0.006)
        assert bias["bri"][category] == pytest.approx(bri_bias, abs=0.006)


@pytest.mark.parametrize("scheme", ["supersenses_top10", "visibility_polarity", "wiggins"])
def test_record_equals_direct_call_of_the_math(imported_top10, spanish_dir, scheme):
    store, _ = imported_top10
    record = _by_model(store, 10)["BSC-TeMU/roberta-base-bne"]
    rows = metric_rows(str(spanish_dir / "predictions" / "top10" / "BSC-TeMU_roberta-base-bne.tsv"))
    direct = bias_indices(**rows, lexicon=load_lexicon(scheme, data_dir=spanish_dir), k=10)
    stored = record["schemes"][scheme]
    for index in ("bpi", "bri"):
        for category, by_group in direct[index].items():
            for group, value in by_group.items():
                assert stored[index][category][group] == pytest.approx(value, rel=1e-9, abs=1e-12)
        for category, value in direct["bias"][index].items():
            assert stored["bias"][index][category] == pytest.approx(value, rel=1e-9, abs=1e-12)


def test_top29_import(tmp_path, spanish_dir):
    store = LocalStore(tmp_path)
    ids = import_recorded_predictions(spanish_dir / "predictions", store, k=29, progress=False)
    assert len(ids) == 20
    record = store.read("model_bias", ids[0])
    assert record["protocol"]["k"] == 29 and "supersenses_top29" in record["schemes"]
    assert record["counts"]["n_predictions"] == 96 * 2 * 29


def test_wrong_k_rejected(spanish_dir, tmp_path):
    with pytest.raises(ValueError, match="k must be 10 or 29"):
        import_recorded_predictions(spanish_dir / "predictions", LocalStore(tmp_path), k=5)
    path = spanish_dir / "predictions" / "top29" / "BSC-TeMU_RoBERTalex.tsv"
    with pytest.raises(ValueError, match="K=29, but K=10"):
        read_prediction_file(path, k=10)


def test_words_like_nan_are_kept(tmp_path):
    path = tmp_path / "m.tsv"
    path.write_text(
        "\tindex\tscore\ttoken\tsentence\tmodel\tdimension\tpos_tag\trsv\tword\n"
        "0\t0\t0.5\t1\t0\t0\tmale\tNC\t1\tnan\n"
        "1\t0\t0.4\t2\t0\t0\tfemale\tAQ\t1\tNA\n",
        encoding="utf-8",
    )
    frame = read_prediction_file(path, k=1)
    assert frame["word"].tolist() == ["nan", "NA"]
    assert frame["is_adjective"].tolist() == [False, True]
    assert frame["rank"].tolist() == [1, 1]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("0\t0\tabc\t1\t0\t0\tmale\tAQ\t1\talto\n", r"row 2 column 'score'.*'abc' is not a float"),
        ("0\t0\t1.5\t1\t0\t0\tmale\tAQ\t1\talto\n", r"row 2: score 1.5 is not in \[0, 1\]"),
        ("0\tx\t0.5\t1\t0\t0\tmale\tAQ\t1\talto\n", r"row 2 column 'index'"),
        ("0\t0\t0.5\t1\t0\t0\t\tAQ\t1\talto\n", r"row 2: empty dimension"),
    ],
)
def test_malformed_prediction_rows_are_named(tmp_path, row, message):
    path = tmp_path / "bad.tsv"
    path.write_text("\tindex\tscore\ttoken\tsentence\tmodel\tdimension\tpos_tag\trsv\tword\n" + row, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_prediction_file(path)


def test_missing_column_and_unknown_model_file(tmp_path, spanish_dir):
    bad = tmp_path / "bad.tsv"
    bad.write_text("index\tscore\tword\n0\t0.5\talto\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"missing column\(s\) \['sentence', 'dimension', 'pos_tag'\]"):
        read_prediction_file(bad)
    # a predictions folder holding a file that no model in models.tsv maps to
    predictions = tmp_path / "spanish" / "predictions"
    (predictions / "top10").mkdir(parents=True)
    shutil.copy(spanish_dir / "predictions" / "top10" / "BSC-TeMU_RoBERTalex.tsv", predictions / "top10" / "someone_x.tsv")
    with pytest.raises(ValueError, match="someone_x.tsv: no model in"):
        import_recorded_predictions(
            predictions, LocalStore(tmp_path / "store"), k=10, models_tsv=spanish_dir / "templates" / "models.tsv",
            lexicon_dir=spanish_dir, progress=False,
        )


def test_import_script(tmp_path, spanish_dir):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import import_spanish_predictions

    store_dir = tmp_path / "store"
    code = import_spanish_predictions.main(
        ["--predictions-dir", str(spanish_dir / "predictions"), "-k", "10", "--store", str(store_dir), "--no-progress"]
    )
    assert code == 0
    assert len(list((store_dir / "model_bias").glob("*.json"))) == 20


def test_import_script_takes_the_bootstrap_settings_into_every_record(tmp_path, spanish_dir, capsys):
    import json
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import import_spanish_predictions

    store_dir = tmp_path / "store"
    base = ["--predictions-dir", str(spanish_dir / "predictions"), "-k", "10", "--store", str(store_dir), "--no-progress"]
    assert import_spanish_predictions.main([*base, "--bootstrap-resamples", "50", "--bootstrap-seed", "7",
                                            "--confidence", "0.9"]) == 0
    records = [json.loads(p.read_text()) for p in (store_dir / "model_bias").glob("*.json")]
    assert len(records) == 20
    assert {json.dumps(r["protocol"]["bootstrap"], sort_keys=True) for r in records} == {json.dumps(
        {"method": records[0]["protocol"]["bootstrap"]["method"], "resampling_unit":
         records[0]["protocol"]["bootstrap"]["resampling_unit"], "n_resamples": 50, "seed": 7, "confidence": 0.9},
        sort_keys=True)}
    # other settings are another protocol: new records beside these, never a silent overwrite
    assert import_spanish_predictions.main([*base, "--bootstrap-resamples", "60"]) == 0
    assert len(list((store_dir / "model_bias").glob("*.json"))) == 40
    for option, value in (("--bootstrap-resamples", "0"), ("--bootstrap-seed", "-1"), ("--confidence", "1.5")):
        assert import_spanish_predictions.main([*base, option, value]) == 2
        assert option in capsys.readouterr().err


@pytest.mark.slow
def test_import_script_writes_pictures_for_all_models(tmp_path, spanish_dir):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import import_spanish_predictions

    pictures = tmp_path / "pictures"
    code = import_spanish_predictions.main(
        ["--predictions-dir", str(spanish_dir / "predictions"), "-k", "10", "--store", str(tmp_path / "store"),
         "--pictures-dir", str(pictures), "--no-progress"]
    )
    assert code == 0
    names = [p.name for p in (pictures / "top10").iterdir()]
    assert sum(n.endswith("_heat.png") for n in names) == 20
    assert sum(n.endswith("_heat.html") for n in names) == 20
    assert {f"all_models_{s}.png" for s in ("supersenses_top10", "visibility_polarity", "wiggins")} <= set(names)
