"""How often an uploader's request for upload URLs goes unanswered when a script run starts.

A browser that is given files asks the server where to send them (a ``FileURLsRequest`` over the
websocket) and lists and sends them only once the answer arrives. This client does what a page does
when files are dropped on an uploader while the previous change's script run starts: it asks for a
rerun, then at once for upload URLs, ``--tries`` times, and counts the requests whose answer never
came (it waits ``--wait`` seconds after the run finished). It starts two dashboard servers, one as
shipped with the dashboard (:mod:`dashboard.upload_replies` in place) and one with Streamlit's queue
as Streamlit ships it (``benchmarks/streamlit_as_shipped``), one after the other, each on the demo's
Data page, and prints both counts.

    python benchmarks/upload_reply_race.py --tries 40
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests" / "browser"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402

from benchmarks.streamlit_ws import Session  # noqa: E402
from dashboard_server import start_server, stop_process  # noqa: E402


async def one_try(session: Session, wait: float) -> bool:
    """Ask for a rerun and at once for upload URLs; True when the answer came."""
    request_id = uuid.uuid4().hex
    ask = BackMsg()
    ask.file_urls_request.request_id = request_id
    ask.file_urls_request.file_names.append("run.csv")
    await session._ws.send(session._rerun_message().SerializeToString())
    await session._ws.send(ask.SerializeToString())
    answered, finished_at = False, None
    deadline = time.monotonic() + session._timeout
    while time.monotonic() < deadline:
        limit = (finished_at + wait - time.monotonic()) if finished_at else deadline - time.monotonic()
        if limit <= 0:
            break
        try:
            msg = session._resolve(await session._recv(limit))
        except asyncio.TimeoutError:
            break
        kind = msg.WhichOneof("type")
        if kind == "file_urls_response" and msg.file_urls_response.response_id == request_id:
            answered = True
            if finished_at:
                break
        elif kind == "script_finished":
            finished_at = time.monotonic()
            if answered:
                break
    return answered


async def drive(url: str, tries: int, wait: float) -> int:
    session, _ = await Session.open(url, page="data", timeout=300)
    try:
        return sum([not await one_try(session, wait) for _ in range(tries)])
    finally:
        await session.close()


def measure(as_shipped: bool, tries: int, wait: float) -> int:
    folder = Path(tempfile.mkdtemp(prefix="upload_reply_race_"))
    env = {"METRICS_CORE_STORE_DIR": str(folder / "store")}
    if as_shipped:
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "benchmarks" / "streamlit_as_shipped"), str(ROOT)])
    proc, url = start_server(ROOT / "dashboard" / "serve.py", extra_env=env, log_path=folder / "server.log")
    try:
        return asyncio.run(drive(url, tries, wait))
    finally:
        stop_process(proc)
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=40)
    parser.add_argument("--wait", type=float, default=2.0, help="seconds to wait for an answer after the run")
    args = parser.parse_args()
    load = os.getloadavg()
    for as_shipped, label in ((True, "Streamlit's queue as shipped"), (False, "the dashboard's server")):
        lost = measure(as_shipped, args.tries, args.wait)
        print(f"{label}: {lost} of {args.tries} requests for upload URLs never answered")
    print("load average at start " + ", ".join(f"{x:.2f}" for x in load))


if __name__ == "__main__":
    main()
