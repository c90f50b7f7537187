"""Local kernels of the layers, one set per local backend behind one interface.

A layer computes on its own block (extended by halos) with the :class:`Kernels`
of the block's library, chosen once per namespace by :func:`kernels_for`:

- :class:`Kernels` (the generic set) uses the Array API standard only, so it
  runs on every backend: convolutions as a banded im2col (the windows of a
  bounded band of output rows copied into one buffer, then one batched
  ``matmul``), transposed convolutions as one ``matmul`` and a permutation.
  NumPy uses it as is. Measured on this machine (one thread,
  ``benchmarks/bench_train.py --conv``, the surrogate's layers on a 2048^2
  field), against the previous ``sliding_window_view`` + ``einsum`` kernel it
  is 1.2x (1->8 channels), 2.4x (8->8) and 1.8x (1x1) faster forward, and its
  temporary memory is bounded by the band (``IM2COL_BUDGET`` elements)
  instead of ``C_in * prod(kernel)`` times the block. It is also 1.3-4x
  faster than ``torch.nn.functional.conv2d`` in float64 on the CPU;
- :class:`TorchKernels`: ``torch.nn.functional.conv{1,2,3}d`` /
  ``conv_transpose{1,2,3}d`` forward and ``aten.convolution_backward`` for
  both gradients where torch's kernel is the fast one (GPU; float32 layers
  with several input channels on the CPU), the generic kernels on torch
  tensors elsewhere (see the class);
- CuPy: the hook is :class:`CupyKernels`. CuPy's array API has no
  convolution (cuDNN is reachable only through ``cupyx`` internals), so it
  runs the generic im2col + ``matmul`` on the device (cuBLAS) and takes
  ``erf`` from ``cupyx.scipy.special``. A cuDNN-backed set would override
  ``conv`` / ``conv_backward`` there, as :class:`TorchKernels` does.

Every method takes and returns local arrays of the backend; no method
communicates.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import product

import array_api_compat

from .._backend import name_of, to_numpy

__all__ = ["Kernels", "TorchKernels", "CupyKernels", "NumpyKernels", "kernels_for", "IM2COL_BUDGET"]

#: Elements of one im2col band (8 MiB of float64): bounds the temporary memory of a convolution.
IM2COL_BUDGET = 1 << 20


def _offsets(ksize):
    return list(product(*(range(k) for k in ksize)))


class Kernels:
    """Local convolution kernels written against the Array API standard (every backend)."""

    name = "array-api"

    def __init__(self, xp):
        self.xp = xp

    # ------------------------------------------------------------ helpers
    def _empty(self, shape, like):
        return self.xp.empty(tuple(shape), dtype=like.dtype, device=array_api_compat.device(like))

    def _zeros(self, shape, like):
        return self.xp.zeros(tuple(shape), dtype=like.dtype, device=array_api_compat.device(like))

    @staticmethod
    def _geometry(sub_shape, ksize, stride, dilation):
        return tuple((n - (d * (k - 1) + 1)) // s + 1 for n, k, s, d in zip(sub_shape[2:], ksize, stride, dilation))

    @staticmethod
    def _rows(n, cin, ksize, oshape):
        """Output rows (first spatial axis) per im2col band."""
        per_row = n * cin * math.prod(ksize) * math.prod(oshape[1:])
        return max(1, IM2COL_BUDGET // max(per_row, 1))

    def _window(self, kidx, r0, m, stride, dilation, oshape):
        """Index of the input cells that kernel offset ``kidx`` meets for output rows ``[r0, r0 + m)``."""
        out = [slice(None), slice(None)]
        for i, (k, s, d, on) in enumerate(zip(kidx, stride, dilation, oshape)):
            start = (r0 * s if i == 0 else 0) + k * d
            count = m if i == 0 else on
            out.append(slice(start, start + (count - 1) * s + 1, s))
        return tuple(out)

    def _cols(self, sub, groups, ksize, stride, dilation, oshape, r0, r1):
        """im2col of output rows ``[r0, r1)``: ``(N, G, C_in/G * prod(k), rows * prod(rest))``."""
        xp = self.xp
        n, cin = sub.shape[:2]
        m = r1 - r0
        npos = m * math.prod(oshape[1:])
        if math.prod(ksize) == 1 and all(s == 1 for s in stride):
            part = sub[:, :, r0:r1, ...]
            return xp.reshape(part, (n, groups, cin // groups, npos))
        cols = self._empty((n, cin, math.prod(ksize), m) + tuple(oshape[1:]), sub)
        for kf, kidx in enumerate(_offsets(ksize)):
            cols[:, :, kf, ...] = sub[self._window(kidx, r0, m, stride, dilation, oshape)]
        return xp.reshape(cols, (n, groups, (cin // groups) * math.prod(ksize), npos))

    # ------------------------------------------------------------ convolution
    def conv(self, sub, weight, stride, dilation, groups):
        """Valid cross-correlation of the padded block ``sub`` ``(N, C_in, *L)`` with ``weight``."""
        xp = self.xp
        ksize = tuple(weight.shape[2:])
        oshape = self._geometry(sub.shape, ksize, stride, dilation)
        n, cin, cout = sub.shape[0], sub.shape[1], weight.shape[0]
        wm = xp.reshape(weight, (groups, cout // groups, (cin // groups) * math.prod(ksize)))
        rows = self._rows(n, cin, ksize, oshape)
        bands = []
        for r0 in range(0, oshape[0], rows):
            r1 = min(oshape[0], r0 + rows)
            cols = self._cols(sub, groups, ksize, stride, dilation, oshape, r0, r1)
            bands.append(xp.reshape(xp.matmul(wm, cols), (n, cout, r1 - r0) + tuple(oshape[1:])))
        return bands[0] if len(bands) == 1 else xp.concat(bands, axis=2)

    def conv_backward(self, sub, weight, g, stride, dilation, groups, need_input=True, need_weight=True):
        """``(d sub, d weight)`` of :meth:`conv` given the output gradient ``g`` (None where not needed)."""
        xp = self.xp
        ksize = tuple(weight.shape[2:])
        oshape = tuple(g.shape[2:])
        n, cin, cout = sub.shape[0], sub.shape[1], weight.shape[0]
        og, cgk = cout // groups, (cin // groups) * math.prod(ksize)
        wm = xp.reshape(weight, (groups, og, cgk))
        gsub = self._zeros(sub.shape, sub) if need_input else None
        gw = None
        rows = self._rows(n, cin, ksize, oshape)
        direct = math.prod(ksize) == 1 and all(s == 1 for s in stride)
        for r0 in range(0, oshape[0], rows):
            r1 = min(oshape[0], r0 + rows)
            m = r1 - r0
            gg = xp.reshape(g[:, :, r0:r1, ...], (n, groups, og, m * math.prod(oshape[1:])))
            if need_weight:
                cols = self._cols(sub, groups, ksize, stride, dilation, oshape, r0, r1)
                part = xp.sum(xp.matmul(gg, xp.matrix_transpose(cols)), axis=0)
                gw = part if gw is None else gw + part
            if need_input:
                gcols = xp.matmul(xp.matrix_transpose(wm), gg)  # (N, G, C_in/G * prod(k), positions)
                if direct:
                    gsub[:, :, r0:r1, ...] = xp.reshape(gcols, (n, cin, m) + tuple(oshape[1:]))
                    continue
                gcols = xp.reshape(gcols, (n, cin, math.prod(ksize), m) + tuple(oshape[1:]))
                for kf, kidx in enumerate(_offsets(ksize)):
                    gsub[self._window(kidx, r0, m, stride, dilation, oshape)] += gcols[:, :, kf, ...]
        if need_weight:
            gw = xp.reshape(gw, tuple(weight.shape)) if gw is not None else self._zeros(weight.shape, weight)
        return gsub, gw

    # ------------------------------------------------------------ transposed convolution (stride == kernel)
    def conv_transpose(self, x, weight, stride, groups):
        """Non-overlapping transposed convolution: every input cell fills its own ``stride`` patch."""
        xp = self.xp
        nsp = len(stride)
        n, cin, space = x.shape[0], x.shape[1], tuple(x.shape[2:])
        og = weight.shape[1]
        xg = xp.reshape(x, (n, groups, cin // groups, math.prod(space)))
        wm = xp.reshape(weight, (groups, cin // groups, og * math.prod(stride)))
        y = xp.matmul(xp.matrix_transpose(wm), xg)  # (N, G, og * prod(k), positions)
        y = xp.reshape(y, (n, groups, og) + tuple(stride) + space)
        order = (0, 1, 2) + tuple(a for i in range(nsp) for a in (3 + nsp + i, 3 + i))
        y = xp.permute_dims(y, order)
        return xp.reshape(y, (n, groups * og) + tuple(m * s for m, s in zip(space, stride)))

    def conv_transpose_backward(self, x, weight, g, stride, groups, need_input=True, need_weight=True):
        xp = self.xp
        nsp = len(stride)
        n, cin, space = x.shape[0], x.shape[1], tuple(x.shape[2:])
        og = weight.shape[1]
        cg = cin // groups
        wm = xp.reshape(weight, (groups, cg, og * math.prod(stride)))
        gg = xp.reshape(g, (n, groups, og) + tuple(v for m, s in zip(space, stride) for v in (m, s)))
        order = (0, 1, 2) + tuple(4 + 2 * i for i in range(nsp)) + tuple(3 + 2 * i for i in range(nsp))
        gg = xp.reshape(xp.permute_dims(gg, order), (n, groups, og * math.prod(stride), math.prod(space)))
        gx = gw = None
        if need_input:
            gx = xp.reshape(xp.matmul(wm, gg), tuple(x.shape))
        if need_weight:
            xg = xp.reshape(x, (n, groups, cg, math.prod(space)))
            gw = xp.reshape(xp.sum(xp.matmul(xg, xp.matrix_transpose(gg)), axis=0), tuple(weight.shape))
        return gx, gw

    # ------------------------------------------------------------ special functions
    def erf(self, x):
        """The error function. Generic fallback: computed on the host (NumPy) and copied back."""
        import numpy as np

        host = NumpyKernels.host_erf(np.asarray(to_numpy(x)))
        return self.xp.asarray(host, dtype=x.dtype, device=array_api_compat.device(x))


class NumpyKernels(Kernels):
    """NumPy: the generic kernels, ``erf`` from SciPy when installed."""

    name = "numpy"

    @staticmethod
    def host_erf(x):
        import numpy as np

        try:
            from scipy.special import erf
        except ImportError:  # pragma: no cover - scipy is optional
            erf = np.vectorize(math.erf, otypes=[x.dtype])
        return np.asarray(erf(x), dtype=x.dtype)

    def erf(self, x):
        return self.host_erf(x)


class CupyKernels(Kernels):
    """CuPy: the generic im2col + ``matmul`` on the device (cuBLAS); override ``conv*`` here for cuDNN."""

    name = "cupy"

    def erf(self, x):  # pragma: no cover - needs a GPU
        from cupyx.scipy.special import erf

        return erf(x)


class TorchKernels(Kernels):
    """torch: ``torch.nn.functional`` convolutions forward, ``aten.convolution_backward`` backward.

    Used where torch has a fast kernel: on a GPU (cuDNN), and on the CPU for
    float32/float16/bfloat16 layers with a spatial kernel and at least
    ``NATIVE_MIN_CHANNELS`` input channels per group (oneDNN). Measured on
    this machine (one thread, ``bench_train.py --conv``), torch's float64 CPU
    convolution is 2-4x slower than the generic banded im2col + ``matmul`` on
    the same torch tensors, and so are its 1-channel and 1x1 float32 gradients:
    those run the generic kernels (still torch calls, no copy to NumPy).
    """

    name = "torch"
    NATIVE_MIN_CHANNELS = 4

    def __init__(self, xp):
        super().__init__(xp)
        import torch

        self.torch = torch
        f = torch.nn.functional
        self._conv = {1: f.conv1d, 2: f.conv2d, 3: f.conv3d}
        self._transpose = {1: f.conv_transpose1d, 2: f.conv_transpose2d, 3: f.conv_transpose3d}

    def native(self, x, weight, channels_per_group) -> bool:
        """Whether torch's own convolution is the faster kernel for these operands."""
        if x.ndim - 2 not in self._conv:
            return False
        if x.device.type != "cpu":
            return True
        return (x.dtype != self.torch.float64 and math.prod(weight.shape[2:]) > 1
                and channels_per_group >= self.NATIVE_MIN_CHANNELS)

    def conv(self, sub, weight, stride, dilation, groups):
        if not self.native(sub, weight, sub.shape[1] // groups):
            return super().conv(sub, weight, stride, dilation, groups)
        return self._conv[sub.ndim - 2](sub, weight, None, tuple(stride), 0, tuple(dilation), groups)

    def conv_backward(self, sub, weight, g, stride, dilation, groups, need_input=True, need_weight=True):
        if not self.native(sub, weight, sub.shape[1] // groups):
            return super().conv_backward(sub, weight, g, stride, dilation, groups, need_input, need_weight)
        nsp = sub.ndim - 2
        gi, gw, _ = self.torch.ops.aten.convolution_backward(
            g.contiguous(), sub, weight, None, list(stride), [0] * nsp, list(dilation), False, [0] * nsp, groups,
            [bool(need_input), bool(need_weight), False])
        return gi, gw

    def conv_transpose(self, x, weight, stride, groups):
        if not self.native(x, weight, x.shape[1] // groups):
            return super().conv_transpose(x, weight, stride, groups)
        return self._transpose[x.ndim - 2](x, weight, None, tuple(stride), 0, 0, groups, 1)

    def conv_transpose_backward(self, x, weight, g, stride, groups, need_input=True, need_weight=True):
        if not self.native(x, weight, x.shape[1] // groups):
            return super().conv_transpose_backward(x, weight, g, stride, groups, need_input, need_weight)
        nsp = x.ndim - 2
        gi, gw, _ = self.torch.ops.aten.convolution_backward(
            g.contiguous(), x, weight, None, list(stride), [0] * nsp, [1] * nsp, True, [0] * nsp, groups,
            [bool(need_input), bool(need_weight), False])
        return gi, gw

    def erf(self, x):
        return self.torch.special.erf(x)


_BY_NAME = {"numpy": NumpyKernels, "torch": TorchKernels, "cupy": CupyKernels}


@lru_cache(maxsize=None)
def kernels_for(xp) -> Kernels:
    """The kernel set for local namespace ``xp`` (the generic Array API set for libraries without one)."""
    return _BY_NAME.get(name_of(xp), Kernels)(xp)
