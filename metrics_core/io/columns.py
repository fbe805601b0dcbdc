"""Recognise which source column is the user, item, score, rank and relevance.

Names are compared after trimming, lower-casing and turning spaces and
hyphens into underscores (``"User ID"`` matches ``user_id``). For each role
the canonical name wins when present; otherwise exactly one alias must be
present (two aliases, e.g. ``user`` and ``uid``, is an error asking for an
explicit mapping). An explicit mapping (``{"user_id": "customer"}``) always
wins. When a run has a rank column but no score, ``score = -rank`` (lower rank
is better).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import MetricsError
from .lines import ROWS, LineMap
from .quote import quoted

ROLES = ("user_id", "item_id", "score", "rank", "relevance")

# Exact names (after :func:`normalise`) read as each role without a mapping. Two of them in
# one file is an error asking for a mapping, so a name joins only when it rarely sits next
# to another alias of the same role.
ALIASES: dict[str, tuple[str, ...]] = {
    "user_id": ("user_id", "user", "uid", "userid", "query_id", "qid", "customer_id", "visitor_id",
                "reader_id", "account_id"),
    "item_id": ("item_id", "item", "iid", "itemid", "doc_id", "docid", "docno", "doc", "document",
                "document_id", "article", "article_id", "news_id", "product", "product_id", "movie",
                "movie_id", "track_id", "video_id"),
    "score": ("score", "prediction", "pred", "probability", "prob", "proba", "logit", "predicted",
              "similarity"),
    "rank": ("rank",),
    "relevance": ("relevance", "rel", "label", "click", "clicks", "clicked", "purchased", "purchase",
                  "rating", "grade", "judgment", "target"),
}

_WHAT = {"user_id": "user", "item_id": "item", "score": "score", "rank": "rank", "relevance": "relevance"}


def normalise(name: str) -> str:
    """Comparison key of a column name."""
    return str(name).strip().lower().replace(" ", "_").replace("-", "_")


def role_of_key(key: str) -> str:
    """Role named by an explicit-mapping key: a role or any of its aliases."""
    k = normalise(key)
    for role, aliases in ALIASES.items():
        if k == role or k in aliases or k == _WHAT[role]:
            return role
    raise MetricsError(f"unknown column role {key!r} in the column mapping; use one of {', '.join(ROLES)}")


@dataclass
class ColumnMapping:
    """Which source column became which tidy column, for one file.

    ``score_from_rank`` is True when ``score = -rank``. ``lines`` locates a
    row of the returned frame in the source (``mapping.where(i)`` ->
    ``"line 7"``).
    """

    source: str
    format: str
    user_id: str | None = None
    item_id: str | None = None
    score: str | None = None
    rank: str | None = None
    relevance: str | None = None
    score_from_rank: bool = False
    explicit: tuple[str, ...] = ()
    n_rows: int = 0
    lines: LineMap = field(default=ROWS, repr=False, compare=False)

    def where(self, i: int) -> str:
        """``"line N"`` or ``"row N"`` of the i-th (0-based) returned row."""
        return self.lines(i)

    def pairs(self) -> list[tuple[str, str]]:
        """``(tidy column, source description)`` for every mapped role."""
        out = []
        for role in ROLES:
            src = getattr(self, role)
            if src is None:
                continue
            if role == "score" and self.score_from_rank:
                continue
            out.append((role, repr(src)))
        if self.score_from_rank:
            out.append(("score", f"-{self.rank!r} (no score column; lower rank is better)"))
        return out

    def describe(self) -> str:
        """One line such as ``run.csv (CSV): user_id <- 'qid', item_id <- 'docno', score <- 'pred'``."""
        body = ", ".join(f"{role} <- {src}" for role, src in self.pairs())
        return f"{self.source} ({self.format}): {body}"

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "format": self.format,
            "columns": {role: getattr(self, role) for role in ROLES if getattr(self, role) is not None},
            "score_from_rank": self.score_from_rank,
            "explicit": list(self.explicit),
            "rows": self.n_rows,
        }


MAX_NAMES_SHOWN = 20


def found_columns(names: list[str]) -> str:
    """The column names for a message: each cut to 80 characters, at most 20 of them."""
    shown = ", ".join(quoted(n) for n in names[:MAX_NAMES_SHOWN]) or "(none)"
    if len(names) > MAX_NAMES_SHOWN:
        shown += f" and {len(names) - MAX_NAMES_SHOWN} more"
    return shown


def delimiter_hint(names: list[str]) -> str:
    """A hint when the header was read as one column that holds another common separator."""
    if len(names) != 1:
        return ""
    for sep, label in ((";", "semicolon"), ("|", "pipe")):
        if sep in names[0]:
            return (f" (the header was read as one column but holds {label}s ({sep!r}): only comma-separated "
                    f"CSV, tab-separated TSV and whitespace-separated text are read; convert the file, e.g. "
                    f"pandas.read_csv(path, sep={sep!r}).to_csv('out.csv', index=False))")
    return ""


def detect(names: list[str], kind: str, name: str, explicit: dict | None = None) -> dict[str, str | None]:
    """Role -> source column name (or None) for the column ``names`` of file ``name``.

    ``kind`` "run" needs user, item and score or rank; "qrels" needs user,
    item and relevance; "auto" needs user, item and one of score, rank,
    relevance.
    """
    found = found_columns(names)
    chosen: dict[str, str | None] = {role: None for role in ROLES}
    if explicit:
        for key, col in explicit.items():
            role = role_of_key(key)
            if col not in names:
                matches = [n for n in names if normalise(n) == normalise(col)]
                if len(matches) != 1:
                    raise MetricsError(
                        f"{name}: column {quoted(col)} given for {role} is not in the file; columns found: {found}"
                    )
                col = matches[0]
            chosen[role] = col
    taken = {c for c in chosen.values() if c is not None}
    by_key: dict[str, list[str]] = {}
    for n in names:
        by_key.setdefault(normalise(n), []).append(n)
    for role in ROLES:
        if chosen[role] is not None:
            continue
        if role in by_key and role not in taken:
            chosen[role] = by_key[role][0]
            continue
        hits = [n for alias in ALIASES[role] for n in by_key.get(alias, []) if n not in taken]
        if len(hits) > 1:
            raise MetricsError(
                f"{name}: columns {', '.join(repr(h) for h in hits)} could all be the {_WHAT[role]} column; "
                f"map one explicitly, e.g. {role}={hits[0]}"
            )
        if hits:
            chosen[role] = hits[0]
            taken.add(hits[0])

    known = {a for aliases in ALIASES.values() for a in aliases}
    header_hint = delimiter_hint(names)
    if not header_hint and not (known & set(by_key) or explicit):
        header_hint = " (is the first line a header?)"

    def missing(role: str, extra: str = "") -> MetricsError:
        looked = ", ".join(ALIASES[role])
        return MetricsError(
            f"{name}: required {_WHAT[role]} column missing (looked for {looked}{extra}); columns found: "
            f"{found}{header_hint}; rename the column or map it explicitly, e.g. {role}=<column>"
        )

    for role in ("user_id", "item_id"):
        if chosen[role] is None:
            raise missing(role)
    if kind == "run" and chosen["score"] is None and chosen["rank"] is None:
        raise missing("score", " or a rank column")
    if kind == "qrels" and chosen["relevance"] is None:
        raise missing("relevance")
    if kind == "auto" and chosen["score"] is None and chosen["rank"] is None and chosen["relevance"] is None:
        raise MetricsError(
            f"{name}: no score, rank or relevance column (looked for {', '.join(ALIASES['score'] + ALIASES['rank'] + ALIASES['relevance'])}); "
            f"columns found: {found}"
        )
    if kind == "qrels":
        chosen["score"] = chosen["rank"] = None
    return chosen
