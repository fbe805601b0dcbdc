"""The compiled scripts ``tests/_apptest.py`` shares between the ``AppTest`` runs of a process: a
script whose text changes is compiled again, and scripts of the same text keep their own file names."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")
from _apptest import AppTest, SharedScriptCache  # noqa: E402


def shown(at: AppTest) -> list[str]:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return [m.value for m in at.markdown]


def test_a_changed_script_is_compiled_again(tmp_path):
    script = tmp_path / "page.py"
    script.write_text('import streamlit as st\nst.markdown("first")\n')
    at = AppTest.from_file(str(script))
    assert shown(at) == ["first"]
    assert shown(AppTest.from_file(str(script))) == ["first"]
    script.write_text('import streamlit as st\nst.markdown("second")\n')
    assert shown(at) == ["second"]
    assert shown(AppTest.from_file(str(script))) == ["second"]


def test_scripts_of_the_same_text_at_two_paths_keep_their_own_file_name(tmp_path):
    """The file name compiled into the code is the one tracebacks show."""
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    for script in (one, two):
        script.write_text('raise ValueError("from the script")\n')
    for script in (one, two, one):
        assert SharedScriptCache().get_bytecode(str(script)).co_filename == str(script)
