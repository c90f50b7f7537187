"""A notebook that drives N MPI ranks: ipyparallel's MPI engines, ``%%px`` cells, outputs shown once.

``darray.interactive.start(4)`` starts an ipyparallel cluster of 4 engines
under the ``mpiexec`` of this Python's environment (the ``mpich`` wheel's in
a venv), and makes the notebook their front end: a ``%%px`` cell runs on
every rank, as the same code would in a script under ``mpiexec -n 4``, and
shows its outputs once -- rank 0's printing, figures and value, the other
ranks' lines only where they differ; one traceback per error with the ranks
that raised it; Ctrl-C stops the ranks' cell with one line
(:mod:`darray.interactive._front`). The guide is ``docs/guide/interactive.md``.

Needs the ``notebook`` extra (``pip install 'darray[notebook]'``: ipyparallel).

Examples
--------
In a notebook::

    import darray.interactive
    ranks = darray.interactive.start(2)    # 2 MPI engines; %%px now runs cells on them

    %%px
    import darray as da
    x = da.arange(12.0).reshape(3, 4)
    da.sum(x * x)                          # Out: np.float64(506.0), once

    ranks.stop()                           # or leave it: the cluster stops with the kernel
"""

from __future__ import annotations

import logging
import shutil
import sys
from pathlib import Path

from ._front import Front, RankError, Shown, Stopped, rank_magics, ranks_text

__all__ = ["start", "attach", "Ranks", "RankError", "Stopped", "Shown", "ranks_text", "find_mpiexec"]

#: Code every engine runs once connected: figures drawn in a cell are shown when the cell ends.
#: Progress bars are text on standard error (tqdm.auto would pick a widget, which the notebook cannot show
#: from an engine).
_ENGINE_SETUP = """
try:
    get_ipython().run_line_magic("matplotlib", "inline")
except ImportError:
    pass
import warnings as _warnings
try:
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        import tqdm.auto as _tqdm_auto, tqdm.asyncio as _tqdm_text
except ImportError:
    pass
else:
    _tqdm_auto.tqdm, _tqdm_auto.trange = _tqdm_text.tqdm, _tqdm_text.trange
    del _tqdm_auto, _tqdm_text
del _warnings
"""


def _ipyparallel(func: str):
    try:
        import ipyparallel
    except ImportError as e:
        raise ImportError(f"darray.interactive.{func} needs ipyparallel; install it with "
                          "pip install 'darray[notebook]'") from e
    return ipyparallel


def find_mpiexec() -> str | None:
    """The ``mpiexec`` beside this Python (a venv's, matching its mpi4py), else the first on ``PATH``.

    >>> find_mpiexec() is None or "mpiexec" in find_mpiexec()
    True
    """
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


def _mpi_rank() -> int:
    from mpi4py import MPI

    return MPI.COMM_WORLD.Get_rank()


class Ranks:
    """The engines a notebook drives: ``client``, ``view`` (all engines), ``size``, ``rank_of`` (engine id -> rank).

    :meth:`run` runs code as a ``%%px`` cell does; :meth:`restart` starts
    fresh engines; :meth:`stop` stops the cluster when :func:`start` started
    it (also on leaving a ``with`` block).
    """

    def __init__(self, client, cluster=None, *, activate: bool = True, suffix: str = "", timeout: float = 60.0) -> None:
        self.client = client
        self.cluster = cluster
        self.timeout = timeout
        self.front = Front(client[:], {})
        self._connect()
        self.magics = None
        if activate:
            self.activate(suffix)

    def _connect(self) -> None:
        self.view = self.client[:]
        self.view.block = True
        ranks = self.view.apply_sync(_mpi_rank)
        self.rank_of = dict(zip(self.client.ids, ranks))
        self.size = len(ranks)
        if sorted(ranks) != list(range(self.size)):
            raise RuntimeError(f"darray.interactive: the engines are not the ranks 0-{self.size - 1} of one MPI job "
                               f"(their ranks: {sorted(ranks)}); start them with engines='mpi'")
        self.view.execute(_ENGINE_SETUP, block=True)
        self.front.view, self.front.rank_of, self.front.out_of_step = self.view, self.rank_of, None

    def activate(self, suffix: str = "") -> None:
        """Register ``%px``, ``%%px``, ``%autopx`` (with ``suffix``) in this IPython, showing outputs once."""
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            return  # a plain Python process: no magics; run code with self.run
        self.magics = rank_magics(shell, self.front, suffix)
        shell.magics_manager.register(self.magics)

    def run(self, code: str):
        """Run ``code`` on every rank as a ``%%px`` cell does (outputs shown once); rank 0's value or None."""
        return self.front.execute(code)

    def restart(self) -> None:
        """Start fresh engines (the ranks' variables are lost): the way back after ranks went out of step."""
        if self.cluster is None:
            raise RuntimeError("darray.interactive.Ranks.restart: these engines were attached, not started here; "
                               "restart their cluster where it was started")
        self.cluster.restart_engines_sync()
        self.client.wait_for_engines(self.size, timeout=self.timeout)
        self._connect()
        if self.magics is not None:
            self.magics.view = self.view

    def stop(self) -> None:
        """Stop the engines and the controller (when :func:`start` started them); close the client."""
        try:
            if self.cluster is not None:
                self.client.shutdown(targets="all", hub=False, block=True)  # engines end cleanly, mpiexec with 0
        except Exception:  # the cluster is stopped below in any case
            pass
        finally:
            self.client.close()
            if self.cluster is not None:
                self.cluster.stop_cluster_sync()
                self.cluster = None

    def __enter__(self) -> Ranks:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<darray.interactive.Ranks: {self.size} MPI ranks, engines {sorted(self.rank_of)}>"


def start(n: int = 2, *, timeout: float = 60.0, mpiexec: str | None = None, activate: bool = True,
          **cluster_options) -> Ranks:
    """Start ``n`` MPI engines (ipyparallel, ``engines='mpi'``) and make this notebook their front end.

    Parameters
    ----------
    n : int
        Number of ranks.
    timeout : float
        Seconds to wait for the engines to register; the cluster is stopped if they do not.
    mpiexec : str, optional
        The launcher; default: the one beside this Python (:func:`find_mpiexec`).
    activate : bool
        Register the ``%%px`` magics that show outputs once.
    **cluster_options
        Passed to :class:`ipyparallel.Cluster` (``profile_dir``, ``cluster_id``, ``log_level``, ...).

    Returns
    -------
    Ranks
        The engines; ``ranks.stop()`` stops them (so does the end of this process).
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"darray.interactive.start: n must be a positive int (the number of ranks); got {n!r}")
    launcher = mpiexec or find_mpiexec()
    if launcher is None:
        raise FileNotFoundError("darray.interactive.start: no mpiexec found beside this Python or on PATH; "
                                "install MPI with pip install 'darray[mpi]'")
    ipp = _ipyparallel("start")
    from traitlets.config import Config

    cluster_options.setdefault("log_level", logging.ERROR)  # (not every engine's log when the cluster stops)
    config = Config()
    config.MPILauncher.mpi_cmd = [launcher]
    # (an engine's errors come back to this notebook; darray's MPI report-and-abort hook, meant for scripts, would
    # end the engines' whole job when they are stopped or restarted)
    config.MPIEngineSetLauncher.environment = {"DARRAY_ABORT_ON_ERROR": "0"}
    cluster = ipp.Cluster(engines="mpi", n=n, config=config, engine_timeout=int(timeout), **cluster_options)
    cluster.start_cluster_sync()
    try:
        client = cluster.connect_client_sync()
        client.wait_for_engines(n, timeout=timeout)
        return Ranks(client, cluster, activate=activate, timeout=timeout)
    except BaseException as e:
        cluster.stop_cluster_sync()
        if isinstance(e, TimeoutError):
            raise TimeoutError(f"darray.interactive.start: {n} MPI engines did not register within {timeout:g} s "
                               f"(launcher {launcher}); the cluster was stopped") from e
        raise


def attach(cluster_id: str = "", *, profile: str = "default", activate: bool = True, **client_options) -> Ranks:
    """Drive MPI engines that are already running (``ipcluster start -n 4 --engines=mpi``, or another kernel's).

    ``cluster_id`` and ``profile`` find the cluster's connection file as
    :class:`ipyparallel.Client` does; :meth:`Ranks.stop` then only disconnects.
    """
    client = _ipyparallel("attach").Client(cluster_id=cluster_id or None, profile=profile, **client_options)
    return Ranks(client, None, activate=activate)

