"""The in-memory baseline of the file benchmark: read a run and a ground-truth file with
pyarrow, convert to pandas and call ``mc.evaluate``; print the means as JSON.

Usage: ``python benchmarks/pyarrow_evaluate.py RUN QRELS`` (Parquet by the ``.parquet``
extension; TREC run or qrels by ``.trec``, single spaces, read by ``pyarrow.csv.read_csv``
with the layout's column names; otherwise CSV read by ``pyarrow.csv.read_csv`` with its
type inference).
No id, duplicate or number check beyond what ``mc.evaluate`` itself does.
"""

import json
import sys

import metrics_core as mc

METRICS = ["ndcg@10", "map@100", "mrr@10", "precision@10", "recall@100"]


TREC_RUN = ["user_id", "Q0", "item_id", "rank", "score", "tag"]
TREC_QRELS = ["user_id", "iteration", "item_id", "relevance"]


def read(path: str):
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pandas()
    import pyarrow.csv as pcsv

    if path.endswith(".trec"):  # single spaces; the run's or the ground truth's layout by the field count
        with open(path, "rb") as f:
            names = TREC_RUN if len(f.readline().split()) == 6 else TREC_QRELS
        keep = [n for n in names if n in ("user_id", "item_id", "score", "relevance")]
        return pcsv.read_csv(path, read_options=pcsv.ReadOptions(column_names=names),
                             parse_options=pcsv.ParseOptions(delimiter=" "),
                             convert_options=pcsv.ConvertOptions(
                                 include_columns=keep,
                                 column_types={"user_id": "string", "item_id": "string"})).to_pandas()
    return pcsv.read_csv(path).to_pandas()


if __name__ == "__main__":
    run, qrels = read(sys.argv[1]), read(sys.argv[2])
    ev = mc.evaluate(run, qrels, metrics=METRICS)
    print(json.dumps({m: float(ev.summary[m]) for m in METRICS}))
