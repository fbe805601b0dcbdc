"""The in-memory baseline of the file benchmark: read a run and a ground-truth file with
pyarrow, convert to pandas and call ``mc.evaluate``; print the means as JSON.

Usage: ``python benchmarks/pyarrow_evaluate.py RUN QRELS`` (Parquet by the ``.parquet``
extension, otherwise CSV read by ``pyarrow.csv.read_csv`` with its type inference).
No id, duplicate or number check beyond what ``mc.evaluate`` itself does.
"""

import json
import sys

import metrics_core as mc

METRICS = ["ndcg@10", "map@100", "mrr@10", "precision@10", "recall@100"]


def read(path: str):
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pandas()
    import pyarrow.csv as pcsv

    return pcsv.read_csv(path).to_pandas()


if __name__ == "__main__":
    run, qrels = read(sys.argv[1]), read(sys.argv[2])
    ev = mc.evaluate(run, qrels, metrics=METRICS)
    print(json.dumps({m: float(ev.summary[m]) for m in METRICS}))
