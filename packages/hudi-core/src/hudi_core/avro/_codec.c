/* Avro binary records <-> columns, compiled: the log blocks' records of flat schemas.
 *
 * encoder.py and flat_decoder.py hold the numpy versions (every schema); the tests hold both to
 * the same bytes and the same columns. Python prepares the columns (types, casts, nulls refused
 * where the schema has no null) and calls these with plain buffers; the GIL is released while
 * records are written or read.
 *
 * A column is a tuple (kind, null_branch, value_branch, valid, a, b):
 *   kind          LONG (int and long: zig-zag varints), FLOAT, DOUBLE, BOOLEAN, BYTES (string
 *                 and bytes: varint length, then the bytes), RAW (encode only: each row's bytes,
 *                 already Avro, copied as they are), RECORD (a nested record, whose fields are
 *                 the columns after it; a holds one int64, how many columns those are, its
 *                 fields' fields included. Where the record is null its fields' columns are not
 *                 written, and decoded as a null where they are unions, a zero or empty value
 *                 where they are not)
 *   null_branch,  the union branch indexes of null and of the value (a nullable field is
 *   value_branch  ["null", T] or [T, "null"]); value_branch -1: the field is not a union
 *   valid         encode: one uint8 per row (0 = null), or None when no row is null;
 *                 decode: the output validity bitmap (Arrow's, LSB first, zeroed), or None
 *   a, b          encode: LONG int64 values, FLOAT float32, DOUBLE float64, BOOLEAN one uint8 per
 *                 row; BYTES and RAW int64 offsets (n + 1) into the bytes b.
 *                 decode: LONG int64 (INT int32) values, FLOAT/DOUBLE values, BOOLEAN a zeroed
 *                 bitmap; BYTES int32 offsets (n + 1) and b, room for the column's bytes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { LONG = 1, INT = 2, FLOAT = 3, DOUBLE = 4, BOOLEAN = 5, BYTES = 6, RAW = 7, RECORD = 8 };
#define MAX_VARINT 10

typedef struct {
    int kind, null_branch, value_branch;
    int has_valid, has_b;
    Py_buffer valid, a, b;
    int64_t used, nulls, room; /* decode: bytes written to b, null rows, b's usable bytes */
} column_t;

typedef struct {
    column_t *cols;
    Py_ssize_t count;
} columns_t;

static void release(columns_t *c) {
    for (Py_ssize_t j = 0; j < c->count; j++) {
        column_t *col = &c->cols[j];
        if (col->has_valid) PyBuffer_Release(&col->valid);
        if (col->has_b) PyBuffer_Release(&col->b);
        PyBuffer_Release(&col->a);
    }
    PyMem_Free(c->cols);
    c->cols = NULL;
    c->count = 0;
}

static int buffer_of(PyObject *obj, Py_buffer *view, int writable, int *present) {
    *present = 0;
    if (obj == Py_None) return 0;
    if (PyObject_GetBuffer(obj, view, writable ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0) return -1;
    *present = 1;
    return 0;
}

/* The column tuples, their buffers held (writable ones for decoding) until release(). */
static int parse_columns(PyObject *seq, int writable, columns_t *out) {
    out->cols = NULL;
    out->count = 0;
    PyObject *fast = PySequence_Fast(seq, "columns must be a sequence of tuples");
    if (!fast) return -1;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
    out->cols = PyMem_Calloc(count ? (size_t)count : 1, sizeof(column_t));
    if (!out->cols) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t j = 0; j < count; j++) {
        column_t *col = &out->cols[j];
        PyObject *valid, *a, *b;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, j), "iiiOOO", &col->kind, &col->null_branch,
                              &col->value_branch, &valid, &a, &b))
            goto fail;
        int has_a = 0;
        if (buffer_of(valid, &col->valid, writable, &col->has_valid) < 0 ||
            buffer_of(a, &col->a, writable && col->kind != RAW, &has_a) < 0)
            goto fail;
        out->count = j + 1; /* from here release() owns this column's buffers */
        if (!has_a) {
            PyErr_SetString(PyExc_TypeError, "a column needs its values buffer");
            goto fail;
        }
        if (buffer_of(b, &col->b, writable, &col->has_b) < 0) goto fail;
        if (col->kind < LONG || col->kind > RECORD || col->null_branch < 0 || col->null_branch > 63 ||
            col->value_branch < -1 || col->value_branch > 63) {
            PyErr_SetString(PyExc_ValueError, "unknown column kind or union branch");
            goto fail;
        }
        if ((col->kind == BYTES || col->kind == RAW) && !col->has_b) {
            PyErr_SetString(PyExc_TypeError, "a bytes column needs its data buffer");
            goto fail;
        }
    }
    Py_DECREF(fast);
    return 0;
fail:
    Py_DECREF(fast);
    release(out);
    return -1;
}

/* RECORD: how many columns its fields take. */
static inline int64_t record_span(const column_t *col) { return ((const int64_t *)col->a.buf)[0]; }

/* ---------------------------------------------------------------------------------------------
 * encoding */

static inline uint8_t *put_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

/* Checks every column's buffers against n rows; the most bytes its rows can take. */
static int64_t encoded_bound(columns_t *c, int64_t n) {
    int64_t bound = 0;
    for (Py_ssize_t j = 0; j < c->count; j++) {
        column_t *col = &c->cols[j];
        int64_t width[] = {0, 8, 8, 4, 8, 1, 8, 8};
        if (col->has_valid && col->valid.len != n) goto sizes;
        if (col->kind == RECORD) {
            if (col->a.len < 8 || record_span(col) < 0 || record_span(col) >= c->count - j) goto sizes;
            bound += (col->value_branch >= 0) * n;
            continue;
        }
        if (col->kind == INT || col->a.len / width[col->kind] < n + (col->kind >= BYTES)) goto sizes;
        int64_t per_row = (col->value_branch >= 0) + (col->kind == LONG ? MAX_VARINT : width[col->kind]);
        if (col->kind == BYTES || col->kind == RAW) {
            const int64_t *o = (const int64_t *)col->a.buf;
            for (int64_t i = 0; i < n; i++)
                if (o[i] < 0 || o[i + 1] < o[i] || o[i + 1] > col->b.len) {
                    PyErr_SetString(PyExc_ValueError, "offsets do not index the column's bytes");
                    return -1;
                }
            per_row = (col->value_branch >= 0) + (col->kind == BYTES ? MAX_VARINT : 0);
            bound += n ? o[n] - o[0] : 0;
        }
        bound += per_row * n;
    }
    return bound;
sizes:
    PyErr_SetString(PyExc_ValueError, "a column's buffers do not hold n rows of its kind");
    return -1;
}

static uint8_t *encode_value(const column_t *col, int64_t i, uint8_t *p) {
    switch (col->kind) {
    case LONG:
        return put_varint(p, zigzag(((const int64_t *)col->a.buf)[i]));
    case FLOAT:
        memcpy(p, (const float *)col->a.buf + i, 4);
        return p + 4;
    case DOUBLE:
        memcpy(p, (const double *)col->a.buf + i, 8);
        return p + 8;
    case BOOLEAN:
        *p = ((const uint8_t *)col->a.buf)[i] != 0;
        return p + 1;
    default: { /* BYTES, RAW */
        const int64_t *o = (const int64_t *)col->a.buf;
        int64_t len = o[i + 1] - o[i];
        if (col->kind == BYTES) p = put_varint(p, zigzag(len));
        memcpy(p, (const uint8_t *)col->b.buf + o[i], (size_t)len);
        return p + len;
    }
    }
}

/* Every record, each after a 4-byte big-endian length when ``prefixed``; record i's start
 * (after its prefix) into starts[i] when given. The end of what was written. */
static uint8_t *encode_rows(columns_t *c, int64_t n, int prefixed, uint8_t *p, int64_t *starts) {
    const uint8_t *base = p;
    for (int64_t i = 0; i < n; i++) {
        uint8_t *record = p + (prefixed ? 4 : 0);
        if (starts) starts[i] = record - base;
        p = record;
        for (Py_ssize_t j = 0; j < c->count; j++) {
            const column_t *col = &c->cols[j];
            int valid = !col->has_valid || ((const uint8_t *)col->valid.buf)[i];
            if (col->value_branch >= 0) *p++ = (uint8_t)(2 * (valid ? col->value_branch : col->null_branch));
            if (col->kind == RECORD) {
                if (!valid) j += record_span(col); /* a null record: none of its fields */
            } else if (valid) {
                p = encode_value(col, i, p);
            }
        }
        if (prefixed) {
            uint32_t len = (uint32_t)(p - record);
            record[-4] = (uint8_t)(len >> 24);
            record[-3] = (uint8_t)(len >> 16);
            record[-2] = (uint8_t)(len >> 8);
            record[-1] = (uint8_t)len;
        }
    }
    if (starts) starts[n] = p - base;
    return p;
}

PyDoc_STRVAR(encode_doc,
             "encode(columns, n, header, prefixed, starts=None) -> bytes\n\n"
             "``header`` then the Avro binary of n records of ``columns`` (tuples, see the module "
             "source), each after its 4-byte big-endian length when ``prefixed`` (a log block's "
             "layout). ``starts``: a writable int64 buffer of n + 1, each record's offset after the "
             "header (the last: the end).");

static PyObject *encode(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *seq, *starts_obj = Py_None;
    long long n;
    Py_buffer header, starts = {0};
    int prefixed, has_starts = 0;
    if (!PyArg_ParseTuple(args, "OLy*p|O", &seq, &n, &header, &prefixed, &starts_obj)) return NULL;
    PyObject *out = NULL;
    columns_t c = {0};
    if (n < 0 || parse_columns(seq, 0, &c) < 0) {
        if (n < 0) PyErr_SetString(PyExc_ValueError, "n must not be negative");
        goto done;
    }
    if (buffer_of(starts_obj, &starts, 1, &has_starts) < 0) goto done;
    if (has_starts && starts.len != (n + 1) * 8) {
        PyErr_SetString(PyExc_ValueError, "starts must hold n + 1 int64 values");
        goto done;
    }
    int64_t bound = encoded_bound(&c, n);
    if (bound < 0) goto done;
    bound += header.len + (prefixed ? 4 * n : 0);
    out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)bound);
    if (!out) goto done;
    uint8_t *buf = (uint8_t *)PyBytes_AS_STRING(out);
    uint8_t *end;
    memcpy(buf, header.buf, (size_t)header.len);
    Py_BEGIN_ALLOW_THREADS
    end = encode_rows(&c, n, prefixed, buf + header.len, has_starts ? (int64_t *)starts.buf : NULL);
    Py_END_ALLOW_THREADS
    if (_PyBytes_Resize(&out, (Py_ssize_t)(end - buf)) < 0) out = NULL;
done:
    release(&c);
    PyBuffer_Release(&header);
    if (has_starts) PyBuffer_Release(&starts);
    return out;
}

/* ---------------------------------------------------------------------------------------------
 * decoding */

/* A zig-zag varint at *pp before ``end``; 0, or -1 when it runs past ``end`` or 10 bytes. */
static inline int get_varint(const uint8_t **pp, const uint8_t *end, int64_t *out) {
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (int shift = 0; shift < 7 * MAX_VARINT; shift += 7) {
        if (p >= end) return -1;
        uint8_t byte = *p++;
        v |= (uint64_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80)) {
            *pp = p;
            *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            return 0;
        }
    }
    return -1;
}

static inline void set_bit(Py_buffer *bits, int64_t i) { ((uint8_t *)bits->buf)[i >> 3] |= (uint8_t)(1u << (i & 7)); }

/* One value of ``col`` for row i; NULL (with *why set) when the record is corrupt. */
static const uint8_t *decode_value(column_t *col, int64_t i, const uint8_t *p, const uint8_t *end,
                                   const char **why) {
    int64_t v;
    switch (col->kind) {
    case LONG:
    case INT:
        if (get_varint(&p, end, &v) < 0) goto varint;
        if (col->kind == LONG) {
            ((int64_t *)col->a.buf)[i] = v;
        } else if (v < INT32_MIN || v > INT32_MAX) {
            *why = "an Avro int is out of the int range";
            return NULL;
        } else {
            ((int32_t *)col->a.buf)[i] = (int32_t)v;
        }
        return p;
    case FLOAT:
    case DOUBLE: {
        int64_t size = col->kind == FLOAT ? 4 : 8;
        if (end - p < size) goto past;
        memcpy((uint8_t *)col->a.buf + i * size, p, (size_t)size);
        return p + size;
    }
    case BOOLEAN:
        if (p >= end) goto past;
        if (*p) set_bit(&col->a, i);
        return p + 1;
    default: { /* BYTES */
        int32_t *o = (int32_t *)col->a.buf;
        if (get_varint(&p, end, &v) < 0) goto varint;
        if (v < 0 || v > end - p || v > col->room - col->used) {
            *why = v < 0 ? "an Avro string or bytes length is negative" : "an Avro string or bytes value runs past its record";
            return NULL;
        }
        memcpy((uint8_t *)col->b.buf + col->used, p, (size_t)v);
        col->used += v;
        o[i + 1] = (int32_t)col->used;
        return p + v;
    }
    }
varint:
    *why = "an Avro varint runs past its record or 10 bytes";
    return NULL;
past:
    *why = "an Avro value runs past its record";
    return NULL;
}

/* Row i of a column without a value: a null where it is a union, else (a field of a null
 * record) a zero or empty value. */
static void decode_null(column_t *col, int64_t i) {
    if (col->value_branch >= 0) col->nulls++;
    if (col->kind == BYTES) ((int32_t *)col->a.buf)[i + 1] = (int32_t)col->used;
    else if (col->kind == LONG || col->kind == DOUBLE) ((int64_t *)col->a.buf)[i] = 0;
    else if (col->kind == INT || col->kind == FLOAT) ((int32_t *)col->a.buf)[i] = 0;
}


/* Every record; -1 with *bad (the record) and *why set at the first corrupt one. */
static int decode_rows(columns_t *c, const uint8_t *data, const int64_t *starts, const int64_t *ends, int64_t n,
                       int64_t *bad, const char **why) {
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *p = data + starts[i], *end = data + ends[i];
        for (Py_ssize_t j = 0; j < c->count && p; j++) {
            column_t *col = &c->cols[j];
            if (col->value_branch >= 0) {
                int64_t branch;
                if (get_varint(&p, end, &branch) < 0) {
                    *why = "an Avro union branch runs past its record";
                    p = NULL;
                } else if (branch == col->value_branch) {
                    set_bit(&col->valid, i);
                    if (col->kind != RECORD) p = decode_value(col, i, p, end, why);
                } else if (branch == col->null_branch) {
                    decode_null(col, i);
                    if (col->kind == RECORD) /* its fields' columns, none of them in the data */
                        for (int64_t k = record_span(col); k > 0; k--) decode_null(&c->cols[++j], i);
                } else {
                    *why = "an Avro union branch is out of range";
                    p = NULL;
                }
            } else if (col->kind != RECORD) {
                p = decode_value(col, i, p, end, why);
            }
        }
        if (p && p != end) {
            *why = "an Avro record's length does not match its decoded fields";
            p = NULL;
        }
        if (!p) {
            *bad = i;
            return -1;
        }
    }
    return 0;
}

/* Checks the output buffers of every column against n rows. */
static int check_outputs(columns_t *c, int64_t n) {
    int64_t bitmap = (n + 7) / 8;
    for (Py_ssize_t j = 0; j < c->count; j++) {
        column_t *col = &c->cols[j];
        int64_t width[] = {0, 8, 4, 4, 8, 0, 4, 0};
        int ok = col->kind != RAW && (col->value_branch < 0 || (col->has_valid && col->valid.len >= bitmap));
        if (col->kind == BOOLEAN) ok = ok && col->a.len >= bitmap;
        else if (col->kind == RECORD) ok = ok && col->a.len >= 8 && record_span(col) >= 0 && record_span(col) < c->count - j;
        else if (ok) ok = col->a.len / width[col->kind] >= n + (col->kind == BYTES);
        if (!ok) {
            PyErr_SetString(PyExc_ValueError, "a column's output buffers do not hold n rows of its kind");
            return -1;
        }
        if (col->kind == BYTES) ((int32_t *)col->a.buf)[0] = 0;
        col->room = col->has_b && col->b.len < INT32_MAX ? col->b.len : INT32_MAX; /* int32 offsets */
    }
    return 0;
}

PyDoc_STRVAR(decode_doc,
             "decode(columns, data, starts, ends) -> list[tuple[int, int]]\n\n"
             "Decode the Avro records data[starts[i]:ends[i]] (int64 positions) into the output "
             "buffers of ``columns`` (tuples, see the module source), field after field; each "
             "column's (null rows, bytes written to b). A corrupt record raises ValueError "
             "naming it.");

static PyObject *decode(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *seq;
    Py_buffer data, starts, ends;
    if (!PyArg_ParseTuple(args, "Oy*y*y*", &seq, &data, &starts, &ends)) return NULL;
    PyObject *result = NULL;
    columns_t c = {0};
    int64_t n = starts.len / 8;
    if (parse_columns(seq, 1, &c) < 0) goto done;
    if (starts.len != ends.len || starts.len % 8) {
        PyErr_SetString(PyExc_ValueError, "starts and ends must be int64 positions, one pair per record");
        goto done;
    }
    const int64_t *s = (const int64_t *)starts.buf, *e = (const int64_t *)ends.buf;
    for (int64_t i = 0; i < n; i++)
        if (s[i] < 0 || e[i] < s[i] || e[i] > data.len) {
            PyErr_Format(PyExc_ValueError, "Avro record %lld lies outside its block", (long long)i);
            goto done;
        }
    if (check_outputs(&c, n) < 0) goto done;
    int64_t bad = -1;
    const char *why = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = decode_rows(&c, (const uint8_t *)data.buf, s, e, n, &bad, &why);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        PyErr_Format(PyExc_ValueError, "%s (record %lld)", why, (long long)bad);
        goto done;
    }
    result = PyList_New(c.count);
    for (Py_ssize_t j = 0; result && j < c.count; j++) {
        PyObject *item = Py_BuildValue("(LL)", (long long)c.cols[j].nulls, (long long)c.cols[j].used);
        if (!item) Py_CLEAR(result);
        else PyList_SET_ITEM(result, j, item);
    }
done:
    release(&c);
    PyBuffer_Release(&data);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&ends);
    return result;
}

PyDoc_STRVAR(bounds_doc,
             "bounds(content, pos, starts, ends)\n\n"
             "Follow a log block's chain of records from ``pos``, each a 4-byte big-endian length "
             "and that many bytes: record i's (start, end) into the writable int64 buffers "
             "``starts`` and ``ends`` (one per record). A negative length or a record past the "
             "content raises ValueError.");

static PyObject *bounds(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer content, starts, ends;
    long long pos;
    if (!PyArg_ParseTuple(args, "y*Lw*w*", &content, &pos, &starts, &ends)) return NULL;
    PyObject *result = NULL;
    int64_t n = starts.len / 8, bad = -1, at = pos, length = 0;
    if (starts.len != ends.len || starts.len % 8 || pos < 0) {
        PyErr_SetString(PyExc_ValueError, "starts and ends must be int64 buffers of one size, pos not negative");
        goto done;
    }
    const uint8_t *data = (const uint8_t *)content.buf;
    int64_t *s = (int64_t *)starts.buf, *e = (int64_t *)ends.buf, size = content.len;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = 0; i < n; i++) {
        if (size - at < 4) {
            bad = i;
            break;
        }
        const uint8_t *p = data + at;
        length = (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
        if (length < 0 || length > size - at - 4) {
            bad = i;
            break;
        }
        s[i] = at + 4;
        at = e[i] = at + 4 + length;
    }
    Py_END_ALLOW_THREADS
    if (bad < 0) result = Py_NewRef(Py_None);
    else if (size - at < 4) PyErr_Format(PyExc_ValueError, "Avro data block content is truncated at record %lld", (long long)bad);
    else if (length < 0) PyErr_Format(PyExc_ValueError, "Avro record length %lld at byte %lld is negative", (long long)length, (long long)at);
    else PyErr_Format(PyExc_ValueError, "Avro record runs past the block of %lld bytes", (long long)size);
done:
    PyBuffer_Release(&content);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&ends);
    return result;
}

static PyMethodDef methods[] = {
    {"encode", encode, METH_VARARGS, encode_doc},
    {"decode", decode, METH_VARARGS, decode_doc},
    {"bounds", bounds, METH_VARARGS, bounds_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_codec", "Avro binary records <-> columns of flat schemas, compiled.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__codec(void) { return PyModule_Create(&module); }
