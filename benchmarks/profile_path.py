"""CPU profile of every rerun of the reviewer's path through Compare, in one process.

    python3 -m benchmarks.profile_path [--users 20000] [--items 50] [--top 12] [--only REGEX]
        [--dump DIR] [--no-profile] [--wait-idle] [--jobs]

The same data as the browser benchmark (``benchmarks/browser_data.py``: one TREC, one CSV
and one Parquet file, 5 judged rows per user, four user attributes) is uploaded to the app
in Streamlit's AppTest (no browser, no websocket), then the steps of
``benchmarks.browser_plan.path_steps`` are replayed as widget changes. Each script run is
recorded by cProfile in the script's own thread, so what is reported is CPU time, not wall
time (the machine is shared and loaded; wall times are not comparable from run to run):

* ``script CPU s``: CPU seconds of the script thread for the rerun (``time.thread_time``;
  cProfile's own overhead included: ``--no-profile`` gives the CPU seconds without it),
* ``process CPU s``: CPU seconds of the whole process while the step ran (background
  threads included, such as the resampling :mod:`dashboard.background` starts),
* with ``--wait-idle``, ``CPU s after``: the process CPU seconds of the pause after the step, until
  the server thread has nothing queued (a reviewer pauses between clicks; without it the steps
  follow each other at once and a click may compute what the thread had not reached yet),
* with ``--jobs``, at the end: the CPU seconds of the server thread's jobs by kind (the first
  field of their cache key: ``segments``, ``overlap``, ``compare-ci``...), each timed on its thread,
* the functions with the most cumulative time inside the rerun (``--top``), for the steps
  matching ``--only`` (default: every step whose script CPU is over 0.3 s).

AppTest does not draw anything: the browser's own work (Arrow decoding, plotly drawing) is
not in these numbers; everything the server does for a rerun is. ``--dump DIR`` writes each
step's ``.prof`` file (``python -m pstats`` or snakeviz read them).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.browser_data import write_files  # noqa: E402

APP = str(ROOT / "dashboard" / "app.py")
MIME = {".trec": "text/plain", ".csv": "text/csv", ".parquet": "application/octet-stream"}
SLOW_SCRIPT_S = 0.3


class Recorder:
    """Wraps AppTest's script thread so each run is profiled in that thread."""

    def __init__(self) -> None:
        self.profile: cProfile.Profile | None = None
        self.thread_cpu = 0.0

    def install(self) -> None:
        from streamlit.testing.v1.local_script_runner import LocalScriptRunner

        original = LocalScriptRunner._run_script_thread
        recorder = self

        def run_profiled(runner) -> None:
            prof = recorder.profile
            start = time.thread_time()
            if prof is not None:
                prof.enable()
            try:
                original(runner)
            finally:
                if prof is not None:
                    prof.disable()
                recorder.thread_cpu += time.thread_time() - start

        LocalScriptRunner._run_script_thread = run_profiled


class JobClock:
    """CPU seconds of the server thread's jobs (:func:`dashboard.background.start`), by kind: the
    cache key's first field (``segments``, ``overlap``, ``compare-ci``...; ``compare`` split by the
    test and its resamples and sign flips), each job timed on its own thread (``time.thread_time``)."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self.count: dict[str, int] = {}

    @staticmethod
    def kind(key: str) -> str:
        fields = key.split("|")
        if fields[0] == "compare" and len(fields) > 6:
            # compare|<models>|<metric>|<baseline>|<test>|<resamples>|<permutations>|<options>
            test, resamples, permutations = fields[-4:-1]
            return f"compare {test} (resamples {resamples}, sign flips {permutations})"
        return fields[0]

    def install(self) -> None:
        from dashboard import background

        original, clock = background.start, self

        def start(key, compute, size=None, wait_for_pages=True):
            def timed():
                began = time.thread_time()
                try:
                    return compute()
                finally:
                    kind = clock.kind(key)
                    clock.cpu[kind] = clock.cpu.get(kind, 0.0) + time.thread_time() - began
                    clock.count[kind] = clock.count.get(kind, 0) + 1
            return original(key, timed, size=size, wait_for_pages=wait_for_pages)

        background.start = start

    def report(self) -> str:
        rows = sorted(self.cpu.items(), key=lambda kv: -kv[1])
        lines = [f"{'server thread job':<52s} {'jobs':>5s} {'CPU s':>8s}"]
        lines += [f"{kind:<52s} {self.count[kind]:5d} {cpu:8.2f}" for kind, cpu in rows]
        lines.append(f"{'all jobs':<52s} {sum(self.count.values()):5d} {sum(self.cpu.values()):8.2f}")
        return "\n".join(lines)


UPLOADERS = ("upload_runs_0", "upload_truth_0", "upload_attributes_0")


def release_uploads(at) -> None:
    """Empty the uploaders once the dashboard has taken the files in, as a real server leaves them.

    A real server hands later runs only placeholders of the files the dashboard took in
    (``dashboard.sources.release_upload``). AppTest registers each uploader's files again before
    every run, so every rerun would copy the three 1M-row files (Streamlit deep-copies widget
    values): 0.04 CPU s a rerun that no user's server spends. Emptied uploaders keep the models
    (the dashboard keeps what it took in)."""
    from dashboard.sources import _SESSION

    def models() -> set:
        return set(at.session_state[_SESSION].sources.runs) if _SESSION in at.session_state else set()

    names = models()
    for key in UPLOADERS:
        at.file_uploader(key=key).clear()
    at.run()
    after = models()
    if [e.value for e in at.exception] or not names or names != after:
        raise SystemExit(f"emptying the uploaders changed the models ({names} -> {after}) or raised")


def files_of(users: int, items: int, directory: Path):
    files = write_files(directory, users, items)
    runs = [(p.name, p.read_bytes(), MIME[p.suffix]) for p in files.runs.values()]
    truth = (files.qrels.name, files.qrels.read_bytes(), MIME[files.qrels.suffix])
    attrs = (files.attributes.name, files.attributes.read_bytes(), MIME[files.attributes.suffix])
    return files, runs, truth, attrs


def steps(names: list[str], attributes: list[str]):
    """(action, function of the AppTest) in the order of ``browser_plan.path_steps``."""
    from dashboard.page import _FOCUS

    def drill(at):
        # what a click on the first row of "Largest regressions" does: the page asks for the drill-down
        frame = next(df.value for df in at.dataframe if list(df.value.columns)[:3] == ["user_id", names[0], names[1]])
        at.session_state[_FOCUS] = (names[1], frame["user_id"].iloc[0], names[0])
        return at.switch_page("views/failures.py")

    order = [*attributes[1:], *attributes[:1]]
    out = [("open Compare", lambda at: at.switch_page("views/compare.py")),
           ("Compare: baseline", lambda at: at.selectbox(key="compare_baseline").set_value(names[1])),
           ("Compare: baseline", lambda at: at.selectbox(key="compare_baseline").set_value(names[0])),
           ("Compare: challengers", lambda at: at.multiselect(key="compare_challengers").set_value(names[1:2])),
           ("Compare: challengers", lambda at: at.multiselect(key="compare_challengers").set_value(names[1:])),
           ("Compare: per-user metric", lambda at: at.multiselect(key="compare_metrics").set_value(
               ["ndcg@10", "map@10"])),
           ("Compare: per-user metric", lambda at: at.multiselect(key="compare_metrics").set_value(["ndcg@10"]))]
    out += [("Compare: test", lambda at, t=t: at.selectbox(key="compare_test").set_value(t))
            for t in ("wilcoxon", "randomization", "t")]
    out += [(f"Compare: segment attribute {a}", lambda at, a=a: at.selectbox(key="compare_segment").set_value(a))
            for a in order]
    out += [("Compare: users counted", lambda at, u=u: at.selectbox(key="users").set_value(u))
            for u in ("served", "all")]
    out += [("Compare: open Failures from a regression row", drill)]
    out += [(f"open {t}", lambda at, f=f: at.switch_page(f"views/{f}.py"))
            for t, f in (("Brief", "brief"), ("Distributions", "distributions"), ("Curves", "curves"),
                         ("Explain", "explain"), ("Compare", "compare"))]
    out += [("Compare: K", lambda at, k=k: at.number_input(key="k").set_value(k)) for k in (20, 10)]
    out += [("Compare: metric picked again after K",
             lambda at: at.multiselect(key="compare_metrics").set_value(["ndcg@10"]))]
    out += [("Compare: gain", lambda at, g=g: at.selectbox(key="gain").set_value(g)) for g in ("exponential", "linear")]
    out += [("Compare: ties", lambda at, t=t: at.selectbox(key="ties").set_value(t)) for t in ("trec", "average")]
    out += [("Compare: preset", lambda at, p=p: at.selectbox(key="preset").set_value(p)) for p in ("trec_eval", "none")]
    return out


def top_entries(prof: cProfile.Profile, n: int) -> str:
    buf = io.StringIO()
    st = pstats.Stats(prof, stream=buf)
    st.sort_stats("cumulative").print_stats(r"(dashboard|metrics_core|streamlit/elements|plotly|pyarrow|pandas)", n)
    lines = [ln for ln in buf.getvalue().splitlines() if re.match(r"\s*\d", ln)]
    return "\n".join(lines[:n])


def wait_idle(timeout: float) -> float:
    """Wait until the server thread (:mod:`dashboard.background`) has nothing queued, at most
    ``timeout`` seconds; returns the process CPU seconds spent meanwhile (the jobs the step queued)."""
    from dashboard import background

    cpu0, deadline = time.process_time(), time.monotonic() + timeout
    while time.monotonic() < deadline:
        with background._LOCK:
            if not background._QUEUED:
                break
        time.sleep(0.05)
    return time.process_time() - cpu0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=20_000)
    ap.add_argument("--items", type=int, default=50)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--only", default=None, help="regular expression: steps whose profile is printed")
    ap.add_argument("--dump", type=Path, default=None, help="write each step's .prof file here")
    ap.add_argument("--no-profile", action="store_true",
                    help="CPU seconds only, without cProfile (whose overhead inflates deep Python call chains)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds one script run may take")
    ap.add_argument("--wait-idle", action="store_true",
                    help="after each step, wait until the server thread has nothing queued (a reviewer's pause "
                         "between clicks) and report the process CPU seconds of that wait apart")
    ap.add_argument("--jobs", action="store_true",
                    help="at the end, the CPU seconds of the server thread's jobs by kind (the cache key's first field)")
    args = ap.parse_args()
    only = re.compile(args.only) if args.only else None
    jobs = JobClock() if args.jobs else None
    if jobs:
        jobs.install()

    from streamlit.testing.v1 import AppTest

    rec = Recorder()
    rec.install()
    with tempfile.TemporaryDirectory(prefix="profile_path_") as tmp:
        os.environ["METRICS_CORE_STORE_DIR"] = str(Path(tmp) / "store")
        files, runs, truth, attrs = files_of(args.users, args.items, Path(tmp) / "data")
        print(f"data: 3 models x {files.rows_per_model:,} rows ({', '.join(files.formats)}), "
              f"{files.judgments:,} judgments, load {os.getloadavg()[0]:.1f}")
        at = AppTest.from_file(APP, default_timeout=args.timeout)
        at.run()
        at.switch_page("views/data.py").run()
        at.file_uploader(key="upload_runs_0").set_value(runs)
        at.file_uploader(key="upload_truth_0").set_value(truth)
        at.run()
        at.file_uploader(key="upload_attributes_0").set_value(attrs)
        at.run()
        at.switch_page("views/overview.py").run()
        problems = [e.value for e in at.exception]
        if problems:
            raise SystemExit(f"the upload failed: {problems}")
        release_uploads(at)
        names = list(files.runs)
        if args.dump:
            args.dump.mkdir(parents=True, exist_ok=True)
        print(f"{'step':<52s} {'script CPU s':>12s} {'process CPU s':>13s}"
              + (f" {'CPU s after':>11s}" if args.wait_idle else ""))
        for i, (action, change) in enumerate(steps(names, ["segment", "activity", "country", "tenure"])):
            rec.thread_cpu = 0.0
            rec.profile = None if args.no_profile else cProfile.Profile(time.thread_time)  # CPU time, not wall
            cpu0 = time.process_time()
            change(at).run()
            cpu = time.process_time() - cpu0
            bad = [e.value for e in at.exception][:1]
            after = f" {wait_idle(args.timeout):11.2f}" if args.wait_idle else ""
            print(f"{action:<52s} {rec.thread_cpu:12.2f} {cpu:13.2f}{after}" + (f"  EXCEPTION {bad}" if bad else ""),
                  flush=True)
            if rec.profile is not None and (only.search(action) if only else rec.thread_cpu > SLOW_SCRIPT_S):
                print(top_entries(rec.profile, args.top) + "\n", flush=True)
            if args.dump and rec.profile is not None:
                rec.profile.dump_stats(str(args.dump / f"{i:02d}_{re.sub(r'[^a-z0-9]+', '_', action.lower())}.prof"))
        if jobs:
            wait_idle(args.timeout)
            print(jobs.report())
        print(f"threads still alive: {threading.active_count()}; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
