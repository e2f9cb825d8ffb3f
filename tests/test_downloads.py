"""The released files come from their pinned upstream URLs through the 🤗 ``datasets`` DownloadManager, checksum
verified: a fake raw-file host on 127.0.0.1 serves the shared files under their upstream paths."""

from __future__ import annotations

import http.server
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import datasets
import pytest

import geco_common.paths
import geco_dataset._paths
from geco_dataset import geco, spanish
from geco_dataset.spanish_sources import (
    SPANISH_PREDICTION_MODELS,
    SPANISH_REPO,
    SPANISH_SHA256,
    SPANISH_UPSTREAM,
)


class _RawHost(http.server.ThreadingHTTPServer):
    """Serves ``/<owner>/<repo>/<commit>/<path>`` from a table of local files; records every requested path."""

    def __init__(self, files: dict[str, Path]):
        self.files = files
        self.requested: list[str] = []
        self.corrupt: set[str] = set()  # URL paths served with one byte changed
        super().__init__(("127.0.0.1", 0), _RawHandler)


class _RawHandler(http.server.BaseHTTPRequestHandler):
    server: _RawHost

    def do_GET(self) -> None:
        self.server.requested.append(self.path)
        local = self.server.files.get(self.path)
        if local is None:
            self.send_error(404)
            return
        body = local.read_bytes()
        if self.path in self.server.corrupt:
            body = body[:-1] + bytes([body[-1] ^ 1])
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.server.requested.append("HEAD " + self.path)
        local = self.server.files.get(self.path)
        if local is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(local.stat().st_size))
        self.end_headers()

    def log_message(self, *args) -> None:  # keep the test output clean
        pass


def _upstream_table(shared_data: Path) -> dict[str, Path]:
    """URL path on the raw host -> the shared file with the same bytes (the table SOURCES.md documents)."""
    table = {
        f"/{SPANISH_REPO}/{commit}/{upstream}": shared_data / "spanish" / relative
        for relative, (commit, upstream) in SPANISH_UPSTREAM.items()
    }
    for config in geco.GECO_CONFIGS:
        for split in geco.GECO_SPLITS:
            table[f"/{geco.GECO_REPO}/{geco.GECO_COMMIT}/data/dataset/{geco.GECO_FOLDERS[config]}/{split}.jsonl"] = (
                shared_data / "geco" / geco.geco_file_key(config, split)
            )
    return table


@pytest.fixture
def raw_host(shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[_RawHost]:
    """A machine without the shared folder whose raw-file host is a local server (no real network)."""
    server = _RawHost(_upstream_table(shared_data))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv(geco_dataset._paths.RAW_BASE_URL_ENV, f"http://127.0.0.1:{server.server_address[1]}")
    # no local copy anywhere: neither the env folders nor <repo>/../shared/data
    monkeypatch.delenv(geco.GECO_DIR_ENV, raising=False)
    monkeypatch.delenv(spanish.SPANISH_DIR_ENV, raising=False)
    monkeypatch.delenv(geco_common.paths.SHARED_DATA_ENV, raising=False)
    monkeypatch.setattr(geco_common.paths, "REPO_ROOT", tmp_path / "clone" / "repo")
    monkeypatch.setenv(spanish.SPANISH_CACHE_ENV, str(tmp_path / "gecobench-cache"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-datasets"))
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)  # conftest sets the suite offline
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-datasets")
    monkeypatch.setattr(datasets.config, "DOWNLOADED_DATASETS_PATH", tmp_path / "hf-datasets" / "downloads")
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_every_spanish_file_has_a_pinned_url_and_the_shared_checksum(shared_data: Path):
    listed = {}
    for line in (shared_data / "spanish" / "SHA256SUMS").read_text().splitlines():
        digest, relative = line.split()
        listed[relative] = digest
    released = {r: d for r, d in listed.items() if not r.startswith("published/")}  # published/ is derived here
    assert SPANISH_SHA256 == released
    assert set(SPANISH_UPSTREAM) == set(released)
    assert len(SPANISH_PREDICTION_MODELS) == 20
    for relative in released:
        url = spanish.spanish_url(relative)
        assert url.startswith(f"https://raw.githubusercontent.com/{SPANISH_REPO}/") and len(url.split("/")[5]) == 40


def test_geco_config_downloads_from_the_pinned_commit(raw_host: _RawHost, tmp_path: Path):
    assert geco.default_geco_dir() is None
    rows = geco.load_geco("binary_all", "test", cache_dir=tmp_path / "hf")
    assert len(rows) == geco.GECO_EXPECTED_ROWS[("binary_all", "test")]
    fetched = [p for p in raw_host.requested if not p.startswith("HEAD ")]
    # only the split asked for is fetched
    assert fetched == [f"/{geco.GECO_REPO}/{geco.GECO_COMMIT}/data/dataset/binary_gender_all/test.jsonl"]


def test_geco_download_with_other_bytes_is_refused(raw_host: _RawHost, tmp_path: Path):
    url_path = f"/{geco.GECO_REPO}/{geco.GECO_COMMIT}/data/dataset/binary_gender_subj/train.jsonl"
    raw_host.corrupt.add(url_path)
    with pytest.raises(geco.GecoChecksumError, match="binary_gender_subj/train.jsonl"):
        geco.load_geco("binary_subject", "train", cache_dir=tmp_path / "hf")


def test_spanish_builder_configs_download_from_their_pinned_commits(raw_host: _RawHost, tmp_path: Path):
    assert spanish.default_spanish_dir() is None
    older = spanish.load_spanish_templates("templates_2022", cache_dir=tmp_path / "hf")
    assert len(older) == 8 * 12 * 2
    assert any("describiría como [MASK]" in text for text in older["text"])  # the 2022 set's template 8
    lexicon = spanish.load_spanish_lexicon_dataset("lexicon_wiggins", cache_dir=tmp_path / "hf")
    local = spanish.read_lexicon_rows("wiggins", raw_host.files[
        f"/{SPANISH_REPO}/{SPANISH_UPSTREAM['lexicons/wiggins_accept_reject_love_status.tsv'][0]}/"
        f"{SPANISH_UPSTREAM['lexicons/wiggins_accept_reject_love_status.tsv'][1]}"
    ])
    assert lexicon.to_list() == local
    # the plain loader (no builder) downloads too
    assert spanish.load_lexicon("supersenses_top10") == {
        row["word"]: row["category"] for row in spanish.read_lexicon_rows(
            "supersenses_top10", raw_host.files[f"/{SPANISH_REPO}/{'/'.join(SPANISH_UPSTREAM['lexicons/supersenses_top10.json'])}"]
        )
    }


def test_download_spanish_data_lays_out_every_released_file_once(raw_host: _RawHost, shared_data: Path, tmp_path: Path):
    dest = spanish.download_spanish_data(tmp_path / "spanish", cache_dir=tmp_path / "hf", progress=False)
    for relative in SPANISH_UPSTREAM:
        assert (dest / relative).read_bytes() == (shared_data / "spanish" / relative).read_bytes(), relative
    requested = len(raw_host.requested)
    assert {p for p in raw_host.requested if not p.startswith("HEAD ")} == set(raw_host.files) - {
        p for p in raw_host.files if "/gecobench/" in p and p.endswith(".jsonl")
    }
    spanish.download_spanish_data(dest, cache_dir=tmp_path / "hf", progress=False)
    assert len(raw_host.requested) == requested  # everything already there and verified: nothing fetched


def test_a_corrupted_spanish_download_names_the_file(raw_host: _RawHost, tmp_path: Path):
    relative = "predictions/top29/bert-base-multilingual-cased.tsv"
    raw_host.corrupt.add(f"/{SPANISH_REPO}/{'/'.join(SPANISH_UPSTREAM[relative])}")
    with pytest.raises(spanish.SpanishDataError, match=relative):
        spanish.download_spanish_file(relative, cache_dir=tmp_path / "hf")
    with pytest.raises(spanish.SpanishDataError, match=relative):
        spanish.download_spanish_data(tmp_path / "spanish", cache_dir=tmp_path / "hf", progress=False)
    assert not (tmp_path / "spanish" / relative).exists()


def test_the_importer_reads_the_downloaded_published_predictions(raw_host: _RawHost, shared_data: Path, tmp_path: Path):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import import_spanish_predictions

    from gecobench.spanish import import_recorded_predictions
    from gecobench.store import LocalStore

    assert import_spanish_predictions.main(["-k", "10", "--store", str(tmp_path / "store"), "--no-progress"]) == 0
    downloaded = LocalStore(tmp_path / "store")
    from_shared = LocalStore(tmp_path / "store-shared")
    expected = import_recorded_predictions(shared_data / "spanish" / "predictions", from_shared, k=10, progress=False)
    assert len(expected) == 20
    stored = sorted(Path(name).stem for name in downloaded.document_files("model_bias"))
    assert stored == sorted(expected)
    fetched = {p for p in raw_host.requested if "Spanish_Genre_10" in p and not p.startswith("HEAD ")}
    assert len(fetched) == 20
