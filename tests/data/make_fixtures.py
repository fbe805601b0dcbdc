"""Regenerate the fixture files under tests/data/formats and tests/data/bad.

    python tests/data/make_fixtures.py

formats/: the same small run and ground truth in every supported format
(CSV, TSV, Parquet, JSON lines, TREC, gzip, BOM, CRLF, aliased column names,
rank instead of score, whitespace-separated with a header, labels inside the
run). bad/: one malformed file per validation case of the readers.
The files are committed; this script documents how they were made.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
FORMATS = HERE / "formats"
BAD = HERE / "bad"

# user, item, score: no ties inside a user, ids with leading zeros stay exact
RUN = [
    ("u1", "i01", 0.9), ("u1", "i02", 0.8), ("u1", "i03", 0.7), ("u1", "i04", 0.35),
    ("u2", "i02", 0.95), ("u2", "0042", 0.6), ("u2", "i05", 0.5),
    ("u3", "i01", 0.2), ("u3", "i06", 0.1),
    ("007", "i03", 0.55), ("007", "i04", 0.45), ("007", "i05", 0.25),
]
QRELS = [
    ("u1", "i01", 2), ("u1", "i03", 1), ("u1", "i05", 1),
    ("u2", "0042", 3), ("u2", "i06", 1), ("u2", "i02", 0),
    ("u3", "i06", 1),
    ("007", "i04", 2), ("007", "i01", 1),
]


def ranks():
    out, last, r = [], None, 0
    for u, i, s in RUN:
        r = r + 1 if u == last else 1
        last = u
        out.append((u, i, r, s))
    return out


def csv_text(header, rows, sep=",", eol="\n"):
    lines = [sep.join(header)] + [sep.join(str(v) for v in row) for row in rows]
    return eol.join(lines) + eol


def write(path: Path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))


def make_formats():
    run_csv = csv_text(["user_id", "item_id", "score"], RUN)
    qrels_csv = csv_text(["user_id", "item_id", "relevance"], QRELS)
    write(FORMATS / "run.csv", run_csv)
    write(FORMATS / "qrels.csv", qrels_csv)
    write(FORMATS / "run.tsv", csv_text(["user_id", "item_id", "score"], RUN, sep="\t"))
    write(FORMATS / "qrels.tsv", csv_text(["user_id", "item_id", "relevance"], QRELS, sep="\t"))
    for name, header, rows in (("run", ["user_id", "item_id", "score"], RUN),
                               ("qrels", ["user_id", "item_id", "relevance"], QRELS)):
        cols = list(zip(*rows))
        table = pa.table({h: pa.array(c) for h, c in zip(header, cols)})
        pq.write_table(table, FORMATS / f"{name}.parquet")
        lines = "".join(json.dumps(dict(zip(header, r))) + "\n" for r in rows)
        write(FORMATS / f"{name}.jsonl", lines)
    trec_run = "".join(f"{u} Q0 {i} {r} {s} mymodel\n" for u, i, r, s in ranks())
    # tabs, padded fields and a blank line, as real TREC files have
    trec_run_padded = "".join(f"{u}\tQ0\t{i}\t{r}\t  {s:.6f}\tmymodel\n" for u, i, r, s in ranks())
    write(FORMATS / "run.trec", trec_run_padded[:40] + trec_run_padded[40:].replace("\n", "\n\n", 1))
    write(FORMATS / "run.txt", trec_run)
    write(FORMATS / "qrels.qrels", "".join(f"{u} 0 {i} {r}\n" for u, i, r in QRELS))
    # TREC marks non-relevant with negative labels: an item outside the run, accepted silently
    write(FORMATS / "qrels_negative.qrels", "".join(f"{u} 0 {i} {r}\n" for u, i, r in QRELS) + "u3 0 i99 -1\n")
    write(FORMATS / "run.csv.gz", gzip.compress(run_csv.encode(), mtime=0))
    write(FORMATS / "run.jsonl.gz", gzip.compress((FORMATS / "run.jsonl").read_bytes(), mtime=0))
    write(FORMATS / "qrels.tsv.gz", gzip.compress((FORMATS / "qrels.tsv").read_bytes(), mtime=0))
    write(FORMATS / "run_bom.csv", b"\xef\xbb\xbf" + run_csv.encode())
    write(FORMATS / "run_crlf.csv", csv_text(["user_id", "item_id", "score"], RUN, eol="\r\n"))
    write(FORMATS / "qrels_bom_crlf.csv",
          b"\xef\xbb\xbf" + csv_text(["user_id", "item_id", "relevance"], QRELS, eol="\r\n").encode())
    padded = [(f" {u} ", f"{i}  ", f" {s} ") for u, i, s in RUN]
    write(FORMATS / "run_aliased.csv", csv_text([" qid", "docno ", "Prediction"], padded))
    write(FORMATS / "qrels_aliased.csv", csv_text(["uid", "iid", "label"], QRELS))
    write(FORMATS / "run_rank.csv", csv_text(["user", "item", "rank"], [(u, i, r) for u, i, r, _ in ranks()]))
    write(FORMATS / "run_ws.txt", csv_text(["user_id", "item_id", "score"], RUN, sep="   "))
    rel = {(u, i): r for u, i, r in QRELS}
    labelled = [{"user_id": u, "item_id": i, "score": s, "label": rel.get((u, i), 0)} for u, i, s in RUN]
    write(FORMATS / "run_labels.jsonl", "".join(json.dumps(r) + "\n" for r in labelled))


def make_bad():
    h = "user_id,item_id,score\n"
    hq = "user_id,item_id,relevance\n"
    files = {
        "empty.csv": b"",
        "blank.csv": "\n  \n\n",
        "header_only.csv": h,
        "missing_column.csv": "user_id,offer,score\nu1,i01,0.5\n",
        "ambiguous_columns.csv": "user,uid,item_id,score\nu1,u1,i01,0.5\n",
        "score_non_numeric.csv": h + "u1,i01,0.5\nu1,i02,abc\nu1,i03,0.3\nu2,i01,x\n",
        "score_empty.csv": h + "u1,i01,0.5\nu1,i02,0.4\nu1,i03,\n",
        "score_nan.csv": h + "u1,i01,0.5\nu1,i02,NaN\nu1,i03,nan\n",
        "score_inf.csv": h + "u1,i01,inf\n",
        "relevance_text.csv": hq + "u1,i01,1\nu1,i02,yes\n",
        "relevance_nan.tsv": "user_id\titem_id\trelevance\nu1\ti01\t1\nu1\ti02\tNaN\n",
        "duplicate_run.csv": h + "u1,i01,0.5\nu1,i02,0.4\nu1,i01,0.3\nu2,i01,0.3\nu2,i01,0.2\n",
        "conflicting_qrels.csv": hq + "u1,i01,1\nu1,i01,1\nu1,i02,0\nu1,i02,2\n",
        "wrong_fields.trec": "q1 Q0 d1 1 0.9 run\nq1 Q0 d2 2 0.8 run\nq1 Q0 d3 3 0.7\n",
        "wrong_fields.qrels": "q1 0 d1 1\nq1 0 d2\n",
        "wrong_fields.csv": h + "u1,i01,0.5\nu1,i02,0.4,extra\n",
        "binary.csv": b"user_id,item_id,score\n\x00\x01\x02\x03",
        "latin1.csv": h.encode() + b"u1,i01,0.5\ncaf\xe9,i02,0.4\n",
        "utf16.csv": (h + "u1,i01,0.5\n").encode("utf-16"),
        "json_array.json": '[{"user_id": "u1", "item_id": "i01", "score": 0.5}]\n',
        "bad_syntax.jsonl": '{"user_id": "u1", "item_id": "i01", "score": 0.5}\n'
                            '{"user_id": "u1", "item_id": "i02", "score": 0.4}\n'
                            '{"user_id": "u1", "item_id": "i03", "score": }\n',
        "corrupt.csv.gz": b"\x1f\x8b\x08\x00garbage that is not deflate",
        "empty_id.csv": h + "u1,i01,0.5\n,i02,0.4\n",
        "logloss_scores.csv": h + "u1,i01,0.5\nu1,i03,1.7\nu2,0042,-0.2\n",
        "disjoint_users.csv": h + "x1,i01,0.5\nx2,i02,0.4\n",
        "a_directory/README.txt": "A directory is not a run file; the tests pass this folder as --run.\n",
    }
    for name, data in files.items():
        write(BAD / name, data)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("xl/workbook.xml", "<workbook/>")
    write(BAD / "workbook.xlsx", buf.getvalue())
    write(BAD / "zip_renamed.csv", buf.getvalue())


if __name__ == "__main__":
    make_formats()
    make_bad()
