"""A bare Streamlit page: the small table of :mod:`table` and one plotly bar chart of it."""

import pandas as pd
import plotly.express as px
import streamlit as st

st.title("Overview")
table = pd.DataFrame({"ndcg@10": [0.31, 0.42, 0.47], "map@10": [0.21, 0.30, 0.33]},
                     index=["popularity", "mf", "two-tower"])
st.dataframe(table)
st.plotly_chart(px.bar(table.reset_index(), x="index", y="ndcg@10"))
