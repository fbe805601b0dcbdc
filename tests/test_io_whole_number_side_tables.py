"""User-attributes and item-features tables read ids as the runs and the ground truth do: exactly as
written by default (``12.0`` and ``12`` two ids), as whole numbers when the user chose it
(``whole_number_ids``, the command line's ``--whole-number-ids``), so a table joins the runs it
belongs to. Expected values are written here by hand."""

from __future__ import annotations

import pytest

from metrics_core.errors import MetricsError
from metrics_core.io import read_item_features, read_user_attributes


def test_user_attributes_keep_ids_exact_unless_whole_numbers_are_chosen():
    data = b"user_id,segment\n12.0,a\n7,b\nx1.0,c\n"
    exact, _ = read_user_attributes(data, name="users.csv")
    assert exact["user_id"].tolist() == ["12.0", "7", "x1.0"]
    whole, _ = read_user_attributes(data, name="users.csv", whole_number_ids=True)
    assert whole["user_id"].tolist() == ["12", "7", "x1.0"] and whole["segment"].tolist() == ["a", "b", "c"]


def test_two_writings_of_one_user_are_one_user_repeated_once_read_as_whole_numbers():
    data = b"user_id,segment\n12,a\n12.0,b\n"
    assert read_user_attributes(data, name="users.csv")[0]["user_id"].tolist() == ["12", "12.0"]
    with pytest.raises(MetricsError, match=r"users\.csv: line 3: user_id '12' appears more than once"):
        read_user_attributes(data, name="users.csv", whole_number_ids=True)


def test_item_features_keep_ids_exact_unless_whole_numbers_are_chosen():
    data = b"item_id,tags\n101.0,a|b\n102,c\n"
    assert read_item_features(data, name="items.csv")[0]["item_id"].tolist() == ["101.0", "102"]
    whole, _ = read_item_features(data, name="items.csv", whole_number_ids=True)
    assert whole["item_id"].tolist() == ["101", "102"]
