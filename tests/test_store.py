"""metrics_core.store: saved analyses under unguessable, validated ids."""

import subprocess
import sys

import pytest

from metrics_core.store import (ID_PATTERN, AnalysisStore, SavedFile, StoreError, default_store_dir,
                                new_analysis_id, validate_analysis_id)


def test_ids_are_long_random_and_valid():
    ids = {new_analysis_id() for _ in range(200)}
    assert len(ids) == 200
    for i in ids:
        assert ID_PATTERN.match(i) and len(i) == 32  # 24 bytes = 192 bits
        assert validate_analysis_id(i) == i


@pytest.mark.parametrize("bad", ["", "../../etc/passwd", "a" * 31, "a" * 33, "abc/def" + "a" * 25,
                                 "a" * 31 + "\n", "a" * 31 + ".", None, 12345, "%2e%2e%2f" + "a" * 23,
                                 "' OR 1=1 --" + "a" * 21])
def test_malformed_ids_rejected(tmp_path, bad):
    store = AnalysisStore(tmp_path)
    with pytest.raises(StoreError, match="malformed analysis id"):
        store.load(bad)


def test_save_load_roundtrip_and_unknown(tmp_path):
    store = AnalysisStore(tmp_path / "nested")
    files = [SavedFile("qrels.tsv", b"u1\ti1\t1\n", "qrels"),
             SavedFile("bm25.trec", bytes(range(256)), "run"),
             ("<img src=x onerror=alert(1)>.csv", b"user_id,item_id,score\n", "run")]
    settings = {"k": 20, "gain": "exponential", "ties": "trec", "metrics": ["ndcg@20"]}
    aid = store.save(files, settings, title="demo")
    got = store.load(aid)
    assert got.id == aid and got.settings == settings and got.title == "demo"
    assert [(f.name, f.role, f.data) for f in got.files] == [
        ("qrels.tsv", "qrels", b"u1\ti1\t1\n"), ("bm25.trec", "run", bytes(range(256))),
        ("<img src=x onerror=alert(1)>.csv", "run", b"user_id,item_id,score\n")]
    assert [f.name for f in got.files_with_role("run")] == ["bm25.trec", "<img src=x onerror=alert(1)>.csv"]
    assert store.exists(aid)
    other = new_analysis_id()
    assert not store.exists(other)
    with pytest.raises(StoreError, match="no saved analysis"):
        store.load(other)
    assert store.delete(aid) and not store.exists(aid)


def test_settings_must_be_json(tmp_path):
    with pytest.raises(StoreError, match="JSON"):
        AnalysisStore(tmp_path).save({"a": b""}, {"x": object()})


def test_env_var_and_default_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "s"))
    assert default_store_dir() == tmp_path / "s"
    assert AnalysisStore().directory == tmp_path / "s"
    monkeypatch.delenv("METRICS_CORE_STORE_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert default_store_dir() == tmp_path / "xdg" / "metrics-core"


def test_survives_a_new_process(tmp_path):
    aid = AnalysisStore(tmp_path).save({"run.csv": b"a,b\n1,2\n"}, {"k": 5})
    code = ("import sys; from metrics_core.store import AnalysisStore; "
            "a = AnalysisStore(sys.argv[1]).load(sys.argv[2]); "
            "print(a.settings['k'], a.files[0].name, a.files[0].data.decode().strip().replace(chr(10), '|'))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path), aid], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "5 run.csv a,b|1,2"


def test_unwritable_dir_gives_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="METRICS_CORE_STORE_DIR"):
        AnalysisStore(blocker / "sub").save({"a": b""}, {})
