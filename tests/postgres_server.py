"""A throwaway PostgreSQL server for tests: ``initdb`` on a temporary directory, ``pg_ctl``
on a free port of 127.0.0.1 with trust authentication, stopped and removed afterwards.

PostgreSQL refuses to run as root; when the tests run as root (as in CI) the server runs
as the ``postgres`` user (``runuser``, else ``su``) on a directory handed over to it.
The binaries are found with ``pg_config --bindir`` or under ``/usr/lib/postgresql/*/bin``
(Debian's ``postgresql`` package).
"""

from __future__ import annotations

import _deadlines as deadlines
import glob
import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SERVER_USER = "postgres"


def postgres_bindir() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``, or ``None`` when not installed."""
    candidates = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        if out.returncode == 0:
            candidates.append(Path(out.stdout.strip()))

    def major(path: str) -> int:
        version = Path(path).parent.name
        return int(version) if version.isdigit() else 0
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=major, reverse=True)]
    for path in candidates:
        if (path / "initdb").is_file() and (path / "pg_ctl").is_file():
            return path
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user(argv: list[str]) -> list[str]:
    """``argv`` run as the ``postgres`` user when we are root, else as ourselves."""
    if os.geteuid() != 0:
        return argv
    if shutil.which("runuser"):
        return ["runuser", "-u", SERVER_USER, "--", *argv]
    return ["su", SERVER_USER, "-s", "/bin/sh", "-c", shlex.join(argv)]


@dataclass
class PostgresServer:
    bindir: Path
    root: Path
    port: int

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SERVER_USER}@127.0.0.1:{self.port}/{database}"

    def _run(self, *argv: str, timeout: float = deadlines.SUBPROCESS) -> subprocess.CompletedProcess:
        return subprocess.run(_as_server_user([str(self.bindir / argv[0]), *argv[1:]]), capture_output=True,
                              text=True, timeout=timeout, cwd=self.root)

    def start(self) -> None:
        out = self._run("initdb", "-D", str(self.data), "-U", SERVER_USER, "-A", "trust", "-E", "UTF8",
                        "--no-sync")
        if out.returncode != 0:
            raise RuntimeError(f"initdb failed: {out.stderr.strip() or out.stdout.strip()}")
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off "
                   "-c full_page_writes=off -c synchronous_commit=off")
        out = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")
        if out.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {out.stderr.strip() or out.stdout.strip()} {log}")

    def stop(self) -> None:
        """``pg_ctl stop -m fast``; if that fails or hangs, SIGKILL the postmaster."""
        try:
            out = self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "30", "stop", timeout=deadlines.SERVICE_STOP)
            stopped = out.returncode == 0
        except subprocess.TimeoutExpired:
            stopped = False
        pid_file = self.data / "postmaster.pid"
        if not stopped and pid_file.exists():
            try:
                pid = int(pid_file.read_text().split()[0])
                os.kill(pid, signal.SIGKILL)
                time.sleep(0.5)
            except (ValueError, IndexError, ProcessLookupError, PermissionError):
                pass


def start_postgres(bindir: Path) -> PostgresServer:
    """Start a server on a new temporary directory (owned by ``postgres`` when we are root)."""
    # As root, under /tmp: a $TMPDIR inside root's home would be closed to the postgres user.
    root = Path(tempfile.mkdtemp(prefix="metrics-core-pg-", dir="/tmp" if os.geteuid() == 0 else None))
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam(SERVER_USER)
        except KeyError:
            shutil.rmtree(root, ignore_errors=True)
            raise RuntimeError(f"PostgreSQL refuses to run as root and there is no {SERVER_USER!r} user to run it "
                               "(Debian's postgresql package creates it)") from None
        os.chown(root, entry.pw_uid, entry.pw_gid)
    last_error: Exception | None = None
    for _ in range(3):  # another process may take the free port first
        server = PostgresServer(bindir=bindir, root=root, port=_free_port())
        try:
            server.start()
            return server
        except RuntimeError as exc:
            last_error = exc
            server.stop()
            shutil.rmtree(server.data, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)
    raise RuntimeError(str(last_error))


def remove(server: PostgresServer) -> None:
    server.stop()
    shutil.rmtree(server.root, ignore_errors=True)
