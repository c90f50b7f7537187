"""``python -m darray.bench``: the ``darray bench`` command (also the body of its ``mpiexec`` child job)."""

import sys

from . import main

sys.exit(main())
