"""A built decision brief as plain JSON, and back: what a snapshot keeps of its first screen.

:func:`to_record` turns a :class:`metrics_core.brief.build.Brief` into a JSON text (every table column
by column, with its dtype; floats written with ``repr`` so they read back bit for bit, NaN
included); :func:`from_record` reads it back into an equal ``Brief`` (same frames, dtypes and
values), checking every part of its shape. A text that does not have the shape written here
(another :data:`FORMAT_VERSION`, a missing field, a column of another length or type) raises
:class:`RecordError` with one line: the caller then builds the brief again from the data.

:data:`FORMAT_VERSION` names the format *and* what the brief means: raise it whenever a change
of :mod:`metrics_core.brief.build` (or of what it reads) alters any number or sentence, so that briefs
kept by an earlier version are computed again rather than shown.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

from metrics_core.brief.build import Brief, Decision
from metrics_core.errors import MetricsError

__all__ = ["FORMAT_VERSION", "MAX_RECORD_BYTES", "RecordError", "to_record", "from_record"]

#: Version of the record's layout and of the brief's computation (see the module's description).
FORMAT_VERSION = "brief-3"
#: A kept brief is a few tables of at most a few hundred rows: 2 MiB as JSON at most.
MAX_RECORD_BYTES = 2 * 1024 * 1024

_TABLES = ("verdicts", "segments", "segment_losses", "failures", "head_to_head")
# The dtypes a brief's tables hold (pandas' names); anything else is not a brief's table.
_DTYPES = {"float64", "int64", "bool", "str", "string", "object"}


class RecordError(MetricsError):
    """A kept brief that cannot be read back (one line saying which part is wrong)."""


def _plain(value: Any) -> Any:
    """A table cell as a JSON value (numpy scalars as Python ones; missing text as None)."""
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return float(value)
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


def _table(frame: pd.DataFrame, name: str) -> dict:
    if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0 or frame.index.step != 1:
        raise RecordError(f"the brief's {name} table is not numbered 0..n-1; it cannot be kept")
    columns = []
    for column in frame.columns:
        series = frame[column]
        dtype = str(series.dtype)
        if dtype not in _DTYPES:
            raise RecordError(f"column {column!r} of the brief's {name} table has dtype {dtype}; it cannot be kept")
        columns.append({"name": str(column), "dtype": dtype, "values": [_plain(v) for v in series.tolist()]})
    return {"rows": len(frame), "columns": columns}


def to_record(brief: Brief) -> str:
    """The brief as one JSON text (see the module's description)."""
    record = {
        "format": FORMAT_VERSION,
        "decision": {**asdict(brief.decision), "challengers": list(brief.decision.challengers),
                     "metrics": list(brief.decision.metrics)},
        "title": brief.title, "notes": brief.notes, "population": brief.population, "n_users": int(brief.n_users),
        "coverage": [str(line) for line in brief.coverage], "attributes": [str(a) for a in brief.attributes],
        "served": {str(k): (None if v is None else int(v)) for k, v in brief.served.items()},
        "n_evaluated": int(brief.n_evaluated), "accounting": [str(line) for line in brief.accounting],
        "tables": {name: _table(getattr(brief, name), name) for name in _TABLES},
    }
    return json.dumps(record, allow_nan=True, ensure_ascii=False, separators=(",", ":"))


# ----------------------------------------------------------------------------- reading back

def _need(ok: bool, what: str) -> None:
    if not ok:
        raise RecordError(f"the kept brief is not readable ({what})")


def _texts(value: Any, what: str) -> list[str]:
    _need(isinstance(value, list) and all(isinstance(v, str) for v in value), f"{what} is not a list of texts")
    return list(value)


def _integer(value: Any, what: str) -> int:
    _need(isinstance(value, int) and not isinstance(value, bool) and value >= 0, f"{what} is not a count")
    return int(value)


def _column(spec: Any, rows: int, where: str) -> tuple[str, pd.Series]:
    _need(isinstance(spec, dict) and isinstance(spec.get("name"), str), f"a column of {where} has no name")
    name, dtype, values = spec["name"], spec.get("dtype"), spec.get("values")
    _need(dtype in _DTYPES, f"column {name!r} of {where} has an unknown dtype")
    _need(isinstance(values, list) and len(values) == rows, f"column {name!r} of {where} has not {rows} values")
    if dtype == "float64":
        _need(all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values),
              f"column {name!r} of {where} holds a value that is not a number")
    elif dtype == "int64":
        _need(all(isinstance(v, int) and not isinstance(v, bool) for v in values),
              f"column {name!r} of {where} holds a value that is not an integer")
    elif dtype == "bool":
        _need(all(isinstance(v, bool) for v in values), f"column {name!r} of {where} holds a value that is not true/false")
    else:
        _need(all(v is None or isinstance(v, str) for v in values), f"column {name!r} of {where} holds a value that is not text")
    return name, pd.Series(values, dtype=dtype, name=name) if values else pd.Series([], dtype=dtype, name=name)


def _frame(spec: Any, where: str) -> pd.DataFrame:
    _need(isinstance(spec, dict) and isinstance(spec.get("columns"), list), f"the {where} table is missing")
    rows = _integer(spec.get("rows"), f"the row count of {where}")
    columns = [_column(c, rows, where) for c in spec["columns"]]
    names = [n for n, _ in columns]
    _need(len(set(names)) == len(names), f"the {where} table names a column twice")
    return pd.DataFrame({n: s for n, s in columns}, index=pd.RangeIndex(rows), columns=names)


def from_record(text: str) -> Brief:
    """The :class:`Brief` kept by :func:`to_record` (RecordError when ``text`` is not one)."""
    _need(isinstance(text, str) and len(text.encode("utf-8", "surrogatepass")) <= MAX_RECORD_BYTES,
          "not a text of at most 2 MiB")
    try:
        record = json.loads(text)
    except ValueError:
        raise RecordError("the kept brief is not readable (not JSON)") from None
    _need(isinstance(record, dict), "not a JSON object")
    _need(record.get("format") == FORMAT_VERSION, f"format {record.get('format')!r}, not {FORMAT_VERSION}")
    d = record.get("decision")
    _need(isinstance(d, dict), "the decision is missing")
    _need(all(isinstance(d.get(k), str) for k in ("baseline", "users", "test", "correction", "family", "unit")),
          "the decision's baseline, users, test, correction, family or unit is not a text")
    _need(isinstance(d.get("alpha"), float) and 0 < d["alpha"] < 1, "the decision's alpha is not in (0, 1)")
    decision = Decision(baseline=d["baseline"], challengers=tuple(_texts(d.get("challengers"), "the challengers")),
                        metrics=tuple(_texts(d.get("metrics"), "the metrics")), users=d["users"], test=d["test"],
                        correction=d["correction"], alpha=d["alpha"], family=d["family"], unit=d["unit"])
    for key in ("title", "notes", "population"):
        _need(isinstance(record.get(key), str), f"the {key} is not a text")
    served = record.get("served")
    _need(isinstance(served, dict), "the models served are missing")
    served = {str(k): (None if v is None else _integer(v, f"the users {k} served")) for k, v in served.items()}
    tables = record.get("tables")
    _need(isinstance(tables, dict), "the tables are missing")
    frames = {name: _frame(tables.get(name), name) for name in _TABLES}
    return Brief(decision=decision, title=record["title"], notes=record["notes"], population=record["population"],
                 n_users=_integer(record.get("n_users"), "the users counted"),
                 coverage=_texts(record.get("coverage"), "the coverage"), attributes=_texts(record.get("attributes"),
                                                                                          "the attributes"),
                 served=served, n_evaluated=_integer(record.get("n_evaluated"), "the users evaluated"),
                 accounting=_texts(record.get("accounting"), "the accounting"), **frames)
