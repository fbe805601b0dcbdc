"""AppTest: hostile uploads and URL parameters end in a one-line message on the page,
never in an exception or a crash of the server process."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from dashboard import demo, text  # noqa: E402
from test_dashboard_pages import app, data_page, frame_with, page, small_demo  # noqa: E402


@pytest.fixture(autouse=True)
def private_store(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))


def deep_json_run(depth: int = 20_000) -> bytes:
    """Two rows of a result file; the second has an extra field nesting ``depth`` arrays (about 40 KB)."""
    return (b'{"user_id": "u1", "item_id": "i1", "score": 0.9}\n'
            b'{"user_id": "u1", "item_id": "i2", "score": 0.5, "extra": ' + b"[" * depth + b"]" * depth + b"}\n")


def analysis_id(at) -> str:
    value = at.query_params["analysis"]
    return value[0] if isinstance(value, list) else value


def test_deeply_nested_json_upload_and_its_stored_link_show_one_line():
    d = small_demo()
    at = data_page()
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", demo.to_csv_bytes(d.qrels), "text/csv"))
    at.file_uploader(key="upload_runs_0").set_value([("deep.jsonl", deep_json_run(), "application/json")])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    expected = text.md("deep.jsonl: line 2: JSON nested deeper than 100 levels")
    assert any(expected in e.value for e in at.error), [e.value for e in at.error]
    # the upload was kept: opening its link (a new session, as after a restart) says the same
    stored = app(analysis=analysis_id(at))
    page(stored, "data")
    assert any(expected in e.value for e in stored.error), [e.value for e in stored.error]
    page(stored, "overview")
    assert not stored.exception


@pytest.mark.parametrize("key, raw, default", [
    ("k", "inf", 10), ("k", "-inf", 10), ("k", "1e999", 10), ("k", "nan", 10), ("k", "2.5", 10),
    ("beta", "1e308", 1.0), ("beta", "inf", 1.0), ("threshold", "nan", 0.5), ("relevance_threshold", "-1e999", 1.0),
])
def test_number_in_the_address_that_metrics_core_refuses_falls_back_to_the_default(key, raw, default):
    from metrics_core.metrics import conventions
    from metrics_core.errors import MetricsError
    from metrics_core.metrics.registry import check_cutoff

    with pytest.raises(MetricsError) as refused:  # the library's own message for the same value
        check_cutoff(raw, 1000, "k") if key == "k" else conventions.check(key, raw)
    at = app(**{key: raw})
    warnings = [w.value for w in at.warning]
    assert any(text.md(str(refused.value)) in w and text.md(f"default {key} = {default:g}") in w
               for w in warnings), warnings
    assert key not in at.query_params
    assert at.number_input(key=key).value == default
    if key == "k":  # the Overview computed at the default cutoff
        assert "ndcg@10" in frame_with(at, "ndcg@10").columns
    at.run()  # said once: the address no longer holds the value
    assert not at.exception and not any(text.md(str(refused.value)) in w.value for w in at.warning)


def test_valid_numbers_in_the_address_are_kept():
    at = app(k="20", beta="2", threshold="0.25")
    assert at.number_input(key="k").value == 20 and at.number_input(key="beta").value == 2.0
    assert at.number_input(key="threshold").value == 0.25
    assert not any("was not used" in w.value for w in at.warning)


def runs_as_files(d):
    return [(f"{name}.csv", demo.to_csv_bytes(run), "text/csv") for name, run in d.runs.items()]


@pytest.mark.parametrize("how", ["expired", "removed"])
def test_upload_after_the_working_copy_expired_starts_a_new_one_and_says_so(monkeypatch, how):
    import time

    from metrics_core.store import AnalysisStore

    d = small_demo()
    at = data_page()
    at.file_uploader(key="upload_runs_0").set_value(runs_as_files(d))
    at.run()
    first = analysis_id(at)
    if how == "expired":  # 31 days later than the default 30 days without use
        later = time.time() + 31 * 86400
        monkeypatch.setattr(AnalysisStore, "_now", lambda self: later)
    else:
        assert AnalysisStore().delete_working(first, owner=at.session_state["mcd_owner_secret"])  # its own browser
    assert not AnalysisStore().exists(first)
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", demo.to_csv_bytes(d.qrels), "text/csv"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    second = analysis_id(at)
    assert second != first
    warnings = [w.value for w in at.warning]
    said = text.md(f"Your working copy {first} is no longer on the server")
    assert any(said in w and text.md(f"new working copy {second}") in w for w in warnings), warnings
    # nothing was dropped: the new copy holds the earlier files and this upload
    saved = AnalysisStore().load(second)
    assert sorted(f.name for f in saved.files_with_role("run")) == sorted(f"{n}.csv" for n in d.runs)
    assert [f.data for f in saved.files_with_role("qrels")] == [demo.to_csv_bytes(d.qrels)]
    page(at, "overview")
    assert frame_with(at, "ndcg@10").shape[0] == len(d.runs)


@pytest.fixture(scope="module")
def curves_threshold_slider(tmp_path_factory) -> tuple[float, float, float]:
    """The Curves page's threshold slider opened without the parameter (one run for the module's
    tests): its value (the opening threshold), its minimum and its maximum."""
    with pytest.MonkeyPatch.context() as m:
        m.setenv("METRICS_CORE_STORE_DIR", str(tmp_path_factory.mktemp("store")))
        slider = page(app(), "curves").slider(key="curves_threshold")
        return slider.value, slider.min, slider.max


@pytest.mark.parametrize("raw", ["nan", "inf", "-inf", "NaN"])
def test_a_page_number_in_the_address_that_is_not_finite_is_ignored(raw, curves_threshold_slider):
    """``?curves_threshold=nan`` (a page's bound slider, not a convention): the Curves page draws,
    its slider at the opening threshold as without the parameter."""
    opening, _, _ = curves_threshold_slider
    at = page(app(curves_threshold=raw), "curves")
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.slider(key="curves_threshold").value == opening


def test_a_finite_page_number_in_range_in_the_address_is_kept(curves_threshold_slider):
    _, low, high = curves_threshold_slider
    inside = low + (high - low) / 3
    kept = page(app(curves_threshold=repr(inside)), "curves")
    assert kept.slider(key="curves_threshold").value == pytest.approx(inside)


def test_a_rounded_score_and_a_lone_surrogate_in_uploads_are_one_line_each():
    d = small_demo()
    user, item = d.qrels["user_id"].iat[0], d.qrels["item_id"].iat[0]
    mixed = (f'{{"user_id": "{user}", "item_id": "{item}", "score": 0.9}}\n'
             f'{{"user_id": "{user}", "item_id": "x", "score": 9007199254740993}}\n').encode()
    half = (f'{{"user_id": "{user}", "item_id": "{item}", "score": 0.9}}\n'
            f'{{"user_id": "{user}", "item_id": "x\\ud800", "score": 0.5}}\n').encode()
    at = data_page()
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", demo.to_csv_bytes(d.qrels), "text/csv"))
    at.file_uploader(key="upload_runs_0").set_value([("mixed.jsonl", mixed, "application/json"),
                                                     ("half.jsonl", half, "application/json")])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    for expected in ("mixed.jsonl: line 2: score column 'score' has the whole number '9007199254740993', which a "
                     "64-bit float (in which scores are computed) cannot hold exactly: it would be read as "
                     "9007199254740992",
                     "half.jsonl: line 2: column 'item_id', value 'x\\ud800' holds a lone surrogate \\ud800"):
        assert any(text.md(expected) in e for e in errors), (expected, errors)
    assert not any("check its format" in e for e in errors), errors


def test_a_1000_character_file_name_is_kept_and_shown_cut_with_the_whole_name_at_hand():
    """The longest name the analysis store keeps (1,000 characters): saved, cut on buttons, whole in the table."""
    d = small_demo()
    long = ("a_very_long_model_name_" * 60)[:996]
    at = data_page()
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", demo.to_csv_bytes(d.qrels), "text/csv"))
    at.file_uploader(key="upload_runs_0").set_value([(f"{long}.csv", demo.to_csv_bytes(d.runs["popularity"]),
                                                      "text/csv")])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error and not [w for w in at.warning if "could not be saved" in w.value], \
        [e.value for e in [*at.error, *at.warning]]
    files = next(df.value for df in at.dataframe if "file" in df.value.columns)
    assert f"{long}.csv" in set(files["file"]) and long in set(files["model"])  # whole in the table
    (remove,) = [b for b in at.button if b.key == f"remove_{long}"]
    assert remove.label.endswith("…") and len(remove.label.replace("\\", "")) <= len("Remove ") + 60
    assert remove.help == f"Remove {text.md(long + '.csv', 4000)}"  # whole on hover
    for name in ("overview", "compare", "failures"):
        page(at, name)  # the model's pages open and keep the name as text
    stored = app(analysis=analysis_id(at))  # saved: a new session on its address has it
    page(stored, "data")
    files = next(df.value for df in stored.dataframe if "file" in df.value.columns)
    assert f"{long}.csv" in set(files["file"])


def test_a_1204_character_file_name_refuses_that_file_only_and_keeps_the_others_of_the_selection():
    """Three runs selected together, the middle one named with 1,204 characters: one line names it
    (cut), says the limit and to rename it; the two others and the ground truth are in the analysis
    and in its saved working copy, which a new session on the address shows."""
    d = small_demo()
    long = ("a_very_long_model_name_" * 60)[:1200] + ".csv"
    assert len(long) == 1204
    at = data_page()
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", demo.to_csv_bytes(d.qrels), "text/csv"))
    at.file_uploader(key="upload_runs_0").set_value([
        ("popularity.csv", demo.to_csv_bytes(d.runs["popularity"]), "text/csv"),
        (long, demo.to_csv_bytes(d.runs["popularity"]), "text/csv"),
        ("two_tower.csv", demo.to_csv_bytes(d.runs["two_tower"]), "text/csv")])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    (line,) = [e for e in errors if "was not loaded" in e]
    assert line.startswith(text.md(long[:39] + "…")) and "\n" not in line and len(line) < 300, line
    assert text.md("has 1204 characters; at most 1000 are kept, rename the file, and add it again") in line
    assert not [w.value for w in at.warning if "could not be saved" in w.value]
    files = next(df.value for df in at.dataframe if "file" in df.value.columns)
    assert set(files["file"]) == {"qrels.csv", "popularity.csv", "two_tower.csv"}, set(files["file"])
    at.run()  # said once
    assert not [e.value for e in at.error if "was not loaded" in e.value]
    stored = app(analysis=analysis_id(at))  # the working copy holds the two runs and the truth
    page(stored, "data")
    files = next(df.value for df in stored.dataframe if "file" in df.value.columns)
    assert set(files["file"]) == {"qrels.csv", "popularity.csv", "two_tower.csv"}, set(files["file"])
