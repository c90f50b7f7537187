"""Build darray's one optional C module against NumPy's headers.

Everything else about the package lives in ``pyproject.toml``; this file
exists because the header path (``numpy.get_include()``) is known only when
the build runs.  Where the module does not build (no C compiler), darray
installs all the same and runs the same paths in Python.
"""

import numpy
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "darray._core._lean",
            sources=["darray/_core/_lean.c"],
            include_dirs=[numpy.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
            optional=True,
        )
    ]
)
