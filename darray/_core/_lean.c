/* darray._core._lean: the lean paths of DArray's operators and indexing, compiled.
 *
 * The lean path is the case a NumPy script meets in every line of a loop: a
 * small array that every rank holds whole (``Layout.small_whole``), a NumPy
 * block, and the other operand on the very same layout or a Python int or
 * float.  That case is one NumPy call and a wrap.  In Python the checks and
 * the wrap cost more bytecodes than the NumPy call; here they are a few
 * pointer compares.
 *
 * Every object of this module holds the Python function that does the same
 * work in general (``general``): any test that fails calls it with the very
 * arguments it got, with nothing done, so both give the same result and raise
 * the same errors.  The module reads DArray's and Layout's slots at the
 * offsets their member descriptors give (``setup``); the pure-Python paths in
 * operators.py and indexing.py stay the reference and the fallback where this
 * module was not built.
 *
 * One case goes further than the checks: 0-d arithmetic and element reads
 * (``u[i] = un[i] - c * (un[i] - un[i - 1])``).  NumPy's kernels cost
 * 250 ns on 0-d arrays and give a scalar that must become a 0-d array again;
 * here a float64 or float32 operation is one C operation on the items and
 * a new 0-d array from NumPy's C API.  The result is NumPy's bits: the same
 * IEEE operation on finite items, and any operation that would raise a
 * floating-point exception (a division by zero, an overflow, an invalid or
 * underflowing result) goes to NumPy's kernel, which reports it as
 * ``numpy.seterr`` says.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include <numpy/arrayobject.h>

/* ------------------------------------------------------------ what setup() tells */

static PyTypeObject *DArrayType = NULL;   /* darray._core.array.DArray */
static PyTypeObject *NdarrayType = NULL;  /* numpy.ndarray */
static PyObject *RecorderDict = NULL;     /* darray._recorder.__dict__: ``active`` is None unless tracing */
static PyObject *NumpyXp = NULL;          /* darray._backend.NUMPY */
static PyObject *NumpyAsarray = NULL;     /* numpy.asarray: a NumPy scalar result as a 0-d array */
static PyTypeObject *GenericType = NULL;  /* numpy.generic: NumPy's scalars */
static PyTypeObject *DerivedType = NULL;  /* darray._layout.derived.Derived: a layout's cache (``_derived``) */
static PyObject *StrActive = NULL, *StrShape = NULL, *StrDtype = NULL, *EmptyTuple = NULL;

static Py_ssize_t off_block, off_layout, off_comm, off_xp, off_local, off_halo_fresh, off_halo_exchange, off_link;
static Py_ssize_t off_whole, off_small_whole, off_derived, off_shape;
static Py_ssize_t off_whole_by_shape;  /* Derived.whole_by_shape: shape -> the layout of a whole block's part */

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

static int
slot_offset(PyObject *type, const char *name, Py_ssize_t *offset)
{
    PyObject *descr = PyObject_GetAttrString(type, name);
    if (descr == NULL)
        return -1;
    if (!Py_IS_TYPE(descr, &PyMemberDescr_Type)
            || ((PyMemberDescrObject *)descr)->d_member->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "_lean.setup: %s is not a slot", name);
        Py_DECREF(descr);
        return -1;
    }
    *offset = ((PyMemberDescrObject *)descr)->d_member->offset;
    Py_DECREF(descr);
    return 0;
}

static PyObject *
setup(PyObject *module, PyObject *args)
{
    PyObject *darray, *layout, *derived, *ndarray, *generic, *asarray, *recorder, *numpy_xp;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!OO!O:setup", &PyType_Type, &darray, &PyType_Type, &layout,
                          &PyType_Type, &derived, &PyType_Type, &ndarray, &PyType_Type, &generic, &asarray,
                          &PyDict_Type, &recorder, &numpy_xp))
        return NULL;
    if (slot_offset(darray, "_block", &off_block) || slot_offset(darray, "_layout", &off_layout)
            || slot_offset(darray, "_comm", &off_comm) || slot_offset(darray, "_xp", &off_xp)
            || slot_offset(darray, "_local", &off_local) || slot_offset(darray, "_halo_fresh", &off_halo_fresh)
            || slot_offset(darray, "_halo_exchange", &off_halo_exchange) || slot_offset(darray, "_link", &off_link)
            || slot_offset(layout, "whole", &off_whole) || slot_offset(layout, "small_whole", &off_small_whole)
            || slot_offset(layout, "_derived", &off_derived) || slot_offset(layout, "shape", &off_shape)
            || slot_offset(derived, "whole_by_shape", &off_whole_by_shape))
        return NULL;
    Py_XSETREF(DArrayType, (PyTypeObject *)Py_NewRef(darray));
    Py_XSETREF(NdarrayType, (PyTypeObject *)Py_NewRef(ndarray));
    Py_XSETREF(DerivedType, (PyTypeObject *)Py_NewRef(derived));
    Py_XSETREF(RecorderDict, Py_NewRef(recorder));
    Py_XSETREF(NumpyXp, Py_NewRef(numpy_xp));
    Py_XSETREF(GenericType, (PyTypeObject *)Py_NewRef(generic));
    Py_XSETREF(NumpyAsarray, Py_NewRef(asarray));
    Py_RETURN_NONE;
}

/* A DArray of ``block`` (a new reference, taken) on ``layout``, ``comm``, ``xp``: DArray._wrap. */
static PyObject *
wrap(PyObject *block, PyObject *layout, PyObject *comm, PyObject *xp)
{
    PyObject *out = DArrayType->tp_alloc(DArrayType, 0);
    if (out == NULL) {
        Py_DECREF(block);
        return NULL;
    }
    SLOT(out, off_block) = block;
    SLOT(out, off_layout) = Py_NewRef(layout);
    SLOT(out, off_comm) = Py_NewRef(comm);
    SLOT(out, off_xp) = Py_NewRef(xp);
    SLOT(out, off_local) = Py_NewRef(Py_None);
    SLOT(out, off_halo_fresh) = Py_NewRef(Py_False);
    SLOT(out, off_halo_exchange) = Py_NewRef(Py_None);
    SLOT(out, off_link) = Py_NewRef(Py_None);
    return out;
}

/* The dict ``layout._derived.whole_by_shape`` (borrowed), or NULL where the layout has no such cache: the
 * replicated layouts of a whole block's parts by their shapes, filled by the Python path
 * (darray._core.indexing.whole_getitem) and only read here. */
static inline PyObject *
whole_by_shape(PyObject *layout)
{
    PyObject *derived = SLOT(layout, off_derived);
    if (derived == NULL || Py_TYPE(derived) != DerivedType)
        return NULL;
    PyObject *by_shape = SLOT(derived, off_whole_by_shape);
    return by_shape != NULL && PyDict_CheckExact(by_shape) ? by_shape : NULL;
}

/* Whether the recorder (darray.tracer, autodiff) is off: the lean paths never run while it records. */
static inline int
recorder_off(void)
{
    PyObject *active = PyDict_GetItemWithError(RecorderDict, StrActive);
    return active == Py_None;
}

/* Whether ``obj`` is a DArray whose layout's ``flag`` slot is True; its layout and block then in the pointers. */
static inline int
darray_with(PyObject *obj, Py_ssize_t flag, PyObject **layout, PyObject **block)
{
    *layout = *block = NULL;
    if (DArrayType == NULL || Py_TYPE(obj) != DArrayType)
        return 0;
    *layout = SLOT(obj, off_layout);
    *block = SLOT(obj, off_block);
    return *layout != NULL && *block != NULL && SLOT(*layout, flag) == Py_True && Py_TYPE(*block) == NdarrayType;
}

/* Whether ``obj`` is a DArray the operators' lean path takes: a NumPy block on a small whole layout, or on a
 * whole 0-d one (``zero_d``: NumPy's kernels give a NumPy scalar there, made a 0-d array again). */
static inline int
lean_operand(PyObject *obj, PyObject **layout, PyObject **block, int *zero_d)
{
    *zero_d = 0;
    int small = darray_with(obj, off_small_whole, layout, block);
    if (!small && !darray_with(obj, off_whole, layout, block))
        return 0;
    PyObject *shape = SLOT(*layout, off_shape);
    *zero_d = shape != NULL && PyTuple_CheckExact(shape) && PyTuple_GET_SIZE(shape) == 0;
    return small || *zero_d;
}

/* A kernel's result as a block: ``out`` (a new reference, taken) if it is an ndarray; a NumPy scalar as a 0-d
 * array where ``zero_d``; else NULL with no error set (the general path decides). */
static PyObject *
as_block(PyObject *out, int zero_d)
{
    if (Py_TYPE(out) == NdarrayType)
        return out;
    PyObject *block = NULL;
    if (zero_d && PyObject_TypeCheck(out, GenericType))
        block = PyObject_CallOneArg(NumpyAsarray, out);
    Py_DECREF(out);
    return block;
}

/* Whether ``dtype(block)`` is in ``accepted`` (a set of dtypes, which the general path may grow); -1 on error. */
static int
dtype_in(PyObject *block, PyObject *accepted)
{
    PyObject *dtype = PyObject_GetAttr(block, StrDtype);
    if (dtype == NULL)
        return -1;
    int found = PySet_Contains(accepted, dtype);
    Py_DECREF(dtype);
    return found;
}


/* ------------------------------------------------------------ items and 0-d arrays, through NumPy's C API */

/* Which kernels the 0-d path computes itself (resolved from the kernel a Lean was made with). */
enum op { OP_NONE, OP_ADD, OP_SUBTRACT, OP_MULTIPLY, OP_DIVIDE, OP_LESS, OP_LESS_EQUAL, OP_GREATER,
          OP_GREATER_EQUAL, OP_EQUAL, OP_NOT_EQUAL, OP_NEGATIVE, OP_POSITIVE, OP_ABSOLUTE };

static const char *const OP_KERNELS[] = {
    NULL, "add", "subtract", "multiply", "divide", "less", "less_equal", "greater", "greater_equal", "equal",
    "not_equal", "negative", "positive", "absolute", NULL,
};

/* The op of NumPy's ufunc ``kernel`` (compared by identity with numpy's attribute), OP_NONE for any other. */
static int
op_of(PyObject *kernel)
{
    PyObject *numpy = PyImport_ImportModule("numpy");
    if (numpy == NULL)
        return -1;
    int found = OP_NONE;
    for (int op = OP_ADD; OP_KERNELS[op] != NULL && found == OP_NONE; op++) {
        PyObject *ufunc = PyObject_GetAttrString(numpy, OP_KERNELS[op]);
        if (ufunc == NULL) {
            Py_DECREF(numpy);
            return -1;
        }
        if (ufunc == kernel)
            found = op;
        Py_DECREF(ufunc);
    }
    Py_DECREF(numpy);
    return found;
}

/* Whether the items of ``descr`` are plain numbers (booleans, integers, floats, complex) that a copy of their
 * bytes copies: NumPy's element read of them is a 0-d array with those bytes. */
static inline int
plain_items(PyArray_Descr *descr)
{
    int t = descr->type_num;
    return (t >= NPY_BOOL && t <= NPY_CLONGDOUBLE) || t == NPY_HALF;
}

/* A new 0-d array of ``descr`` (borrowed) holding a copy of the item at ``data``. */
static PyObject *
item_array(PyArray_Descr *descr, const void *data)
{
    Py_INCREF(descr);  /* (PyArray_NewFromDescr steals it) */
    PyObject *out = PyArray_NewFromDescr(&PyArray_Type, descr, 0, NULL, NULL, NULL, 0, NULL);
    if (out != NULL)
        memcpy(PyArray_DATA((PyArrayObject *)out), data, (size_t)PyDataType_ELSIZE(descr));
    return out;
}

/* Spare 0-d blocks: the 0-d arrays this module made lately.  A loop over elements makes and drops one per
 * operation; one whose only reference is this ring is free (no DArray, view or buffer holds it), so the next
 * 0-d result of its dtype is written into it instead of allocating an array: NumPy's allocation is most of the
 * cost of an element-sized operation. */
#define SPARES 8
static PyObject *Spares[SPARES];
static int NextSpare = 0;

/* A 0-d array of ``descr`` (borrowed) holding a copy of the item at ``data``: a free spare, or a new array. */
static PyObject *
zero_d_block(PyArray_Descr *descr, const void *data)
{
    for (int i = 0; i < SPARES; i++) {
        PyArrayObject *spare = (PyArrayObject *)Spares[i];
        if (spare != NULL && Py_REFCNT(spare) == 1 && PyArray_DESCR(spare) == descr && PyArray_NDIM(spare) == 0
                && PyArray_ISWRITEABLE(spare)) {
            memcpy(PyArray_DATA(spare), data, (size_t)PyDataType_ELSIZE(descr));
            return Py_NewRef(spare);
        }
    }
    PyObject *out = item_array(descr, data);
    if (out != NULL) {
        Py_XSETREF(Spares[NextSpare], Py_NewRef(out));
        NextSpare = (NextSpare + 1) % SPARES;
    }
    return out;
}

/* The address of the item that ``key`` (an int, or a tuple of one int per axis) names in ``block``; NULL with no
 * error set where the key is anything else or out of bounds (the general path decides and raises). */
static const char *
item_address(PyArrayObject *block, PyObject *key)
{
    int nd = PyArray_NDIM(block);
    PyObject *const *items = &key;
    Py_ssize_t count = 1;
    if (PyTuple_CheckExact(key)) {
        items = &PyTuple_GET_ITEM(key, 0);
        count = PyTuple_GET_SIZE(key);
    }
    if (count != nd || nd == 0)
        return NULL;
    const char *address = PyArray_BYTES(block);
    for (int axis = 0; axis < nd; axis++) {
        if (!PyLong_CheckExact(items[axis]))
            return NULL;
        Py_ssize_t i = PyLong_AsSsize_t(items[axis]), n = PyArray_DIM(block, axis);
        if (i == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        if (i < 0)
            i += n;
        if (i < 0 || i >= n)
            return NULL;
        address += i * PyArray_STRIDE(block, axis);
    }
    return address;
}

/* A float64 or float32 0-d NumPy block's item, widened; its type number in ``type``. */
static inline int
float_item(PyObject *block, int *type, double *value)
{
    if (Py_TYPE(block) != &PyArray_Type)
        return 0;
    PyArrayObject *a = (PyArrayObject *)block;
    *type = PyArray_TYPE(a);
    if (PyArray_NDIM(a) != 0 || !PyArray_ISNOTSWAPPED(a) || (*type != NPY_DOUBLE && *type != NPY_FLOAT))
        return 0;
    const char *data = PyArray_BYTES(a);
    if (*type == NPY_DOUBLE) {
        double d;
        memcpy(&d, data, sizeof d);
        *value = d;
    }
    else {
        float f;
        memcpy(&f, data, sizeof f);
        *value = f;
    }
    return 1;
}

/* ``operand`` as the float64 or float32 item NumPy computes with beside a block of ``type``: a 0-d block of the
 * same type, a Python float, or a Python int exactly representable (NumPy's weak Python scalars, NEP 50). */
static inline int
float_operand(PyObject *operand, int type, double *value)
{
    int other;
    if (PyFloat_CheckExact(operand)) {
        *value = PyFloat_AS_DOUBLE(operand);
        return 1;
    }
    if (PyLong_CheckExact(operand)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(operand, &overflow);
        long long limit = type == NPY_DOUBLE ? (1LL << 53) : (1LL << 24);
        if (overflow || (v == -1 && PyErr_Occurred()) || v > limit || v < -limit) {
            PyErr_Clear();
            return 0;
        }
        *value = (double)v;
        return 1;
    }
    return float_item(operand, &other, value) && other == type;
}

/* Whether NumPy would see a floating-point exception in ``x op y = r`` (finite x, y): a division by zero, an
 * overflow or 0/0 give a result that is not finite; an underflow (tiny and inexact) can only come from a product
 * or a quotient whose result is below the smallest normal number (``tiny``). Inexact results are no exception. */
static inline int
exceptional(int op, double x, double y, double r, double tiny)
{
    return !isfinite(r) || ((op == OP_MULTIPLY || op == OP_DIVIDE) && fabs(r) < tiny && x != 0.0 && y != 0.0);
}

/* ``x op y`` in the precision of ``type``: 1 with the result in ``out`` (a number, or 0/1 for a comparison);
 * 0 where NumPy must decide: an operand not finite, or an operation that raises a floating-point exception
 * (NumPy's kernel then reports it as ``numpy.seterr`` says). */
static int
float_operation(int op, int type, double x, double y, double *out)
{
    if (!isfinite(x) || !isfinite(y))
        return 0;
    if (type == NPY_FLOAT) {  /* (a Python float beside float32 is rounded to float32 first, as in NumPy) */
        float a = (float)x, b = (float)y;
        if (!isfinite(b) || (b != (double)y && fabsf(b) < FLT_MIN))
            return 0;  /* (the rounding overflowed or underflowed) */
        x = a;
        y = b;
    }
    switch (op) {
    case OP_LESS: *out = x < y; return 1;
    case OP_LESS_EQUAL: *out = x <= y; return 1;
    case OP_GREATER: *out = x > y; return 1;
    case OP_GREATER_EQUAL: *out = x >= y; return 1;
    case OP_EQUAL: *out = x == y; return 1;
    case OP_NOT_EQUAL: *out = x != y; return 1;
    case OP_NEGATIVE: *out = -x; return 1;
    case OP_POSITIVE: *out = x; return 1;
    case OP_ABSOLUTE: *out = fabs(x); return 1;
    default: break;
    }
    double r;
    if (type == NPY_DOUBLE) {
        r = op == OP_ADD ? x + y : op == OP_SUBTRACT ? x - y : op == OP_MULTIPLY ? x * y : op == OP_DIVIDE ? x / y : NAN;
        if (exceptional(op, x, y, r, DBL_MIN))
            return 0;
    }
    else {
        float a = (float)x, b = (float)y;
        float f = op == OP_ADD ? a + b : op == OP_SUBTRACT ? a - b : op == OP_MULTIPLY ? a * b
                : op == OP_DIVIDE ? a / b : NAN;
        r = f;
        if (exceptional(op, x, y, r, FLT_MIN))
            return 0;
    }
    *out = r;
    return 1;
}

static PyArray_Descr *BoolDescr = NULL;

/* The 0-d block of ``x op y`` where ``block`` (and a block operand) is a float64 or float32 0-d NumPy array;
 * NULL with no error set where NumPy's kernel must compute it. ``operand`` is NULL for a unary op. */
static PyObject *
zero_d_operation(int op, int reflected, PyObject *block, PyObject *operand)
{
    int type;
    double x, y = 0.0, r;
    if (op == OP_NONE || !float_item(block, &type, &x))
        return NULL;
    if (operand != NULL && !float_operand(operand, type, &y))
        return NULL;
    if (reflected) {
        double t = x;
        x = y;
        y = t;
    }
    if (!float_operation(op, type, x, y, &r))
        return NULL;
    if (op >= OP_LESS && op <= OP_NOT_EQUAL) {
        npy_bool b = r != 0.0;
        return zero_d_block(BoolDescr, &b);
    }
    PyArray_Descr *descr = PyArray_DESCR((PyArrayObject *)block);
    if (type == NPY_DOUBLE)
        return zero_d_block(descr, &r);
    float f = (float)r;
    return zero_d_block(descr, &f);
}

/* ------------------------------------------------------------ the lean methods: one type */

enum kind { BINARY, REFLECTED, UNARY, GETITEM, SETITEM, CONVERT };

/* Python scalars on the lean path: none, all, or all but the float 0.5 (``x ** 0.5``: the engine's exact
 * square root, darray._core.elementwise.half_power). */
enum scalars { SCALARS_NONE, SCALARS_ALL, SCALARS_BUT_HALF };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int kind;
    int scalars;          /* which Python int and float operands take the lean path: SCALARS_* */
    int op;               /* the kernel as an OP_* the 0-d path computes itself, or OP_NONE */
    PyObject *kernel;     /* NumPy's ufunc (operators) */
    PyObject *accepted;   /* the block dtypes the kernel accepted so far, or None where NumPy decides */
    PyObject *general;    /* the Python method this one stands in front of */
    PyObject *name;
    PyObject *qualname;
    PyObject *doc;
} Lean;

static PyObject *
call_general(Lean *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    return PyObject_Vectorcall(self->general, args, nargsf, kwnames);
}

/* The kernel on two operands, or NULL with no error set where the general path must decide (a TypeError). */
static PyObject *
kernel_call(Lean *self, PyObject *a, PyObject *b, int zero_d)
{
    PyObject *argv[2] = {a, b};
    PyObject *out = PyObject_Vectorcall(self->kernel, argv, 2, NULL);
    if (out == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError))
            PyErr_Clear();  /* a dtype darray refuses too: the general path raises darray's message */
        return NULL;
    }
    return as_block(out, zero_d);
}

static PyObject *
lean_binary(Lean *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != NULL)
        return call_general(self, args, nargsf, kwnames);
    PyObject *me = args[0], *other = args[1], *layout, *block, *operand;
    int zero_d;
    if (!lean_operand(me, &layout, &block, &zero_d) || !recorder_off())
        goto general;
    if (Py_TYPE(other) == DArrayType) {
        if (self->kind == REFLECTED || SLOT(other, off_layout) != layout)
            goto general;
        operand = SLOT(other, off_block);
        if (operand == NULL || Py_TYPE(operand) != NdarrayType)
            goto general;
    }
    else if (PyLong_CheckExact(other) ? self->scalars != SCALARS_NONE
             : PyFloat_CheckExact(other) && (self->scalars == SCALARS_ALL
                                            || (self->scalars == SCALARS_BUT_HALF && PyFloat_AS_DOUBLE(other) != 0.5)))
        operand = other;
    else
        goto general;
    if (zero_d) {  /* (float64 and float32: every kernel of the 0-d path accepts them) */
        PyObject *out = zero_d_operation(self->op, self->kind == REFLECTED, block, operand);
        if (out != NULL)
            return wrap(out, layout, SLOT(me, off_comm), SLOT(me, off_xp));
        if (PyErr_Occurred())
            return NULL;
    }
    if (self->accepted != Py_None) {
        int ok = dtype_in(block, self->accepted);
        if (ok > 0 && operand != other)
            ok = dtype_in(operand, self->accepted);
        if (ok < 0)
            return NULL;
        if (!ok)
            goto general;
    }
    PyObject *out = self->kind == REFLECTED ? kernel_call(self, operand, block, zero_d) : kernel_call(self, block, operand, zero_d);
    if (out == NULL) {
        if (PyErr_Occurred())
            return NULL;
        goto general;
    }
    return wrap(out, layout, SLOT(me, off_comm), SLOT(me, off_xp));
general:
    if (PyErr_Occurred())
        return NULL;
    return call_general(self, args, nargsf, kwnames);
}

static PyObject *
lean_unary(Lean *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL)
        return call_general(self, args, nargsf, kwnames);
    PyObject *me = args[0], *layout, *block;
    int zero_d;
    if (!lean_operand(me, &layout, &block, &zero_d) || SLOT(me, off_xp) != NumpyXp || !recorder_off())
        goto general;
    PyObject *out = zero_d ? zero_d_operation(self->op, 0, block, NULL) : NULL;
    if (out != NULL)
        return wrap(out, layout, SLOT(me, off_comm), SLOT(me, off_xp));
    if (PyErr_Occurred())
        return NULL;
    int ok = dtype_in(block, self->accepted);
    if (ok < 0)
        return NULL;
    if (!ok)
        goto general;
    out = PyObject_Vectorcall(self->kernel, &block, 1, NULL);
    if (out == NULL)
        return NULL;
    out = as_block(out, zero_d);
    if (out == NULL)
        goto general;
    return wrap(out, layout, SLOT(me, off_comm), SLOT(me, off_xp));
general:
    if (PyErr_Occurred())
        return NULL;
    return call_general(self, args, nargsf, kwnames);
}

/* Whether ``k`` is a basic index item as NumPy takes it on a whole block: a slice, an int, None, Ellipsis. */
static inline int
basic_item(PyObject *k)
{
    return PySlice_Check(k) || PyLong_CheckExact(k) || k == Py_None || k == Py_Ellipsis;
}

/* Whether ``key`` is a loop's key on a whole block: a slice, an int, or a tuple of basic items. */
static inline int
whole_key(PyObject *key)
{
    if (PySlice_Check(key) || PyLong_CheckExact(key))
        return 1;
    if (!PyTuple_CheckExact(key))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++)
        if (!basic_item(PyTuple_GET_ITEM(key, i)))
            return 0;
    return 1;
}

/* Whether the error set is one NumPy raises for a bad key or value: cleared, and the general path decides. */
static int
numpy_refused(void)
{
    if (PyErr_ExceptionMatches(PyExc_IndexError) || PyErr_ExceptionMatches(PyExc_TypeError)
            || PyErr_ExceptionMatches(PyExc_ValueError)) {
        PyErr_Clear();
        return 1;
    }
    return 0;
}

static PyObject *
lean_getitem(Lean *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != NULL)
        return call_general(self, args, nargsf, kwnames);
    PyObject *me = args[0], *key = args[1], *layout, *block;
    if (!darray_with(me, off_whole, &layout, &block) || SLOT(me, off_link) != Py_None || !whole_key(key))
        return call_general(self, args, nargsf, kwnames);
    PyArray_Descr *descr = PyArray_DESCR((PyArrayObject *)block);
    const char *item = plain_items(descr) ? item_address((PyArrayObject *)block, key) : NULL;
    if (item != NULL) {  /* one element: a 0-d copy of it, on the 0-d layout the general path remembered */
        PyObject *by_shape = whole_by_shape(layout), *found = NULL;
        if (by_shape != NULL)
            found = PyDict_GetItemWithError(by_shape, EmptyTuple);
        if (found != NULL) {
            PyObject *part = zero_d_block(descr, item);
            return part == NULL ? NULL : wrap(part, found, SLOT(me, off_comm), SLOT(me, off_xp));
        }
        if (PyErr_Occurred())
            return NULL;
    }
    PyObject *part = PyObject_GetItem(block, key);
    if (part == NULL) {
        if (numpy_refused())
            return call_general(self, args, nargsf, kwnames);
        return NULL;
    }
    if (Py_TYPE(part) != NdarrayType && PyObject_TypeCheck(part, GenericType)) {  /* every axis taken by an int */
        Py_SETREF(part, PyObject_CallOneArg(NumpyAsarray, part));  /* a 0-d copy, as the general path makes it */
        if (part == NULL)
            return NULL;
    }
    if (Py_TYPE(part) == NdarrayType) {
        /* the result's layout: remembered on the layout by the part's shape (the general path remembers it) */
        PyObject *by_shape = whole_by_shape(layout), *shape = PyObject_GetAttr(part, StrShape), *found = NULL;
        if (shape == NULL) {
            Py_DECREF(part);
            return NULL;
        }
        if (by_shape != NULL)
            found = PyDict_GetItemWithError(by_shape, shape);
        Py_DECREF(shape);
        if (found != NULL)
            return wrap(part, found, SLOT(me, off_comm), SLOT(me, off_xp));
        if (PyErr_Occurred()) {
            Py_DECREF(part);
            return NULL;
        }
    }
    Py_DECREF(part);  /* (a NumPy scalar, or a shape met for the first time) */
    return call_general(self, args, nargsf, kwnames);
}

/* Whether ``block[key] = source`` was done as a copy of one item: ``key`` names one element and ``source`` is a
 * 0-d NumPy array of the very same plain dtype, or a Python float written into float64 (NumPy's casts for
 * anything else are NumPy's to make). */
static int
item_write(PyArrayObject *block, PyObject *key, PyObject *source)
{
    if (!PyArray_ISWRITEABLE(block))
        return 0;
    PyArray_Descr *descr = PyArray_DESCR(block);
    const void *data;
    double number;
    if (PyFloat_CheckExact(source)) {
        if (descr->type_num != NPY_DOUBLE || !PyArray_ISNOTSWAPPED(block))
            return 0;
        number = PyFloat_AS_DOUBLE(source);
        data = &number;
    }
    else if (Py_TYPE(source) == &PyArray_Type && PyArray_NDIM((PyArrayObject *)source) == 0 && plain_items(descr)
             && PyArray_DESCR((PyArrayObject *)source) == descr)
        data = PyArray_DATA((PyArrayObject *)source);
    else
        return 0;
    char *address = (char *)item_address(block, key);
    if (address == NULL)
        return 0;
    memcpy(address, data, (size_t)PyDataType_ELSIZE(descr));
    return 1;
}

static PyObject *
lean_setitem(Lean *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 3 || kwnames != NULL)
        return call_general(self, args, nargsf, kwnames);
    PyObject *me = args[0], *key = args[1], *value = args[2], *layout, *block, *source, *value_layout;
    /* (a linked array -- a computed view, darray._core.views -- writes through to its base: the general path) */
    if (!darray_with(me, off_whole, &layout, &block) || SLOT(me, off_link) != Py_None || !whole_key(key))
        return call_general(self, args, nargsf, kwnames);
    if (PyFloat_CheckExact(value) || PyLong_CheckExact(value) || PyBool_Check(value) || PyComplex_CheckExact(value))
        source = value;
    else if (darray_with(value, off_whole, &value_layout, &source) && SLOT(value, off_comm) == SLOT(me, off_comm))
        ;
    else
        return call_general(self, args, nargsf, kwnames);
    if (item_write((PyArrayObject *)block, key, source))
        Py_RETURN_NONE;
    if (PyObject_SetItem(block, key, source) < 0) {
        if (numpy_refused())  /* (NumPy checks the key and the shapes before it writes) */
            return call_general(self, args, nargsf, kwnames);
        return NULL;
    }
    Py_RETURN_NONE;  /* (a whole layout has no halo to mark stale) */
}

/* ``float(x)``, ``int(x)``, ``bool(x)``, ``complex(x)``, ``operator.index(x)`` (the kernel) of a 0-d NumPy
 * block: the conversion of its NumPy scalar; anything else, and any error, is the general path's (darray's
 * message). */
static PyObject *
lean_convert(Lean *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL || Py_TYPE(args[0]) != DArrayType)
        return call_general(self, args, nargsf, kwnames);
    PyObject *block = SLOT(args[0], off_block);
    if (block == NULL || Py_TYPE(block) != &PyArray_Type || PyArray_NDIM((PyArrayObject *)block) != 0)
        return call_general(self, args, nargsf, kwnames);
    PyObject *item = PyArray_ToScalar(PyArray_DATA((PyArrayObject *)block), (PyArrayObject *)block);
    if (item == NULL)
        return NULL;
    PyObject *out = PyObject_CallOneArg(self->kernel, item);  /* (of NumPy's scalar, as the general path) */
    Py_DECREF(item);
    if (out == NULL && numpy_refused())
        return call_general(self, args, nargsf, kwnames);
    return out;
}

static vectorcallfunc const CALLS[] = {
    (vectorcallfunc)lean_binary, (vectorcallfunc)lean_binary, (vectorcallfunc)lean_unary,
    (vectorcallfunc)lean_getitem, (vectorcallfunc)lean_setitem, (vectorcallfunc)lean_convert,
};

static PyObject *
lean_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"kind", "general", "kernel", "accepted", "scalars", NULL};
    int kind, scalars = SCALARS_ALL;
    PyObject *general, *kernel = Py_None, *accepted = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iO|OOi:Lean", names, &kind, &general, &kernel, &accepted,
                                     &scalars))
        return NULL;
    if (kind < BINARY || kind > CONVERT || scalars < SCALARS_NONE || scalars > SCALARS_BUT_HALF
            || !PyCallable_Check(general)) {
        PyErr_SetString(PyExc_ValueError, "Lean: kind must be 0-5, scalars 0-2 and general callable");
        return NULL;
    }
    if ((kind == UNARY && !PyAnySet_Check(accepted)) || (accepted != Py_None && !PyAnySet_Check(accepted))) {
        PyErr_SetString(PyExc_TypeError, "Lean: accepted must be a set of dtypes (or None for a binary kind)");
        return NULL;
    }
    if ((kind <= UNARY || kind == CONVERT) && !PyCallable_Check(kernel)) {
        PyErr_SetString(PyExc_TypeError, "Lean: an operator or a conversion needs its kernel");
        return NULL;
    }
    Lean *self = (Lean *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = CALLS[kind];
    self->kind = kind;
    self->scalars = scalars;
    self->general = Py_NewRef(general);
    self->kernel = Py_NewRef(kernel);
    self->accepted = Py_NewRef(accepted);
    self->op = kind <= UNARY ? op_of(kernel) : OP_NONE;
    if (self->op < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->name = PyObject_GetAttrString(general, "__name__");
    self->qualname = PyObject_GetAttrString(general, "__qualname__");
    self->doc = PyObject_GetAttrString(general, "__doc__");
    if (self->name == NULL || self->qualname == NULL || self->doc == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static int
lean_traverse(Lean *self, visitproc visit, void *arg)
{
    Py_VISIT(self->kernel);
    Py_VISIT(self->accepted);
    Py_VISIT(self->general);
    return 0;
}

static int
lean_clear(Lean *self)
{
    Py_CLEAR(self->kernel);
    Py_CLEAR(self->accepted);
    Py_CLEAR(self->general);
    Py_CLEAR(self->name);
    Py_CLEAR(self->qualname);
    Py_CLEAR(self->doc);
    return 0;
}

static void
lean_dealloc(Lean *self)
{
    PyObject_GC_UnTrack(self);
    lean_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* As a method: ``x.__add__`` binds like a Python function does. */
static PyObject *
lean_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyObject *
lean_repr(Lean *self)
{
    return PyUnicode_FromFormat("<darray lean method %U>", self->qualname);
}

static PyMemberDef lean_members[] = {
    {"__name__", T_OBJECT, offsetof(Lean, name), READONLY, NULL},
    {"__qualname__", T_OBJECT, offsetof(Lean, qualname), READONLY, NULL},
    {"__doc__", T_OBJECT, offsetof(Lean, doc), READONLY, NULL},
    {"__wrapped__", T_OBJECT, offsetof(Lean, general), READONLY, NULL},
    {"general", T_OBJECT, offsetof(Lean, general), READONLY, "the Python method behind the lean path"},
    {NULL},
};

static PyTypeObject LeanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "darray._core._lean.Lean",
    .tp_doc = "Lean(kind, general, kernel=None, accepted=None, scalars=SCALARS_ALL): a DArray method's lean path "
              "in C, "
              "in front of the Python method ``general``.",
    .tp_basicsize = sizeof(Lean),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(Lean, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = lean_new,
    .tp_traverse = (traverseproc)lean_traverse,
    .tp_clear = (inquiry)lean_clear,
    .tp_dealloc = (destructor)lean_dealloc,
    .tp_descr_get = lean_get,
    .tp_repr = (reprfunc)lean_repr,
    .tp_members = lean_members,
};

/* ------------------------------------------------------------ the module */

static PyMethodDef module_methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(DArray, Layout, Derived, ndarray, generic, asarray, recorder_dict, numpy_namespace): where the slots "
     "are; once, at import."},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "darray._core._lean",
    .m_doc = "The lean paths of DArray's operators and indexing, compiled (see darray._core.operators).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__lean(void)
{
    import_array();  /* (NumPy's C API; an ImportError here leaves darray on the Python paths) */
    if (PyType_Ready(&LeanType) < 0)
        return NULL;
    EmptyTuple = PyTuple_New(0);
    BoolDescr = PyArray_DescrFromType(NPY_BOOL);
    if (EmptyTuple == NULL || BoolDescr == NULL)
        return NULL;
    StrActive = PyUnicode_InternFromString("active");
    StrShape = PyUnicode_InternFromString("shape");
    StrDtype = PyUnicode_InternFromString("dtype");
    if (StrActive == NULL || StrShape == NULL || StrDtype == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Lean", (PyObject *)&LeanType) < 0
            || PyModule_AddIntConstant(m, "BINARY", BINARY) < 0 || PyModule_AddIntConstant(m, "REFLECTED", REFLECTED) < 0
            || PyModule_AddIntConstant(m, "UNARY", UNARY) < 0 || PyModule_AddIntConstant(m, "GETITEM", GETITEM) < 0
            || PyModule_AddIntConstant(m, "SETITEM", SETITEM) < 0
            || PyModule_AddIntConstant(m, "CONVERT", CONVERT) < 0
            || PyModule_AddIntConstant(m, "SCALARS_NONE", SCALARS_NONE) < 0
            || PyModule_AddIntConstant(m, "SCALARS_ALL", SCALARS_ALL) < 0
            || PyModule_AddIntConstant(m, "SCALARS_BUT_HALF", SCALARS_BUT_HALF) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
