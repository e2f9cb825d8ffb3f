"""scripts/maintainer/seed_numbers.py: the per-seed numbers the reproducing narrative cites, from paper-filter
records only, seed by seed in the order asked, averaged over the methods the findings are about."""

from __future__ import annotations

import pytest
import seed_numbers


def _record(seed: int, explainer: str, value: float, *, filter_name: str = "paper", regime: str = "CEf",
            config: str = "binary_all") -> dict:
    return {"provenance": {"seed": seed}, "filter": {"name": filter_name}, "dataset": {"config": config},
            "model": {"regime": regime}, "explainer": {"name": explainer},
            "metrics": {"mass_accuracy": {"value": value, "median": value + 0.01}}}


def test_per_seed_values_follow_the_seed_order_and_read_paper_filter_records_only() -> None:
    documents = [_record(3, "saliency", 0.3), _record(1, "saliency", 0.1),
                 _record(1, "saliency", 0.9, filter_name="none"), _record(7, "saliency", 0.7)]
    numbers = seed_numbers.SeedNumbers(seed_numbers.paper_metrics(documents, [3, 1, 2]), [3, 1, 2])
    assert numbers.per_seed("binary_all", "CEf", "saliency") == [0.3, 0.1, None]
    assert numbers.per_seed("binary_all", "CEf", "saliency", "median") == pytest.approx([0.31, 0.11, None])


def test_the_mean_over_methods_leaves_out_baselines_and_the_hubs_eleventh() -> None:
    documents = [_record(0, "saliency", 0.4), _record(0, "lime", 0.2), _record(0, "uniform_random", 0.9),
                 _record(0, "pattern_variant", 0.9), _record(0, "partition_shap", 0.9)]
    numbers = seed_numbers.SeedNumbers(seed_numbers.paper_metrics(documents, [0]), [0])
    assert numbers.methods == ["lime", "saliency"]
    assert numbers.mean_over_paper_methods("binary_all", "CEf") == [pytest.approx(0.3)]


def test_a_seed_without_records_is_an_error_naming_it(tmp_path, capsys) -> None:
    (tmp_path / "store").mkdir()
    with pytest.raises(SystemExit):
        seed_numbers.main(["--seeds", "5", "--store", str(tmp_path / "store")])
    assert "seed(s) [5]" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        seed_numbers.main(["--seeds", "5", "--store", str(tmp_path / "absent")])
    assert "no such store folder" in capsys.readouterr().err


def test_the_report_names_rma_cells_negative_on_the_mean_and_those_negative_in_some_seed_only() -> None:
    documents = []
    for seed, (ce, cef) in enumerate([(-0.1, -0.01), (-0.2, 0.03)]):
        for regime, rma in (("CE", ce), ("CEf", cef)):
            record = _record(seed, "lime", 0.5, regime=regime)
            record["metrics"]["relative_mass_accuracy"] = {"value": rma}
            documents.append(record)
    lines = seed_numbers.report(seed_numbers.SeedNumbers(seed_numbers.paper_metrics(documents, [0, 1]), [0, 1]))
    assert "F4 RMA on D_A: 1 of 2 CE/CEf cells positive on the seed means" in lines
    assert any(line.startswith("   RMA at or below 0: CE lime: -0.100 / -0.200") for line in lines)
    assert any(line.startswith("   RMA at or below 0 in some seed: CEf lime: -0.010 / 0.030") for line in lines)
    assert not any("in some seed: CE lime" in line for line in lines)
