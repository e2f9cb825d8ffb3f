"""geco_common.lazy: a package's names that load on first use (gecobench's front door, submissions' stores)."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from geco_common.lazy import lazy_names


def test_a_lazy_name_is_imported_on_first_read_and_kept() -> None:
    package = types.ModuleType("fake_package")
    package.__getattr__, package.__dir__ = lazy_names("fake_package", vars(package), {"dumps": "json"})
    assert "dumps" not in vars(package)
    assert "dumps" in dir(package)
    import json

    assert package.dumps is json.dumps
    assert vars(package)["dumps"] is json.dumps  # kept: the next read does not go through __getattr__


def test_an_unknown_name_raises_attribute_error_naming_the_package() -> None:
    package = types.ModuleType("fake_package")
    package.__getattr__, package.__dir__ = lazy_names("fake_package", vars(package), {"dumps": "json"})
    with pytest.raises(AttributeError, match="module 'fake_package' has no attribute 'loads'"):
        package.loads  # noqa: B018


def test_the_submissions_package_loads_its_stores_only_when_asked() -> None:
    code = ("import sys, submissions; before = 'submissions.requests' in sys.modules; "
            "submissions.RequestStore; print(before, 'submissions.requests' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]
