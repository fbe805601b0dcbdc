"""Where a dashboard server's CPU goes, script run by script run: a probe the load test puts in the
server it starts (``benchmarks/load_test.py --cpu-probe DIR``).

Python imports ``sitecustomize`` at start-up from the first folder of ``sys.path`` that has one; the
load test puts this folder first in the server's ``PYTHONPATH`` and sets ``MC_CPU_PROBE_DIR``. Nothing
happens without that variable. Every script run (``ScriptRunner._run_script``, whole page or fragment)
is then measured on its own thread: ``<n>.json`` holds its start (``time.time()``), its CPU seconds
(``time.thread_time``), the page and whether it was a fragment's run; with ``MC_CPU_PROBE_PROFILE=1``
``<n>.prof`` holds its cProfile statistics, timed in thread CPU seconds (the profiler's overhead
inflates deep Python call chains: read CPU seconds from a run without it).
"""

from __future__ import annotations

import os

_DIR = os.environ.get("MC_CPU_PROBE_DIR")


def _install(folder: str, profile: bool) -> None:
    import cProfile
    import itertools
    import json
    import threading
    import time

    from streamlit.runtime.scriptrunner import script_runner

    counter, lock = itertools.count(), threading.Lock()
    original = script_runner.ScriptRunner._run_script

    def measured(self, rerun_data):
        with lock:
            n = next(counter)
        prof = cProfile.Profile(time.thread_time) if profile else None
        began, cpu0 = time.time(), time.thread_time()
        if prof is not None:
            prof.enable()
        try:
            return original(self, rerun_data)
        finally:
            if prof is not None:
                prof.disable()
            cpu = time.thread_time() - cpu0
            record = {"n": n, "start": began, "end": time.time(), "cpu": cpu,
                      "page": rerun_data.page_name or rerun_data.page_script_hash,
                      "fragment": bool(rerun_data.fragment_id_queue), "session": id(self)}
            if prof is not None:
                prof.dump_stats(os.path.join(folder, f"{n:05d}.prof"))
            with open(os.path.join(folder, f"{n:05d}.json"), "w") as fh:
                json.dump(record, fh)

    script_runner.ScriptRunner._run_script = measured


if _DIR:
    _install(_DIR, os.environ.get("MC_CPU_PROBE_PROFILE") == "1")
