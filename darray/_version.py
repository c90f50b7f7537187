"""darray's version: the one place it is written (pyproject.toml reads it; no metadata lookup at import)."""

__version__ = "0.1.0"
