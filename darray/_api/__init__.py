"""The public functions, one module per chapter of the Array API standard."""
