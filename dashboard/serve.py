"""The dashboard's server: ``python3 -m streamlit run dashboard/serve.py``.

Streamlit runs :mod:`dashboard.app` (the entry script: sidebar and pages) for every browser
session, as with ``streamlit run dashboard/app.py``. Started from here, its startup hook
(``st.App``'s lifespan) starts :func:`dashboard.startup.prepare` on a thread: the server
answers at once, and the imports of the first script run are done while the first visitor's
browser loads the page's code (a restarted server's first visitor is often someone opening a
shared link); a script run that needs a module still being imported waits for that import.

Every HTML page it serves to a browser without an owner secret sets one in an ``HttpOnly``
cookie (:class:`dashboard.owner.OwnerCookieMiddleware`): no page script ever sees it. An uploader's
request the server answers while a script run starts is kept (:mod:`dashboard.upload_replies`).
"""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st
from streamlit import config as _config
from starlette.middleware import Middleware

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@asynccontextmanager
async def lifespan(_app):
    from dashboard import startup

    startup.start()
    yield


from dashboard.owner import OwnerCookieMiddleware  # noqa: E402
from dashboard.upload_replies import keep_file_url_replies  # noqa: E402

# an uploader's request answered while a script run starts is not dropped (dashboard.upload_replies)
keep_file_url_replies()

# Tables offer no "Download as CSV" of their own (Streamlit's writes "=tier" as it is, a formula in a
# spreadsheet): every CSV of the dashboard is a spreadsheet-safe download button. Also in
# .streamlit/config.toml; set here so a server started from another folder has it too.
_config.set_option("client.disableDataExport", True, "dashboard/serve.py")
# Every page gives its widgets the values a shared link asks for before drawing them (dashboard.url):
# Streamlit's warning about a widget with a default whose value is also set in the Session State is
# that design, not a mistake. Also in .streamlit/config.toml.
_config.set_option("global.disableWidgetStateDuplicationWarning", True, "dashboard/serve.py")

app = st.App("app.py", lifespan=lifespan, middleware=[Middleware(OwnerCookieMiddleware)])
