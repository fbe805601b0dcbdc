"""What leaves the library: the HTML report, published snapshots, MLflow runs, notebook views,
plotly figures and JUnit XML."""
