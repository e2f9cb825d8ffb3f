"""The Space's stores come from the Space variables and secrets the Hub sets; without a token it is read-only."""

from __future__ import annotations

import pytest

from leaderboard_space import submit_seam
from leaderboard_space.hub_config import READ_ONLY_MESSAGE, stores_from_env


def test_without_hub_variables_the_stores_are_local_folders():
    stores = stores_from_env({})
    assert (stores.results, stores.requests, stores.token, stores.read_only) == ("results", "requests", None, False)
    stores = stores_from_env({"GECOBENCH_RESULTS": "/data/r", "GECOBENCH_REQUESTS": "/data/q"})
    assert (stores.results, stores.requests) == ("/data/r", "/data/q")


def test_space_variables_name_hub_datasets_and_the_token_decides_read_only():
    env = {"GECOBENCH_RESULTS_REPO": "org/gecobench-results", "GECOBENCH_REQUESTS_REPO": "org/gecobench-requests"}
    stores = stores_from_env(env)
    assert stores.results == "hf://datasets/org/gecobench-results"
    assert stores.requests == "hf://datasets/org/gecobench-requests"
    assert stores.read_only and "read-only" in stores.describe()
    writable = stores_from_env({**env, "HF_TOKEN": "hf_secret"})
    assert not writable.read_only and writable.token == "hf_secret" and "hf_secret" not in writable.describe()
    # a local requests folder is writable without any token
    assert not stores_from_env({"GECOBENCH_RESULTS_REPO": "org/r"}).read_only


@pytest.mark.parametrize("value", ["gecobench-results", "org/", "a/b/c"])
def test_a_malformed_repo_variable_is_named(value):
    with pytest.raises(ValueError, match="GECOBENCH_REQUESTS_REPO"):
        stores_from_env({"GECOBENCH_REQUESTS_REPO": value})


def test_a_read_only_space_refuses_submissions_before_touching_the_store(monkeypatch, tmp_path):
    monkeypatch.setenv("GECOBENCH_REQUESTS_REPO", "org/gecobench-requests")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)

    def no_store(location):
        raise AssertionError("a read-only Space must not open the requests store to write")

    monkeypatch.setattr(submit_seam, "_store", no_store)
    upload = tmp_path / "explainer.py"
    upload.write_text("x = 1\n")
    metadata = {"name": "my_explainer", "version": "1.0.0", "authors": "A. Author", "description": "test",
                "license": "MIT", "contact": "a@example.org"}
    message = submit_seam.submit_form(None, "code", metadata, str(upload))
    assert message == READ_ONLY_MESSAGE
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    with pytest.raises(AssertionError, match="must not open"):  # with a token it goes on to the store
        submit_seam.submit_form(None, "code", metadata, str(upload))
