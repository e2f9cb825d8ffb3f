"""Loading zoo checkpoints and pushing them to the Hub."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gecobench.models.training import INFO_FILE

REQUIRED_INFO_FIELDS = ("regime", "base_model", "base_revision", "geco_config", "seed", "num_labels")


def read_model_info(path: str | Path) -> dict[str, Any]:
    """The ``gecobench_model.json`` of a checkpoint folder, checked for the fields every consumer needs."""
    info_path = Path(path) / INFO_FILE
    if not info_path.is_file():
        raise FileNotFoundError(f"{info_path} not found: {path} is not a GECOBench zoo checkpoint folder")
    try:
        info = json.loads(info_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{info_path} is not valid JSON: {err}") from err
    missing = [f for f in REQUIRED_INFO_FIELDS if f not in info]
    if missing:
        raise ValueError(f"{info_path} lacks the field(s) {missing}")
    return info


def load_zoo_model(path: str | Path) -> tuple[Any, Any, dict[str, Any]]:
    """Load a zoo checkpoint folder: ``(model in eval mode, tokenizer, info)``.

    ``path`` may also be a Hub repo id when the Hub is reachable; it is downloaded first.
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    import gecobench.models.ola
    import gecobench.models.zero_shot  # noqa: F401
    from gecobench.models.residual_ola import (
        ResidualOLAConfig,
        ResidualOLAForSequenceClassification,
        is_residual_ola_config_dict,
    )

    folder = Path(path)
    if not folder.is_dir():
        from gecobench.models.base_models import hub_offline

        if hub_offline() or str(path).count("/") != 1:
            raise FileNotFoundError(f"zoo checkpoint folder {path} not found (offline, only local folders load)")
        from huggingface_hub import snapshot_download

        folder = Path(snapshot_download(str(path)))
    info = read_model_info(folder)
    config_dict = _read_config_dict(folder)
    if config_dict.get("model_type") == "gecobench_ola" and is_residual_ola_config_dict(config_dict):
        # A pre-1.0 checkpoint: "OLA" was then the residual model; load it as what it is, never as the paper's OLA.
        import logging

        logging.getLogger(__name__).warning(
            "%s is a pre-1.0 OLA checkpoint (residual model with position embeddings); loaded as "
            "ResidualOLAForSequenceClassification, which is not the paper's OLA", folder)
        fields = {k: v for k, v in config_dict.items() if k not in ("model_type", "architectures", "transformers_version")}
        model = ResidualOLAForSequenceClassification.from_pretrained(folder, config=ResidualOLAConfig.from_dict(fields))
    else:
        model = AutoModelForSequenceClassification.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    if model.config.num_labels != info["num_labels"]:
        raise ValueError(
            f"{folder}: model has {model.config.num_labels} labels but {INFO_FILE} says {info['num_labels']}"
        )
    model.eval()
    return model, tokenizer, info


def _read_config_dict(folder: Path) -> dict[str, Any]:
    """The checkpoint's ``config.json`` as a dict ({} when absent: transformers then names what is missing)."""
    path = folder / "config.json"
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from err


def push_checkpoint_to_hub(folder: str | Path, repo_id: str, token: str | None = None, private: bool = False) -> str:
    """Upload a checkpoint folder (weights, tokenizer, info, card) to a Hub model repo; return its URL.

    ``token`` defaults to the logged-in token or ``HF_TOKEN``. Raises RuntimeError with the reason when the
    Hub cannot be reached.
    """
    from huggingface_hub import HfApi

    from gecobench.models.base_models import hub_offline

    read_model_info(folder)
    if hub_offline():
        raise RuntimeError(f"cannot push {folder} to {repo_id}: HF_HUB_OFFLINE is set; unset it and log in")
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="model", exist_ok=True, private=private)
        api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="model",
                          commit_message="Upload GECOBench zoo checkpoint")
    except Exception as err:
        raise RuntimeError(f"pushing {folder} to the Hub repo {repo_id} failed: {err}") from err
    return f"https://huggingface.co/{repo_id}"
