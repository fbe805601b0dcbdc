"""What a person at a terminal sees during a long `metrics-core` run: when the first sign of life
appears, the stages shown, and whether the output is the quiet run's.

Generates ``--users`` users x 100 candidates (``benchmarks.datagen``: 200,000 users = 20M rows) as a
Parquet pair, then runs ``metrics-core evaluate`` (or ``--command compare``) twice: once with standard
error on a pseudo-terminal (the progress stages drawn), once with it on a pipe (nothing drawn). Prints
the seconds to the first progress text, each stage's first appearance, the longest stretch with no
redraw after the first text, the total, and whether standard output is byte-identical between the
two runs.

    python -m benchmarks.terminal_progress --users 200000
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGE = re.compile(r"metrics-core: ([^\r\n(|:]+)")


def run_on_terminal(argv: list[str], env: dict) -> tuple[float, list[tuple[float, str]], bytes, float,
                                                        tuple[float, float]]:
    """``(seconds to the first progress text, [(seconds, stage)], stdout, total seconds, (longest
    silence, when it began))``: stderr on a pty. A shown stage is redrawn every half second, so a
    silence (no byte on the terminal) longer than that is a stretch where nothing said the command
    was working (or a line left standing that no longer moved)."""
    leader, follower = pty.openpty()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=follower, env=env, cwd=ROOT)
    os.close(follower)
    seen: list[tuple[float, str]] = []
    first = float("nan")
    out = bytearray()
    pending = b""
    last, silence = 0.0, (0.0, 0.0)
    streams = {leader: "err", proc.stdout.fileno(): "out"}
    while streams:
        ready, _, _ = select.select(list(streams), [], [], 0.5)
        for fd in ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                del streams[fd]
                continue
            if streams[fd] == "out":
                out += chunk
                continue
            now = time.perf_counter() - start
            if first != first:
                first = now
            if first == first and now - last > silence[0] and last > 0:
                silence = (now - last, last)
            last = now
            pending += chunk
            for match in STAGE.finditer(pending.decode("utf-8", "replace")):
                name = match.group(1).strip()
                if name not in {n for _, n in seen}:  # a stage is redrawn in place: its first appearance
                    seen.append((now, name))
            pending = pending[-200:]
    proc.wait()
    os.close(leader)
    total = time.perf_counter() - start
    if last and total - last > silence[0]:  # after the last line, until the command ended
        silence = (total - last, last)
    return first, seen, bytes(out), total, silence


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=200_000, help="users x 100 rows (200,000: 20M rows)")
    p.add_argument("--command", choices=["evaluate", "compare"], default="evaluate")
    p.add_argument("--dir", default=None, help="keep the generated Parquet pair here")
    args = p.parse_args(argv)
    work = Path(args.dir or tempfile.mkdtemp(prefix="mc-terminal-"))
    if not (work / "run.parquet").exists():
        subprocess.run([sys.executable, "-m", "benchmarks.datagen", "--users", str(args.users),
                        "--parquet", str(work)], check=True, cwd=ROOT)
    cli = [sys.executable, "-m", "metrics_core"]
    if args.command == "evaluate":
        cli += ["evaluate", "--qrels", str(work / "qrels.parquet"), "--run", str(work / "run.parquet"),
                "--metrics", "ndcg@10,map@100,recall@20"]
    else:
        cli += ["compare", "--qrels", str(work / "qrels.parquet"), "--run", str(work / "run.parquet"),
                "--run", str(work / "run.parquet"), "--metrics", "ndcg@10", "--test", "randomization"]
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="100")
    first, stages, shown, total, (silent, silent_at) = run_on_terminal(cli, env)
    start = time.perf_counter()
    quiet = subprocess.run(cli, capture_output=True, env=env, cwd=ROOT)
    quiet_total = time.perf_counter() - start
    print(f"command: {' '.join(cli[2:])}  ({args.users * 100:,} rows)")
    print(f"terminal: first progress text after {first:.1f} s; done after {total:.1f} s")
    for at, name in stages:
        print(f"  {at:6.1f} s  {name}")
    print(f"longest silence after the first text: {silent:.1f} s (from {silent_at:.1f} s)")
    print(f"pipe (no progress): done after {quiet_total:.1f} s; stderr {len(quiet.stderr)} bytes")
    print(f"stdout identical: {shown == quiet.stdout}; last line: "
          f"{(shown.decode().strip().splitlines() or [''])[-1]!r}")


if __name__ == "__main__":
    main()
