"""Item-features and user-attributes files in the dashboard go through metrics_core.io."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from dashboard import loading
from dashboard.sources import Blob
from metrics_core.errors import MetricsError
from metrics_core.io import ReadLimits, set_limits

FEATURES_CSV = b"item_id,f0,f1\n7,0.25,1\n8,-1.5,2e-1\n9,0,3\n"
ATTRIBUTES_TSV = b"user\tsegment\tcountry\nu1\tnew\tFR\nu2\tloyal\tDE\n"


def _read(name, data, id_column):
    return loading._read_side(Blob.of(name, data), id_column)


def test_valid_item_features_equal_a_plain_pandas_read():
    got = _read("features.csv", FEATURES_CSV, "item_id")
    want = pd.read_csv(io.BytesIO(FEATURES_CSV), dtype={"item_id": str})
    want[["f0", "f1"]] = want[["f0", "f1"]].astype(float)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want, check_dtype=False)


def test_valid_user_attributes_equal_a_plain_pandas_read_with_the_alias_renamed():
    got = _read("users.tsv", ATTRIBUTES_TSV, "user_id")
    want = pd.read_csv(io.BytesIO(ATTRIBUTES_TSV), sep="\t", dtype=str).rename(columns={"user": "user_id"})
    pd.testing.assert_frame_equal(got.astype(str), want)


@pytest.mark.parametrize("data, needle", [
    (b"item_id,f0,f1\n1,0.5,1\n2,oops,1\n3,1,1\n", "line 3"),
    (b"x,y\n1,2\n", "required item column missing"),
])
def test_bad_item_features_give_the_library_one_line_message(data, needle):
    with pytest.raises(MetricsError) as dash:
        _read("bad_features.csv", data, "item_id")
    message = str(dash.value)
    assert "\n" not in message and message.startswith("bad_features.csv: ") and needle in message


def test_repeated_user_is_refused_naming_the_line():
    with pytest.raises(MetricsError, match=r"^users\.csv: line 3: user_id 'u1' appears more than once"):
        _read("users.csv", b"user_id,segment\nu1,a\nu1,b\n", "user_id")


def test_read_limits_of_the_library_apply_to_side_files():
    set_limits(ReadLimits(max_bytes=20))
    try:
        with pytest.raises(MetricsError) as exc:
            _read("limit_features.csv", FEATURES_CSV + b"10,1,1\n", "item_id")  # not cached yet
    finally:
        set_limits(None)
    assert "\n" not in str(exc.value) and "max-bytes" in str(exc.value).lower().replace("_", "-")
