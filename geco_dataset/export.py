"""Export the builders' data as Hub-ready dataset repositories (parquet + README dataset card).

``datasets>=4`` no longer runs loading scripts, so a Hub dataset is parquet files plus a README whose YAML
front matter declares the ``configs`` (data files per split) and ``dataset_info`` (features, split sizes).
``datasets.load_dataset(folder, config)`` then returns exactly the rows the builder returns.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import datasets
import yaml

from geco_common import __version__
from geco_common.provenance import git_commit, utc_now
from geco_dataset import geco, spanish

CARDS_DIR = Path(__file__).resolve().parent / "cards"
EXPORTABLE_DATASETS: tuple[str, ...] = ("geco", "spanish_templates")

GECO_PAPER_NAMES = {
    "binary_all": "D_A, binary",
    "binary_subject": "D_S, binary",
    "nonbinary_all": "D_A, non-binary",
    "nonbinary_subject": "D_S, non-binary",
}

GECO_QUIRKS = """\
* **Deleted-word rows (repaired).** In `nonbinary_subject` (released folder `non_binary_gender_subj`), the
  male and female variants of `sentence_id` 1534 (train, lines 3334–3335) and 988 (test, lines 562–563) are one
  word shorter than their `ground_truth`: the generation replaced a word by the empty string (`"."` in 1534,
  `"Abbé"` in 988) and dropped it, but kept its ground-truth entry. **Repair rule:** the short variant is aligned
  with a sibling variant of the same sentence whose words have the ground truth's length; the deleted position
  *k* is the unique position for which the sibling's words without word *k* agree with the short variant at the
  most positions; entry *k* is removed from `ground_truth`. These four rows have `repaired = true`
  (4 repaired rows in total: 2 train, 2 test). The builder applies this repair only to these known rows of the
  checksum-verified released files (`repair="known"`); `repair="all"` applies the rule to any row,
  `repair="none"` refuses them.
* **Rows without ground truth.** Some sentences have no ground-truth word at all (`n_ground_truth = 0`), e.g.
  `binary_subject` test `sentence_id` 811; 11 train and 1 test sentence in the D_S configs, 1 train sentence
  in the D_A configs. They are kept as released; filter on `n_ground_truth > 0` for metrics that need a
  ground-truth word.
* **Ground truth vs. differing words.** In the binary configs the variants of a sentence differ exactly where
  `ground_truth` is 1. In the non-binary configs every differing word has ground truth 1, but a few
  ground-truth words are identical in all three variants (e.g. a pronoun that reads `her` in every variant).
* **Neutral possessives.** About half of the neutral possessives read `them` instead of `their` (grammatical
  quirk of the generation; kept as released).
* **Gender ids.** `label` keeps the released ids (female = 0, male = 1, non-binary = 2), so the binary configs
  have labels 0 and 1 only.

Any other defect (a row whose `words` and `ground_truth` lengths differ, a missing field, an unknown gender, a
target that contradicts the gender, a truncated JSON line, an incomplete set of variants, a checksum mismatch)
raises an error naming the file and line instead of being dropped."""


def _features_yaml(features: datasets.Features) -> list[dict[str, Any]]:
    return features._to_yaml_list()


def _write_config(ds_by_split: dict[str, datasets.Dataset], out_dir: Path, config: str) -> dict[str, str]:
    """Write one parquet file per split; return ``{split: relative path}``."""
    paths = {}
    for split, ds in ds_by_split.items():
        relative = f"{config}/{split}-00000-of-00001.parquet"
        target = out_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        ds.to_parquet(str(target))
        paths[split] = relative
    return paths


def _card_yaml(
    configs: dict[str, dict[str, str]],
    features: dict[str, datasets.Features],
    sizes: dict[str, dict[str, tuple[int, int]]],
    default_config: str,
    extra: dict[str, Any],
) -> str:
    card: dict[str, Any] = dict(extra)
    card["configs"] = [
        {
            "config_name": name,
            "data_files": [{"split": split, "path": path} for split, path in paths.items()],
            **({"default": True} if name == default_config else {}),
        }
        for name, paths in configs.items()
    ]
    card["dataset_info"] = [
        {
            "config_name": name,
            "features": _features_yaml(features[name]),
            "splits": [
                {"name": split, "num_bytes": n_bytes, "num_examples": n}
                for split, (n, n_bytes) in sizes[name].items()
            ],
        }
        for name in configs
    ]
    return yaml.safe_dump(card, sort_keys=False, allow_unicode=True, width=120).strip()


def _render_card(template_name: str, values: dict[str, str]) -> str:
    text = (CARDS_DIR / template_name).read_text(encoding="utf-8")
    # check the template's placeholders before substituting: values (BibTeX) may contain "{{" themselves
    missing = sorted(set(re.findall(r"\{\{(\w+)\}\}", text)) - set(values))
    if missing:
        raise ValueError(f"card template {template_name}: placeholder(s) {missing} have no value")
    return re.sub(r"\{\{(\w+)\}\}", lambda match: values[match.group(1)], text)


def _provenance_values() -> dict[str, str]:
    return {"package_version": __version__, "git_commit": git_commit(), "created_at": utc_now()}


def _prepare_out(out_dir: str | os.PathLike, overwrite: bool) -> Path:
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise FileExistsError(f"{out} is not empty; pass overwrite=True (--overwrite) to replace its files")
    out.mkdir(parents=True, exist_ok=True)
    return out


def export_geco(
    out_dir: str | os.PathLike,
    data_dir: str | os.PathLike | None = None,
    repair: str = "known",
    overwrite: bool = False,
    cache_dir: str | os.PathLike | None = None,
) -> Path:
    """Write the four GECO configs as parquet plus a README dataset card into ``out_dir``; return the folder."""
    out = _prepare_out(out_dir, overwrite)
    configs, features, sizes = {}, {}, {}
    for config in geco.GECO_CONFIGS:
        by_split = {
            split: geco.load_geco(config, split, data_dir=data_dir, repair=repair, cache_dir=cache_dir)
            for split in geco.GECO_SPLITS
        }
        configs[config] = _write_config(by_split, out, config)
        features[config] = by_split["train"].features
        sizes[config] = {split: (len(ds), ds.data.nbytes) for split, ds in by_split.items()}
    extra = {
        "pretty_name": "GECO (GECOBench)",
        "language": ["en"],
        "license": geco.GECO_LICENSE,
        "task_categories": ["text-classification"],
        "tags": ["explainability", "xai", "gender-bias", "ground-truth"],
        "size_categories": ["1K<n<10K"],
        "source_datasets": [f"{geco.GECO_HOMEPAGE} (commit {geco.GECO_COMMIT})"],
        "citation": geco.GECO_CITATION,
    }
    table = "\n".join(
        f"| `{c}` | {GECO_PAPER_NAMES[c]} | {'male, female, neutral' if c.startswith('nonbinary') else 'male, female'}"
        f" | {sizes[c]['train'][0]} | {sizes[c]['test'][0]} |"
        for c in configs
    )
    card = _render_card(
        "geco_README.md",
        {
            "yaml": _card_yaml(configs, features, sizes, "binary_all", extra),
            "commit": geco.GECO_COMMIT,
            "table": table,
            "quirks": GECO_QUIRKS,
            "citation": geco.GECO_CITATION,
            **_provenance_values(),
        },
    )
    (out / "README.md").write_text(card, encoding="utf-8")
    return out


def export_spanish_templates(
    out_dir: str | os.PathLike,
    data_dir: str | os.PathLike | None = None,
    overwrite: bool = False,
    cache_dir: str | os.PathLike | None = None,
) -> Path:
    """Write the Spanish template and lexicon configs as parquet plus a README dataset card into ``out_dir``."""
    out = _prepare_out(out_dir, overwrite)
    configs, features, sizes = {}, {}, {}
    for config in spanish.SPANISH_CONFIGS:
        ds = spanish._load_spanish(config, data_dir, True, cache_dir)
        configs[config] = _write_config({"train": ds}, out, config)
        features[config] = ds.features
        sizes[config] = {"train": (len(ds), ds.data.nbytes)}
    extra = {
        "pretty_name": "Spanish gender-bias templates and lexicons (MarIA and BETO are sexist)",
        "language": ["es"],
        "license": "other",
        "task_categories": ["fill-mask"],
        "tags": ["gender-bias", "spanish", "templates"],
        "size_categories": ["n<1K"],
        "source_datasets": [spanish.SPANISH_HOMEPAGE],
        "citation": spanish.SPANISH_CITATION,
    }
    table = "\n".join(
        f"| `{c}` | `{spanish._file_of_config(c)}` | {sizes[c]['train'][0]} |" for c in configs
    )
    card = _render_card(
        "spanish_templates_README.md",
        {
            "yaml": _card_yaml(configs, features, sizes, "templates_2023", extra),
            "repo": spanish.SPANISH_REPO,
            "table": table,
            "citation": spanish.SPANISH_CITATION,
            **_provenance_values(),
        },
    )
    (out / "README.md").write_text(card, encoding="utf-8")
    return out


EXPORTERS: dict[str, Callable[..., Path]] = {"geco": export_geco, "spanish_templates": export_spanish_templates}


def push_folder_to_hub(
    folder: str | os.PathLike,
    repo_id: str,
    token: str | None = None,
    private: bool = False,
    commit_message: str = "Upload dataset exported by GECOBench Hub",
    api: Any = None,
) -> str:
    """Create (if needed) the dataset repo ``repo_id`` and upload ``folder`` with ``HfApi.upload_folder``.

    ``token`` defaults to ``$HF_TOKEN``; without one a ValueError is raised before any network call.
    Returns the URL of the commit.
    """
    if not repo_id or repo_id.count("/") != 1 or any(not part for part in repo_id.split("/")):
        raise ValueError(f"repo_id must look like 'owner/name', got {repo_id!r}")
    token = token or os.environ.get("HF_TOKEN")
    if not token:
        raise ValueError("pushing to the Hub needs a token: pass --token or set HF_TOKEN")
    folder = Path(folder)
    if not (folder / "README.md").is_file():
        raise FileNotFoundError(f"{folder} has no README.md; export the dataset first")
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    api.create_repo(repo_id=repo_id, repo_type="dataset", private=private, exist_ok=True, token=token)
    commit = api.upload_folder(
        repo_id=repo_id, folder_path=str(folder), repo_type="dataset", commit_message=commit_message, token=token
    )
    return str(getattr(commit, "commit_url", commit))
