"""The floor's server with a chart: ``st.App`` running :mod:`chart`."""

import streamlit as st

app = st.App("chart.py")
