"""A bare Streamlit page: one small table (three models x five metrics)."""

import pandas as pd
import streamlit as st

st.title("Overview")
st.dataframe(pd.DataFrame({"ndcg@10": [0.31, 0.42, 0.47], "map@10": [0.21, 0.30, 0.33]},
                          index=["popularity", "mf", "two-tower"]))
