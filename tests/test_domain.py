"""The shared domain facts (gecobench.domain) are the ones every layer uses: the dataset builder, the model zoo,
the record schema and the Space read the same configs, labels, base model and checkpoint file."""

from __future__ import annotations

import pytest

from gecobench import domain


def test_every_layer_reads_the_same_configs_and_labels() -> None:
    import geco_dataset
    from gecobench.gender import GENDER_GROUPS
    from gecobench.models import data as model_data

    assert geco_dataset.GECO_CONFIGS == domain.GECO_CONFIGS == tuple(model_data.GECO_CONFIGS)
    assert tuple(geco_dataset.LABEL_NAMES) == domain.LABEL_NAMES == GENDER_GROUPS
    for config in domain.GECO_CONFIGS:
        folder, classes = model_data.GECO_CONFIGS[config]
        assert folder == domain.GECO_FOLDERS[config]
        # the binary configs have the first two labels, the non-binary ones all three
        assert classes == domain.num_labels(config) == len(domain.LABEL_NAMES) - ("nonbinary" not in config)


def test_an_unknown_config_is_named_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"'binary_al'.*binary_all"):
        domain.num_labels("binary_al")


def test_both_hub_ids_of_bert_base_uncased_are_the_papers_base_model() -> None:
    from gecobench.models import PAPER_BASE_MODEL
    from gecobench.models.training import INFO_FILE

    assert PAPER_BASE_MODEL == domain.PAPER_BASE_MODEL and INFO_FILE == domain.MODEL_INFO_FILE
    assert domain.is_paper_base_model("google-bert/bert-base-uncased")
    assert domain.is_paper_base_model("bert-base-uncased")
    assert not domain.is_paper_base_model("bert-base-cased")
    assert not domain.is_paper_base_model(None)


def test_the_space_does_not_flag_the_papers_base_model_under_its_current_hub_id() -> None:
    """Before the facts were unified the Space knew only ``bert-base-uncased`` and called a reference trained on
    ``google-bert/bert-base-uncased`` (the zoo's default id) "not the paper's"."""
    from leaderboard_space import sources

    for base in ("google-bert/bert-base-uncased", "bert-base-uncased"):
        label = sources.reference_label([{"model": {"base_model": base}, "provenance": {"package_version": "1"}}])
        assert f"base model {base}" in label and "not the paper's" not in label, label
    other = sources.reference_label([{"model": {"base_model": "tiny-minilm"}, "provenance": {}}])
    assert f"not the paper's {domain.PAPER_BASE_MODEL}" in other
