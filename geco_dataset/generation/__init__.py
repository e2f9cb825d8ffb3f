"""GECO generation: the alteration engine, its rule tables and readers (Wilming et al., GECOBench, 2025).

Build the four GECO configs from a labelled source (the released labelling JSON, JSONL or inline markup)::

    from geco_dataset.generation import build_dataset, compare_with_release
    build_dataset("labels.txt", "out/")
"""

from geco_dataset.generation.build import (
    CONFIGS,
    assign_split,
    build_dataset,
    compare_with_release,
    difference_examples,
    format_table,
    generate_rows,
    released_split,
    seeded_split,
    write_configs,
)
from geco_dataset.generation.engine import (
    GENDERS,
    TARGETS,
    VERSIONS,
    GenerationError,
    SourceSentence,
    derive_neutral,
    ground_truth,
    make_variants,
    sentence_rows,
)
from geco_dataset.generation.readers import (
    load_name_lists,
    parse_jsonl_record,
    parse_markup,
    read_jsonl,
    read_labelling_json,
    read_markup,
    read_sources,
)
from geco_dataset.generation.rules import PROFILES, RuleSet, load_rules

__all__ = [
    "CONFIGS", "GENDERS", "PROFILES", "TARGETS", "VERSIONS", "GenerationError", "RuleSet", "SourceSentence",
    "assign_split", "build_dataset", "compare_with_release", "derive_neutral",
    "difference_examples", "format_table", "generate_rows", "ground_truth", "load_name_lists", "load_rules",
    "make_variants", "parse_jsonl_record", "parse_markup", "read_jsonl", "read_labelling_json", "read_markup",
    "read_sources", "released_split", "seeded_split", "sentence_rows", "write_configs",
]
