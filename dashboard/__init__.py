"""Streamlit dashboard of metrics_core (``streamlit run dashboard/serve.py``)."""
