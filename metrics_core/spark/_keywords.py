"""The convention keywords of ``metrics_core.spark.evaluate``, generated from the declared conventions.

:func:`metrics_core.spark.evaluate` takes every convention of
:data:`metrics_core.conventions.CONVENTIONS` as ``**conventions``;
:func:`with_conventions` gives it a signature listing each one with its default
(``help()`` and editors show them), and :func:`given_conventions` turns the
keywords of a call into the dict of the conventions given, refusing an unknown
keyword with one line and a "did you mean". A keyword left out takes the
preset's value, else the default (:func:`metrics_core.conventions.resolve`).
Nothing here imports pyspark.
"""

from __future__ import annotations

import difflib
import inspect

from ..conventions import CONVENTIONS
from ..errors import MetricsError


def given_conventions(keywords: dict, other_keywords=()) -> dict:
    """The conventions given in a call (name -> value, None meaning not given); a one-line MetricsError for
    a keyword that is no convention, suggesting the closest convention or ``other_keywords`` name."""
    known = [c.name for c in CONVENTIONS]
    for name in keywords:
        if name not in known:
            close = difflib.get_close_matches(name, known + list(other_keywords), n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else f"conventions: {', '.join(known)}"
            raise MetricsError(f"metrics_core.spark.evaluate got an unknown keyword '{name[:80]}'; {hint}")
    return {name: keywords.get(name) for name in known}


def with_conventions(func):
    """``func`` (whose signature ends with ``**conventions``) with a signature in which ``**conventions`` is
    replaced by one keyword-only parameter per convention, defaulting to the convention's default, placed
    after ``preset`` as in :func:`metrics_core.evaluate`."""
    signature = inspect.signature(func)
    params = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    names = [p.name for p in params]
    at = names.index("preset") + 1 if "preset" in names else len(params)
    declared = [inspect.Parameter(c.name, inspect.Parameter.KEYWORD_ONLY, default=c.default) for c in CONVENTIONS]
    func.__signature__ = signature.replace(parameters=params[:at] + declared + params[at:])
    return func
