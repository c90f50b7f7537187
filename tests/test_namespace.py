"""The public namespace against the Array API 2024.12 standard and against a written-out ``__all__``."""

from __future__ import annotations

import darray as da

#: Every name of the Array API standard 2024.12 main namespace.
STANDARD = frozenset({
    '__array_api_version__', '__array_namespace_info__', '__version__', 'abs', 'acos', 'acosh', 'add', 'all',
    'any', 'arange', 'argmax', 'argmin', 'argsort', 'asarray', 'asin', 'asinh', 'astype', 'atan', 'atan2',
    'atanh', 'bitwise_and', 'bitwise_invert', 'bitwise_left_shift', 'bitwise_or', 'bitwise_right_shift',
    'bitwise_xor', 'bool', 'broadcast_arrays', 'broadcast_to', 'can_cast', 'ceil', 'clip', 'complex128',
    'complex64', 'concat', 'conj', 'copysign', 'cos', 'cosh', 'count_nonzero', 'cumulative_prod',
    'cumulative_sum', 'diff', 'divide', 'e', 'empty', 'empty_like', 'equal', 'exp', 'expand_dims', 'expm1',
    'eye', 'finfo', 'flip', 'float32', 'float64', 'floor', 'floor_divide', 'from_dlpack', 'full', 'full_like',
    'greater', 'greater_equal', 'hypot', 'iinfo', 'imag', 'inf', 'int16', 'int32', 'int64', 'int8', 'isdtype',
    'isfinite', 'isinf', 'isnan', 'less', 'less_equal', 'linspace', 'log', 'log10', 'log1p', 'log2',
    'logaddexp', 'logical_and', 'logical_not', 'logical_or', 'logical_xor', 'matmul', 'matrix_transpose',
    'max', 'maximum', 'mean', 'meshgrid', 'min', 'minimum', 'moveaxis', 'multiply', 'nan', 'negative',
    'newaxis', 'nextafter', 'nonzero', 'not_equal', 'ones', 'ones_like', 'permute_dims', 'pi', 'positive',
    'pow', 'prod', 'real', 'reciprocal', 'remainder', 'repeat', 'reshape', 'result_type', 'roll', 'round',
    'searchsorted', 'sign', 'signbit', 'sin', 'sinh', 'sort', 'sqrt', 'square', 'squeeze', 'stack', 'std',
    'subtract', 'sum', 'take', 'take_along_axis', 'tan', 'tanh', 'tensordot', 'tile', 'tril', 'triu', 'trunc',
    'uint16', 'uint32', 'uint64', 'uint8', 'unique_all', 'unique_counts', 'unique_inverse', 'unique_values',
    'unstack', 'var', 'vecdot', 'where', 'zeros', 'zeros_like'
})

LINALG = frozenset({
    'cholesky', 'cross', 'det', 'diagonal', 'eigh', 'eigvalsh', 'inv', 'matmul', 'matrix_norm',
    'matrix_power', 'matrix_rank', 'matrix_transpose', 'outer', 'pinv', 'qr', 'slogdet', 'solve', 'svd',
    'svdvals', 'tensordot', 'trace', 'vecdot', 'vector_norm'
})

FFT = frozenset({
    'fft', 'fftfreq', 'fftn', 'fftshift', 'hfft', 'ifft', 'ifftn', 'ifftshift', 'ihfft', 'irfft', 'irfftn',
    'rfft', 'rfftfreq', 'rfftn'
}) | frozenset({'fft2', 'ifft2', 'irfft2', 'rfft2'})  # NumPy's 2-d names

#: darray's own public names, written out: a change to the namespace must change this list too.
ALL = frozenset({
    'CollectiveMismatch', 'RanksLeft',
    'Communicator', 'DArray', 'Layout', '__array_api_version__', '__array_namespace_info__', '__version__',
    'abs', 'absolute', 'acos', 'acosh', 'add', 'all', 'allclose', 'amax', 'amin', 'angle', 'any', 'arange',
    'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctan2', 'arctanh', 'argmax', 'argmin', 'argsort',
    'around', 'array', 'array2string', 'array_equal', 'array_repr', 'array_split', 'array_str', 'asarray',
    'asin', 'asinh', 'astype', 'atan', 'atan2',
    'atanh', 'atleast_1d', 'atleast_2d', 'atleast_3d', 'autodiff', 'average', 'bincount', 'bitwise_and',
    'bitwise_count', 'bitwise_invert', 'bitwise_left_shift', 'bitwise_not', 'bitwise_or', 'bitwise_right_shift',
    'bitwise_xor', 'bool', 'broadcast_arrays', 'broadcast_shapes', 'broadcast_to', 'can_cast', 'cbrt', 'ceil',
    'clip', 'column_stack', 'complex128', 'complex64', 'concat', 'concatenate', 'config', 'conj', 'conjugate',
    'copy', 'copysign', 'corrcoef', 'cos', 'cosh', 'count_nonzero', 'cov', 'cross', 'cumprod', 'cumsum',
    'cumulative_prod', 'cumulative_sum', 'default_communicator', 'deg2rad', 'degrees', 'diag', 'diagonal',
    'diff', 'digitize', 'divide', 'divmod', 'dot', 'dstack', 'e', 'einsum', 'empty', 'empty_like', 'equal',
    'exp', 'exp2', 'expand_dims', 'explain', 'expm1', 'eye', 'fabs', 'fft', 'finfo', 'flip', 'float32',
    'float64', 'float_power', 'floor', 'floor_divide', 'fmax', 'fmin', 'fmod', 'frexp', 'from_dask',
    'from_dlpack', 'from_local', 'full', 'full_like', 'fuse', 'gcd', 'get_printoptions', 'gradient', 'greater',
    'greater_equal',
    'heaviside', 'histogram', 'hstack', 'hypot', 'iinfo', 'imag', 'inf', 'inner', 'int16', 'int32', 'int64',
    'int8', 'interop', 'interp', 'invert', 'io', 'isclose', 'isdtype', 'isfinite', 'isin', 'isinf', 'isnan',
    'lcm', 'ldexp', 'left_shift', 'less', 'less_equal', 'lib', 'linalg', 'linspace', 'log', 'log10', 'log1p',
    'log2',
    'logaddexp', 'logaddexp2', 'logical_and', 'logical_not', 'logical_or', 'logical_xor', 'map_overlap',
    'matmul', 'matrix_transpose', 'max', 'maximum', 'mean', 'median', 'meshgrid', 'min', 'minimum', 'mod',
    'modf', 'moveaxis', 'multiply', 'nan', 'nan_to_num', 'nanargmax', 'nanargmin', 'nancumprod',
    'nancumsum', 'nanmax', 'nanmean', 'nanmedian', 'nanmin', 'nanpercentile', 'nanprod', 'nanquantile', 'nanstd',
    'nansum', 'nanvar', 'ndim', 'negative', 'newaxis', 'nextafter', 'nn', 'nonzero', 'not_equal', 'ones', 'output', 'rank0',
    'ones_like', 'optim', 'outer', 'pad', 'percentile', 'permute_dims', 'pi', 'plan_grid', 'points', 'positive', 'pow',
    'power', 'printoptions', 'prod', 'ptp', 'quantile', 'rad2deg', 'radians', 'random', 'ravel', 'real',
    'reciprocal',
    'redistribute', 'remainder', 'repeat', 'reshape', 'result_type', 'right_shift', 'rint', 'roll', 'round',
    'searchsorted', 'set_printoptions', 'shape', 'sign', 'signbit', 'sin', 'sinh', 'size', 'sort', 'spacing',
    'split', 'sqrt',
    'square', 'squeeze', 'stack', 'std', 'stencil', 'subtract', 'sum', 'swapaxes', 'take', 'take_along_axis',
    'tan', 'tanh', 'tensordot', 'tile', 'to_dask', 'trace', 'tracing', 'transpose', 'trapezoid', 'tril', 'triu',
    'true_divide', 'trunc', 'ufunc', 'uint16', 'uint32', 'uint64', 'uint8', 'unique', 'unique_all', 'unique_counts',
    'unique_inverse', 'unique_values', 'unstack', 'var', 'vdot', 'vecdot', 'vstack', 'where', 'zeros',
    'zeros_like'
}) | frozenset({  # NumPy's scalar types and dtype class (darray._api.dtype_objects), NumPy's creation names
    'identity', 'asanyarray', 'ascontiguousarray', 'asfortranarray', 'errstate', 'fromiter', 'geterr', 'geterrcall',
    'iscomplex', 'iscomplexobj', 'isreal', 'isrealobj', 'isscalar', 'issubdtype', 'ndarray', 'promote_types', 'seterr',
    'seterrcall', 'fromfunction', 'indices', 'isfortran', 'ix_', 'mgrid', 'ndenumerate', 'ndindex', 'nditer', 'ogrid',
    'ravel_multi_index',
    'unravel_index', 'load', 'loadtxt', 'save', 'savetxt',
    'False_', 'True_', 'asarray_chkfinite', 'base_repr', 'binary_repr', 'common_type', 'diag_indices',
    'diag_indices_from', 'euler_gamma', 'exceptions', 'fix', 'format_float_positional', 'format_float_scientific',
    'frombuffer', 'fromfile', 'fromstring', 'genfromtxt', 'geomspace', 'index_exp', 'isneginf', 'isposinf', 'iterable',
    'little_endian', 'logspace', 'mask_indices', 'min_scalar_type', 'mintypecode', 'real_if_close', 's_', 'sinc',
    'tri', 'tril_indices', 'tril_indices_from', 'triu_indices', 'triu_indices_from', 'typename', 'vander',
    'argwhere', 'bartlett', 'blackman', 'diagflat', 'flatnonzero', 'hamming', 'hanning',
    'bool_', 'byte', 'cdouble', 'complexfloating', 'csingle', 'double', 'dtype', 'floating', 'generic', 'inexact',
    'int_', 'intc', 'integer', 'intp', 'long', 'longlong', 'number', 'short', 'signedinteger', 'single', 'ubyte',
    'uint', 'uintc', 'uintp', 'ulong', 'ulonglong', 'unsignedinteger', 'ushort',
    'float16', 'half', 'datetime64', 'timedelta64', 'void', 'isnat', 'datetime_data',  # NumPy's dtypes beyond
}) | frozenset({  # more NumPy functions (darray._api.numpy_sets, numpy_partition, numpy_convolve, ...)
    'argpartition', 'convolve', 'correlate', 'intersect1d', 'packbits', 'partition', 'put', 'put_along_axis',
    'rot90', 'setdiff1d', 'setxor1d', 'union1d', 'unpackbits',
}) | frozenset({  # NumPy's editing, selection, polynomial and histogram functions (numpy_edit, numpy_select,
    # numpy_poly, numpy_hist)
    'append', 'apply_along_axis', 'apply_over_axes', 'array_equiv', 'block', 'c_', 'choose', 'compress', 'copyto',
    'delete', 'dsplit', 'ediff1d', 'einsum_path', 'emath', 'extract', 'fill_diagonal', 'fliplr', 'flipud',
    'histogram2d', 'histogram_bin_edges', 'histogramdd', 'hsplit', 'i0', 'insert', 'kaiser', 'kron', 'lexsort',
    'matvec', 'piecewise', 'place', 'poly', 'poly1d', 'polyadd', 'polyder', 'polydiv', 'polyfit', 'polyint',
    'polymul', 'polysub', 'polyval', 'putmask', 'r_', 'resize', 'rollaxis', 'roots', 'row_stack', 'select',
    'sort_complex', 'trim_zeros', 'unwrap', 'vecmat', 'vectorize', 'vsplit',
})

#: The array object's attributes and methods in the standard.
ARRAY_OBJECT = frozenset({
    "__abs__", "__add__", "__and__", "__array_namespace__", "__bool__", "__complex__", "__dlpack__",
    "__dlpack_device__", "__eq__", "__float__", "__floordiv__", "__ge__", "__getitem__", "__gt__", "__index__",
    "__int__", "__invert__", "__le__", "__lshift__", "__lt__", "__matmul__", "__mod__", "__mul__", "__ne__",
    "__neg__", "__or__", "__pos__", "__pow__", "__rshift__", "__setitem__", "__sub__", "__truediv__", "__xor__",
    "to_device", "dtype", "device", "mT", "ndim", "shape", "size", "T",
})


def test_standard_names_are_all_exported():
    missing = sorted(STANDARD - set(da.__all__))
    assert not missing, f"names of the standard missing from darray.__all__: {missing}"
    for name in STANDARD:
        assert hasattr(da, name), name


def test_all_is_sorted_and_written_out():
    assert list(da.__all__) == sorted(da.__all__)
    assert set(da.__all__) == ALL, (sorted(set(da.__all__) - ALL), sorted(ALL - set(da.__all__)))


def test_extensions():
    assert sorted(LINALG - set(dir(da.linalg))) == []
    assert sorted(FFT - set(dir(da.fft))) == []
    assert da.__array_api_version__ == "2024.12"


def test_array_object_attributes():
    missing = sorted(name for name in ARRAY_OBJECT if not hasattr(da.DArray, name))
    assert not missing, missing
    for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift",
               "matmul"):
        assert hasattr(da.DArray, f"__r{op}__") and hasattr(da.DArray, f"__i{op}__"), op
