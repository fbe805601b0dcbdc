"""The floor's server: ``st.App`` (as ``dashboard/serve.py`` starts the dashboard) running :mod:`table`."""

import streamlit as st

app = st.App("table.py")
