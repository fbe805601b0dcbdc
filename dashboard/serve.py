"""The dashboard's server: ``python3 -m streamlit run dashboard/serve.py``.

Streamlit runs :mod:`dashboard.app` (the entry script: sidebar and pages) for every browser
session, as with ``streamlit run dashboard/app.py``. Started from here it first runs
:func:`dashboard.startup.prepare` in the server's startup hook (``st.App``'s lifespan),
before it accepts connections: a restarted server's first visitor, often someone opening a
shared link, then does not wait for the imports of the first script run.
"""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@asynccontextmanager
async def lifespan(_app):
    from dashboard import startup

    startup.prepare()
    yield


app = st.App("app.py", lifespan=lifespan)
