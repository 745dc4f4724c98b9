/* An Arrow string (or binary) array as the compiled pieces take it: ``offsets`` (n + 1 int32
 * values) and the ``data`` they index. Included by each extension that reads such keys. */
#ifndef HUDI_CORE_STRINGS_H
#define HUDI_CORE_STRINGS_H

#include <Python.h>
#include <stdint.h>

/* The buffers checked, n set: n + 1 non-decreasing offsets within ``data``; -1 with a
 * ValueError set otherwise. */
static inline int check_strings(const Py_buffer *offsets, const Py_buffer *data, int64_t *n) {
    if (offsets->len % 4 != 0 || offsets->len < 4) {
        PyErr_SetString(PyExc_ValueError, "offsets must be n + 1 int32 values");
        return -1;
    }
    *n = offsets->len / 4 - 1;
    const int32_t *o = (const int32_t *)offsets->buf;
    for (int64_t i = 0; i < *n; i++) {
        if (o[i] < 0 || o[i + 1] < o[i] || o[i + 1] > data->len) {
            PyErr_SetString(PyExc_ValueError, "offsets do not index the data buffer");
            return -1;
        }
    }
    return 0;
}

#endif
