"""Building a GECO-style dataset: generation of all sentences, the train/test split, writing the four
configs in the released jsonl layout, the comparison with a released copy and the co-occurrence bias."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from geco_common.provenance import base_provenance, sha256_file
from geco_dataset.generation.engine import (
    GENDERS,
    GenerationError,
    SourceSentence,
    check_has_gendered_word,
    make_variants,
    sentence_rows,
)
from geco_dataset.generation.rules import RuleSet, load_rules

CONFIGS = ("binary_gender_all", "binary_gender_subj", "non_binary_gender_all", "non_binary_gender_subj")
SPLITS = ("train", "test")


def _progress(iterable, total: int, description: str, enabled: bool):
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=description, unit="sentence")


def generate_rows(sources: list[SourceSentence], rules: RuleSet | None = None, strict: bool = True,
                  require_gendered_word: bool = True, progress: bool = False
                  ) -> tuple[dict[int, dict[str, list[dict]]], list[str]]:
    """Generate every sentence: ``({sentence_id: {config: rows}}, notes)``.

    ``strict`` makes an altered word without a non-binary rule an error (otherwise it is kept and noted);
    ``require_gendered_word`` makes a sentence whose variants are all identical an error.
    """
    rules = rules or load_rules()
    generated: dict[int, dict[str, list[dict]]] = {}
    notes: list[str] = []
    for source in _progress(sources, len(sources), "generating GECO variants", progress):
        variants = make_variants(source, rules, strict=strict)
        if require_gendered_word:
            check_has_gendered_word(source, variants)
        generated[source.sentence_id] = sentence_rows(source, variants)
        notes.extend(source.notes)
    return generated, notes


def released_split(released_dir: str | Path, config: str = "binary_gender_all") -> dict[str, list[int]]:
    """The sentence ids of each split of a released copy, in file order (``{"train": [...], "test": [...]}``)."""
    split: dict[str, list[int]] = {}
    for name in SPLITS:
        path = Path(released_dir) / config / f"{name}.jsonl"
        if not path.is_file():
            raise FileNotFoundError(f"released split file not found: {path}")
        ids = [json.loads(line)["sentence_idx"] for line in path.read_text(encoding="utf-8").splitlines() if line]
        split[name] = list(dict.fromkeys(ids))
    return split


def seeded_split(sentence_ids: list[int], test_fraction: float = 0.2, seed: int = 0) -> dict[str, list[int]]:
    """An 80/20 (by default) split by sentence, shuffled with ``seed``; test ids sorted as in the release."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    ids = sorted(sentence_ids)
    random.Random(seed).shuffle(ids)
    n_test = round(len(ids) * test_fraction)
    return {"train": ids[n_test:], "test": sorted(ids[:n_test])}


def assign_split(sentence_ids: list[int], released_dir: str | Path | None = None, test_fraction: float = 0.2,
                 seed: int = 0) -> dict[str, list[int]]:
    """The release's split for ids it contains (file order), the rest split with ``seed``."""
    if released_dir is None:
        return seeded_split(sentence_ids, test_fraction, seed)
    released = released_split(released_dir)
    known = set(sentence_ids)
    split = {name: [i for i in ids if i in known] for name, ids in released.items()}
    placed = set(split["train"]) | set(split["test"])
    rest = [i for i in sentence_ids if i not in placed]
    if rest:
        extra = seeded_split(rest, test_fraction, seed)
        split = {name: split[name] + extra[name] for name in SPLITS}
    return split


def write_configs(generated: dict[int, dict[str, list[dict]]], split: dict[str, list[int]], out_dir: str | Path
                  ) -> dict[str, dict[str, int]]:
    """Write ``out_dir/<config>/<split>.jsonl``; returns the row counts."""
    out = Path(out_dir)
    counts: dict[str, dict[str, int]] = {}
    for config in CONFIGS:
        (out / config).mkdir(parents=True, exist_ok=True)
        counts[config] = {}
        for name in SPLITS:
            missing = [i for i in split[name] if i not in generated]
            if missing:
                raise ValueError(f"split {name!r} names sentence ids that were not generated: {missing[:10]}")
            rows = [row for i in split[name] for row in generated[i][config]]
            with open(out / config / f"{name}.jsonl", "w", encoding="utf-8") as handle:
                handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
            counts[config][name] = len(rows)
    return counts


def _read_rows(path: Path) -> dict[tuple[int, str], dict]:
    rows = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            row = json.loads(line)
            try:
                rows[(int(row["sentence_idx"]), str(row["gender"]))] = row
            except KeyError as exc:
                raise ValueError(f"{path} line {number}: missing field {exc}") from None
    return rows


def compare_with_release(generated_dir: str | Path, released_dir: str | Path,
                         configs: tuple[str, ...] = CONFIGS) -> list[dict[str, Any]]:
    """Share of identical sentences (and ground truths) per config and gender, over both splits.

    A row of the table: config, gender, n (sentences in the release), identical (same words),
    share (identical / n), same_ground_truth, split_mismatch (sentences in another split than released).
    """
    table = []
    for config in configs:
        generated: dict[tuple[int, str], dict] = {}
        released: dict[tuple[int, str], dict] = {}
        split_of: dict[int, str] = {}
        released_split_of: dict[int, str] = {}
        for name in SPLITS:
            gen_path, rel_path = Path(generated_dir) / config / f"{name}.jsonl", Path(released_dir) / config / f"{name}.jsonl"
            if not rel_path.is_file():
                raise FileNotFoundError(f"released file not found: {rel_path}")
            if not gen_path.is_file():
                raise FileNotFoundError(f"generated file not found: {gen_path}")
            gen_rows, rel_rows = _read_rows(gen_path), _read_rows(rel_path)
            generated.update(gen_rows)
            released.update(rel_rows)
            split_of.update({key[0]: name for key in gen_rows})
            released_split_of.update({key[0]: name for key in rel_rows})
        for gender in GENDERS:
            keys = [key for key in released if key[1] == gender]
            if not keys:
                continue
            identical = sum(generated.get(k, {}).get("sentence") == released[k]["sentence"] for k in keys)
            same_truth = sum(generated.get(k, {}).get("ground_truth") == released[k]["ground_truth"] for k in keys)
            table.append({
                "config": config, "gender": gender, "n": len(keys), "identical": identical,
                "share": identical / len(keys), "same_ground_truth": same_truth,
                "split_mismatch": sum(split_of.get(k[0]) != released_split_of[k[0]] for k in keys),
            })
    return table


def format_table(table: list[dict[str, Any]]) -> str:
    """The comparison table as Markdown."""
    lines = ["| config | gender | sentences | identical | share | same ground truth |", "|---|---|---|---|---|---|"]
    for row in table:
        lines.append(f"| {row['config']} | {row['gender']} | {row['n']} | {row['identical']} | "
                     f"{row['share']:.2%} | {row['same_ground_truth']} |")
    return "\n".join(lines)


def build_dataset(labels: str | Path, out_dir: str | Path, names_dir: str | Path | None = None,
                  split_from: str | Path | None = None, profile: str = "grammatical", seed: int = 0,
                  test_fraction: float = 0.2, strict: bool | None = None, progress: bool = True,
                  **reader_options: Any) -> dict[str, Any]:
    """Read ``labels``, generate the variants, split and write the four configs; returns a summary
    (row counts, split sizes, notes, provenance) that is also written to ``out_dir/generation.json``."""
    from geco_dataset.generation.readers import read_sources

    rules = load_rules(profile)
    labels = Path(labels)
    is_labelling = labels.suffix == ".json"
    options = dict(reader_options)
    if is_labelling:
        options.setdefault("rules", rules)
        options.setdefault("seed", seed)
    sources = read_sources(labels, names_dir=names_dir, **options)
    # The released labelling has words without a non-binary rule (typos) and D_S sentences without a subject;
    # they are kept and noted, as the release keeps them. User inputs are strict.
    strict = (not is_labelling) if strict is None else strict
    generated, notes = generate_rows(sources, rules, strict=strict, require_gendered_word=strict,
                                     progress=progress)
    split = assign_split(sorted(generated), split_from, test_fraction, seed)
    counts = write_configs(generated, split, out_dir)
    summary = {
        "labels": str(labels), "labels_sha256": sha256_file(labels), "profile": profile,
        "split": "release" if split_from else f"seeded (seed={seed}, test_fraction={test_fraction})",
        "n_sentences": len(generated), "n_train": len(split["train"]), "n_test": len(split["test"]),
        "rows": counts, "notes": notes, "provenance": base_provenance(seed),
    }
    Path(out_dir, "generation.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False), encoding="utf-8")
    return summary


def difference_examples(generated_dir: str | Path, released_dir: str | Path, config: str, gender: str,
                        limit: int = 20) -> list[dict[str, Any]]:
    """Sentences that differ from the release (for the report): id, generated and released words."""
    out = []
    for name in SPLITS:
        gen = _read_rows(Path(generated_dir) / config / f"{name}.jsonl")
        rel = _read_rows(Path(released_dir) / config / f"{name}.jsonl")
        for key, row in rel.items():
            if key[1] == gender and gen.get(key, {}).get("sentence") != row["sentence"]:
                out.append({"sentence_idx": key[0], "generated": gen.get(key, {}).get("sentence"),
                            "released": row["sentence"]})
    out.sort(key=lambda item: item["sentence_idx"])
    return out[:limit] if limit else out


__all__ = [
    "CONFIGS", "GenerationError", "assign_split", "build_dataset", "compare_with_release",
    "difference_examples", "format_table", "generate_rows", "released_split", "seeded_split", "write_configs",
]


def release_verb_forms(released_dir: str | Path, rules: RuleSet | None = None) -> dict[str, str]:
    """The form the released files give each verb after a neutral subject (majority over all rows).

    Used once to write ``rule-tables/release_verbs.tsv``: the release converted verbs from a list of its own, so
    some stay singular (``they claims``) and others lose only their final ``s`` (``they trie``).
    """
    rules = rules or load_rules("release")
    votes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for config in ("non_binary_gender_all", "non_binary_gender_subj"):
        for name in SPLITS:
            rows = _read_rows(Path(released_dir) / config / f"{name}.jsonl")
            for (sentence_id, gender), row in rows.items():
                if gender != "neutral" or (sentence_id, "male") not in rows:
                    continue
                neutral, male = row["sentence"], rows[(sentence_id, "male")]["sentence"]
                if len(neutral) != len(male):
                    continue
                for position, word in enumerate(neutral):
                    if word.lower() not in rules.neutral_subjects or male[position] == word:
                        continue
                    target = position + 1
                    while target < len(neutral) and (neutral[target].lower() in rules.adverbs_to_skip
                                                     or neutral[target].lower().endswith(rules.adverb_suffixes)):
                        target += 1
                    if target < len(neutral) and male[target][:1].isalpha() and male[target].endswith("s"):
                        votes[male[target]][neutral[target]] += 1
    return {verb: max(forms, key=forms.get) for verb, forms in sorted(votes.items())}
