"""``metrics-core publish`` and ``mc.publish``: a read-only snapshot whose link opens the dashboard on
the same brief as the library's :func:`metrics_core.brief.build.build_brief` over the same files and
choices, on SQLite and on PostgreSQL; bad input is one line naming what to fix."""

from __future__ import annotations

import math
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

import metrics_core as mc  # noqa: E402
from dashboard import demo  # noqa: E402
from metrics_core.brief import build as mb  # noqa: E402
from metrics_core.brief import text as bt
from metrics_core.cli import main  # noqa: E402
from metrics_core.store import AnalysisStore, StoreError  # noqa: E402

from test_dashboard_pages import APP, TIMEOUT  # noqa: E402
from test_store import backend, postgres  # noqa: E402,F401 - the store fixtures (SQLite and PostgreSQL)

TITLE = "Two-tower *v3* <b>against</b> popularity"
NOTES = "exponential gain; look at [new users](http://x.test)"


@pytest.fixture()
def files(tmp_path):
    d = demo.make_demo(n_users=150, n_items=120, list_length=15, seed=3)
    return demo.write_demo_files(tmp_path / "files", d)


def _plain(markdown: str) -> str:
    """Markdown as the reader sees it (the dashboard escapes every character markdown would read)."""
    return markdown.replace("\\", "")


def _reference_brief(files, primary, users="all", gain="linear"):
    """The brief computed here from the CSV files read by pandas (not by the store or the dashboard)."""
    truth = pd.read_csv(files["qrels"], dtype={"user_id": str, "item_id": str})
    evaluations = {}
    for name in ("popularity", "two_tower", "matrix_factorization"):
        run = pd.read_csv(files[name], dtype={"user_id": str, "item_id": str})
        evaluations[name] = mc.evaluate(run, truth, metrics=primary, gain=gain)
    attributes = pd.read_csv(files["users"], dtype=str)
    decision = mc.Decision("popularity", ("two_tower", "matrix_factorization"), tuple(primary), users=users)
    return mb.build_brief(evaluations, decision, attributes=attributes, title=TITLE, notes=NOTES)


def _cli(files, capsys, *extra):
    args = ["publish", "--run", str(files["popularity"]), "--run", str(files["two_tower"]),
            "--run", str(files["matrix_factorization"]), "--qrels", str(files["qrels"]),
            "--user-attributes", str(files["users"]), "--title", TITLE, "--notes", NOTES, *extra]
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _open(link: str) -> AppTest:
    """A fresh browser session opening ``link``."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, values in parse_qs(urlsplit(link).query).items():
        at.query_params[key] = values[-1]
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _shown_brief(at: AppTest) -> tuple[str, str, list[str]]:
    notes = [t.value for t in at.text]
    return _plain(at.title[0].value), notes[0] if notes else "", [
        _plain(m.value)[2:] for m in at.markdown if m.value.startswith("- ")]


def test_the_published_link_opens_on_the_same_brief(backend, files, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv("METRICS_CORE_STORE_URL", backend.location_url)
    monkeypatch.setenv("METRICS_CORE_DASHBOARD_URL", "https://dash.example.org/")
    code, out, err = _cli(files, capsys, "--primary", "ndcg@5,recall@5", "--users", "served",
                          "--gain", "exponential")
    assert code == 0, err
    lines = out.splitlines()
    link = lines[0].removeprefix("link: ")
    delete_link = lines[1].split(": ", 1)[1]
    assert link.startswith("https://dash.example.org/?analysis=")
    aid = parse_qs(urlsplit(link).query)["analysis"][0]
    assert parse_qs(urlsplit(delete_link).query)["analysis"] == [aid]
    assert urlsplit(delete_link).path == "/share"

    reference = _reference_brief(files, ["ndcg@5", "recall@5"], users="served", gain="exponential")
    expected = bt.verdict_lines(reference) + bt.head_to_head_lines(reference)
    assert len(expected) > len(bt.verdict_lines(reference))  # the best two are both challengers here
    assert lines[3:] == expected  # the command prints the verdicts and the best-two lines the link shows
    title, notes, shown = _shown_brief(_open(link))
    assert (title, notes) == (TITLE, NOTES)
    assert shown == expected

    token = parse_qs(urlsplit(delete_link).query)["delete"][0]
    store = AnalysisStore()
    assert store.load(aid).kind == "snapshot"
    store.delete_snapshot(aid, token)
    with pytest.raises(StoreError):
        store.load(aid)
    store.close()


def test_mc_publish_from_python_with_the_default_choices(files, tmp_path):
    store = AnalysisStore(tmp_path / "store")
    published = mc.publish([files["popularity"], files["two_tower"], files["matrix_factorization"]], files["qrels"],
                           title=TITLE, notes=NOTES, user_attributes=files["users"], store=store,
                           base_url="http://localhost:9999")
    assert published.link == f"http://localhost:9999/?analysis={published.id}"
    saved = store.load(published.id)
    assert saved.title == TITLE and saved.notes == NOTES
    # the choices are stored as the dashboard's Share page stores its URL's choices
    assert saved.settings["view"] == {
        "k": "10", "users": "all", "compare_baseline": "popularity",
        "compare_challengers": ["two_tower", "matrix_factorization"], "compare_metrics": ["ndcg@10"],
        "compare_test": "t", "compare_correction": "holm", "compare_alpha": "0.05",
        "compare_family": "analysis", "unit": "users"}
    assert [f.data for f in saved.files_with_role("run")] == [files[n].read_bytes() for n in
                                                               ("popularity", "two_tower", "matrix_factorization")]
    expected = bt.verdict_lines(_reference_brief(files, ["ndcg@10"]))
    assert bt.verdict_lines(published.brief) == expected
    store.close()


def test_the_dashboard_offers_exactly_the_metrics_publish_accepts():
    from dashboard import metric_lists
    from metrics_core.outputs.publish import per_user_metrics

    assert set(per_user_metrics()) == set(metric_lists.PER_USER)


@pytest.mark.parametrize("extra, needle", [
    (["--primary", "ndcg@10,recall@20"], "different cutoffs"),
    (["--primary", "auc"], "'auc' is not a per-user ranking metric"),
    (["--primary", "ndcg"], "needs a cutoff @K"),
    (["--alpha", "0.2"], "alpha must be one of 0.001, 0.01, 0.05, 0.1"),
    (["--baseline", "bm25"], "baseline 'bm25' is not one of the models"),
    (["--challengers", "popularity"], "at least one challenger"),
    (["--base-url", "dash.example.org"], "must start with http:// or https://"),
    (["--title", " "], "needs a title"),
])
def test_bad_choices_are_one_line_errors(files, capsys, monkeypatch, tmp_path, extra, needle):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))
    code, out, err = _cli(files, capsys, *extra)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and needle in err, err
    assert not (tmp_path / "store").exists()  # nothing was saved


def test_bad_files_name_the_file(files, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))
    broken = tmp_path / "broken.csv"
    broken.write_text("user_id,item_id,score\nu001,i001,high\n")
    code = main(["publish", "--run", str(files["popularity"]), "--run", str(files["two_tower"]), "--qrels",
                 str(files["qrels"]), "--title", "t", "--max-bytes", "1k"])
    out, err = capsys.readouterr()
    assert code == 2 and (f"popularity.csv: the file holds {files['popularity'].stat().st_size:,} bytes: over the read "
                          "limit max_bytes = 1 KiB") in err and "--max-bytes" in err, err
    for run, needle in ((tmp_path / "missing.csv", "missing.csv: cannot read this run file"),
                        (tmp_path, "a directory cannot be published"), (broken, "broken.csv")):
        code = main(["publish", "--run", str(files["popularity"]), "--run", str(run), "--qrels",
                     str(files["qrels"]), "--title", "t"])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and err.count("\n") == 1 and needle in err, err


def test_mc_publish_takes_tables_of_any_kind(files, tmp_path):
    """DataFrames (pandas, polars, a LazyFrame, Arrow) publish the same brief as the files they hold,
    the models named as given, each table stored as a Parquet file of exactly its rows."""
    pl = pytest.importorskip("polars", reason="pip install -r requirements/dev.txt")
    import pyarrow as pa

    read = {n: pd.read_csv(files[n], dtype={"user_id": str, "item_id": str})
            for n in ("popularity", "two_tower", "matrix_factorization", "qrels")}
    store = AnalysisStore(tmp_path / "store")
    runs = {"popularity": read["popularity"], "two_tower": pl.from_pandas(read["two_tower"]).lazy(),
            "matrix_factorization": pa.Table.from_pandas(read["matrix_factorization"], preserve_index=False)}
    published = mc.publish(runs, pl.from_pandas(read["qrels"]), title=TITLE, notes=NOTES,
                           user_attributes=pd.read_csv(files["users"], dtype=str), store=store,
                           base_url="http://localhost:9999")
    assert bt.verdict_lines(published.brief) == bt.verdict_lines(_reference_brief(files, ["ndcg@10"]))
    saved = store.load(published.id)
    assert [r["model"] for r in saved.settings["runs"]] == list(runs)
    stored = saved.files_with_role("run")
    assert [f.name for f in stored] == [f"{n}.parquet" for n in runs]
    import io

    for f, name in zip(stored, runs):
        back = pd.read_parquet(io.BytesIO(f.data))
        pd.testing.assert_frame_equal(back.astype(str), read[name].astype(str))
    # unnamed tables are run_1, run_2, ...; anything else is one line
    second = mc.publish([read["popularity"], read["two_tower"]], read["qrels"], title="t", store=store,
                        base_url="http://localhost:9999")
    assert [r["model"] for r in store.load(second.id).settings["runs"]] == ["run_1", "run_2"]
    with pytest.raises(mc.MetricsError, match=r"^the run 'b' is a int: give a file path or a table"):
        mc.publish({"a": read["popularity"], "b": 3}, read["qrels"], title="t", store=store)
    with pytest.raises(mc.MetricsError, match="two runs would be stored under one file name"):
        mc.publish({"a b": read["popularity"], "a_b": read["two_tower"]}, read["qrels"], title="t", store=store)
    store.close()


def test_publish_reads_whole_number_ids_when_asked_and_the_link_keeps_the_choice(tmp_path):
    """``10.0`` in the ground truth and ``10`` in a run are two ids unless the user joins them; the link
    then opens with the dashboard's whole-number control on. nDCG@10 written by hand: a relevant item at
    rank 1 scores 1, at rank 2 1 / log2(3)."""
    (tmp_path / "qrels.csv").write_text("user_id,item_id,relevance\n" + "".join(f"q{u},10.0,1\n" for u in range(4)))
    (tmp_path / "joined.csv").write_text("user_id,item_id,score\n" + "".join(f"q{u},10,2\nq{u},11,1\n"
                                                                            for u in range(4)))
    (tmp_path / "written.csv").write_text("user_id,item_id,score\n" + "".join(f"q{u},9,2\nq{u},10.0,1\n"
                                                                             for u in range(4)))
    runs = [tmp_path / "written.csv", tmp_path / "joined.csv"]
    for whole, joined_mean in ((False, 0.0), (True, 1.0)):
        store = AnalysisStore(tmp_path / f"store-{whole}")
        published = mc.publish(runs, tmp_path / "qrels.csv", title=TITLE, whole_number_ids=whole, store=store,
                               base_url="http://localhost:9999")
        row = published.brief.verdicts.set_index("model").loc["joined"]
        assert row["baseline_mean"] == pytest.approx(1 / math.log2(3), abs=1e-12)
        assert row["model_mean"] == pytest.approx(joined_mean, abs=1e-12)
        view = store.load(published.id).settings["view"]
        assert view.get("whole_number_ids") == ("true" if whole else None)
        store.close()
