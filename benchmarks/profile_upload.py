"""CPU seconds of the upload to the Overview, step by step, in one process (no browser).

    python3 -m benchmarks.profile_upload [--users 20000] [--items 50] [--idle 8] [--top 0]

The browser benchmark's data (``benchmarks/browser_data.py``: one TREC, one CSV and one Parquet
file of ``--users`` x ``--items`` rows, 5 judged rows per user) is uploaded in Streamlit's AppTest
the way ``benchmarks/dashboard_browser.py`` uploads it: the app opens on the demo, then the Data
page; after ``--idle`` seconds (what a user takes before uploading: the threads started once the
first page is drawn finish meanwhile) the three run files, then the ground truth, then the
Overview is opened. For each step it prints the CPU seconds of the script thread (what the page's
answer waits for) and of the whole process while the step ran; then the process's CPU seconds
from the first upload until the server thread (:mod:`dashboard.background`) is idle. CPU seconds,
not wall time: the machine is shared. ``--top N`` prints each step's N largest cumulative cProfile
entries (the profiler's overhead is then in the script-thread seconds). Run it with another
checkout first on the path (``cd DIR && PYTHONPATH=DIR python3 -m benchmarks.profile_upload``) to
compare two versions.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.datagen import MAX_RELEVANT as MIN_ITEMS  # noqa: E402
from benchmarks.profile_path import APP, Recorder, files_of, top_entries  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=20_000)
    ap.add_argument("--items", type=int, default=50)
    ap.add_argument("--idle", type=float, default=8.0, help="seconds between the Data page and the upload")
    ap.add_argument("--top", type=int, default=0, help="cProfile entries printed per step (0: no profile)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds one script run may take")
    args = ap.parse_args()
    if args.items < MIN_ITEMS:
        ap.error(f"--items must be at least {MIN_ITEMS} (the generator's most relevant items per user)")

    from streamlit.testing.v1 import AppTest

    rec = Recorder()
    rec.install()
    with tempfile.TemporaryDirectory(prefix="profile_upload_") as tmp:
        os.environ["METRICS_CORE_STORE_DIR"] = str(Path(tmp) / "store")
        _files, runs, truth, _attrs = files_of(args.users, args.items, Path(tmp) / "data")
        at = AppTest.from_file(APP, default_timeout=args.timeout)
        at.run()
        at.switch_page("views/data.py").run()
        time.sleep(args.idle)
        from dashboard import background

        start = time.process_time()
        steps = [("3 run files", lambda: (at.file_uploader(key="upload_runs_0").set_value(runs), at.run())),
                 ("ground truth", lambda: (at.file_uploader(key="upload_truth_0").set_value(truth), at.run())),
                 ("open Overview", lambda: at.switch_page("views/overview.py").run())]
        for name, step in steps:
            rec.thread_cpu = 0.0
            rec.profile = cProfile.Profile(time.thread_time) if args.top else None
            before = time.process_time()
            step()
            print(f"{name}: script CPU {rec.thread_cpu:.2f} s, process CPU {time.process_time() - before:.2f} s",
                  flush=True)
            if rec.profile is not None:
                print(top_entries(rec.profile, args.top))
            if at.exception:
                raise SystemExit(f"the app raised: {at.exception[0].value}")
        while background._QUEUED:  # the server thread's queue drains
            time.sleep(0.05)
        print(f"whole upload, every thread until the server thread is idle: {time.process_time() - start:.2f} CPU s")


if __name__ == "__main__":
    main()
