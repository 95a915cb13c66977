/* What the package's C parts share (assignor/_topic_partitions.c, assignor/solver/_deal.c,
 * assignor/wire/_compact_arrays.c, assignor/wire/_tp_arrays.c). */
#ifndef ASSIGNOR_BUFFERS_H
#define ASSIGNOR_BUFFERS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* The big-endian INT32 at `b` (the wire's byte order). */
static inline int32_t
int32_at(const unsigned char *b)
{
    return (int32_t)(((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3]);
}

/* A C-contiguous one-dimensional buffer of 64-bit signed integers. */
static inline int
int64_column(PyObject *object, Py_buffer *view, const char *name)
{
    if (PyObject_GetBuffer(object, view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    const char *format = view->format == NULL ? "B" : view->format;
    if (format[0] == '<' || format[0] == '=' || format[0] == '@')
        format++;
    if (view->ndim != 1 || view->itemsize != 8 || !(strcmp(format, "l") == 0 || strcmp(format, "q") == 0)) {
        PyErr_Format(PyExc_TypeError, "%s must be a one-dimensional array of int64", name);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* `count` such columns at once: all acquired, or none (an error set). */
static inline int
int64_columns(int count, PyObject *const *objects, Py_buffer *views, const char *const *names)
{
    for (int i = 0; i < count; i++) {
        if (int64_column(objects[i], &views[i], names[i]) < 0) {
            while (i-- > 0)
                PyBuffer_Release(&views[i]);
            return -1;
        }
    }
    return 0;
}

#endif
