"""Array kernels: contiguous NumPy arrays in, arrays out; no pandas, no file names."""
