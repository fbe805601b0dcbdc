"""Analysis store: time and disk cost of repeated saves of one large upload, and what
deleting gives back.

    python benchmarks/store_bench.py --mb 300 --saves 22
    python benchmarks/store_bench.py --mb 100 --saves 5 --url postgresql+psycopg://postgres@127.0.0.1:5432/db

Each save is a snapshot of the same file plus a small file of its own (as when a user shares
the same data with other settings); then every snapshot is deleted with its token. Prints
seconds per save and load and the store's size on disk (SQLite: the file; PostgreSQL: the
chunk table with its TOAST data, after a VACUUM) after the first save, after all saves and
after deleting everything.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa  # noqa: E402

from metrics_core.store import AnalysisStore  # noqa: E402


def disk_bytes(store: AnalysisStore) -> int:
    if store.path is not None:
        return store.path.stat().st_size
    engine = sa.create_engine(store.url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("VACUUM store_chunks"))
            return int(conn.execute(sa.text("SELECT pg_total_relation_size('store_chunks')")).scalar())
    finally:
        engine.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=300, help="size of the large upload in MiB (default 300)")
    parser.add_argument("--saves", type=int, default=22, help="number of snapshots saved (default 22)")
    parser.add_argument("--url", help="SQLAlchemy URL of an empty database (default: SQLite in a temporary directory)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="store-bench-") as tmp:
        store = AnalysisStore(url=args.url, quota_bytes=1 << 50) if args.url \
            else AnalysisStore(Path(tmp), quota_bytes=1 << 50)
        big = os.urandom(args.mb * 1024 * 1024)
        saves, loads, receipts = [], [], []
        sizes = {}
        for i in range(args.saves):
            start = time.perf_counter()
            receipts.append(store.save_snapshot({"run.parquet": big, "notes.txt": f"save {i}".encode()}, {"k": i}))
            saves.append(time.perf_counter() - start)
            if i == 0:
                sizes["after the first save"] = disk_bytes(store)
        sizes[f"after {args.saves} saves"] = disk_bytes(store)
        for receipt in receipts[:3]:
            start = time.perf_counter()
            assert store.load(receipt.id).files[0].data == big
            loads.append(time.perf_counter() - start)
        start = time.perf_counter()
        for receipt in receipts:
            store.delete_snapshot(receipt.id, receipt.delete_token)
        deleting = time.perf_counter() - start
        sizes["after deleting all"] = disk_bytes(store)
        store.close()

    print(f"store: {'SQLite' if not args.url else 'database URL'}; upload {args.mb} MiB, {args.saves} snapshots")
    print(f"save: first {saves[0]:.2f} s, median of the rest {statistics.median(saves[1:] or saves):.2f} s")
    print(f"load: median {statistics.median(loads):.2f} s; delete all: {deleting:.2f} s")
    for label, nbytes in sizes.items():
        print(f"size on disk {label}: {nbytes / 1024 ** 2:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
