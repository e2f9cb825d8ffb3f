"""Data of GECOBench Hub: the GECO builder and the Spanish templates/lexicons builder.

``geco_dataset.generation`` (the GECO generation engine) is a separate subpackage and is not imported here.
"""

from __future__ import annotations

from geco_dataset.geco import (
    GECO_CONFIGS,
    GECO_EXPECTED_ROWS,
    GECO_SPLITS,
    LABEL_NAMES,
    Geco,
    GecoChecksumError,
    GecoDataError,
    GecoDownloadError,
    default_geco_dir,
    geco_fingerprint,
    load_geco,
)
from geco_dataset.spanish import (
    LEXICON_CONFIGS,
    LEXICON_SCHEMES,
    MASK_PLACEHOLDER,
    SPANISH_CONFIGS,
    TEMPLATE_CONFIGS,
    SpanishDataError,
    SpanishGenderTemplates,
    default_spanish_dir,
    download_spanish_data,
    download_spanish_file,
    load_lexicon,
    load_spanish_lexicon_dataset,
    load_spanish_templates,
    render_with_mask,
)

__all__ = [
    "GECO_CONFIGS",
    "GECO_EXPECTED_ROWS",
    "GECO_SPLITS",
    "LABEL_NAMES",
    "LEXICON_CONFIGS",
    "LEXICON_SCHEMES",
    "MASK_PLACEHOLDER",
    "SPANISH_CONFIGS",
    "TEMPLATE_CONFIGS",
    "Geco",
    "GecoChecksumError",
    "GecoDataError",
    "GecoDownloadError",
    "SpanishDataError",
    "SpanishGenderTemplates",
    "default_geco_dir",
    "default_spanish_dir",
    "download_spanish_data",
    "download_spanish_file",
    "geco_fingerprint",
    "load_geco",
    "load_lexicon",
    "load_spanish_lexicon_dataset",
    "load_spanish_templates",
    "render_with_mask",
    "summary_table",
]


def summary_table(geco_dir: str | None = None, spanish_dir: str | None = None) -> str:
    """A plain-text table of every GECO and Spanish-templates config with its splits and row counts."""
    lines = [f"{'dataset':<18} {'config':<28} {'split':<6} {'rows':>6}", "-" * 61]
    for config in GECO_CONFIGS:
        for split in GECO_SPLITS:
            n = len(load_geco(config, split, data_dir=geco_dir))
            lines.append(f"{'geco':<18} {config:<28} {split:<6} {n:>6}")
    for config in TEMPLATE_CONFIGS:
        n = len(load_spanish_templates(config, data_dir=spanish_dir))
        lines.append(f"{'spanish_templates':<18} {config:<28} {'train':<6} {n:>6}")
    for config in LEXICON_CONFIGS:
        n = len(load_spanish_lexicon_dataset(config, data_dir=spanish_dir))
        lines.append(f"{'spanish_templates':<18} {config:<28} {'train':<6} {n:>6}")
    return "\n".join(lines)
