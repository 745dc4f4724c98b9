/* Record keys matched by their bytes, compiled: what ``pc.index_in`` and ``pc.dictionary_encode``
 * tell a merge, in one pass over each side.
 *
 * keymatch/__init__.py holds the pyarrow version and the tests hold both to the same answers.
 * Keys come as an Arrow string (or binary) array's buffers without nulls: ``offsets`` (int32,
 * n + 1) and ``data`` (the bytes the offsets index). A hash table of 64-bit slots (the hash's
 * top 32 bits, then the row + 1; 0 is empty) with linear probing, sized to twice the keys, holds
 * the first row of each distinct key; a slot's key bytes are compared only where the top bits
 * agree. A probe waits on memory, not on hashing (1M uuid keys hash in ~7 ms, a table of 250k
 * keys takes 4 MB): so 16 keys' slots are fetched ahead of their probes, and ``index_in`` puts a
 * bit array (8 bits per key of the set) in front of the table, ruling out from a few hundred KB
 * most keys the set does not hold. The GIL is released while hashing and probing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../_strings.h"

#define MUL 0x9E3779B97F4A7C15ull

typedef struct {
    const int32_t *offsets;
    const uint8_t *data;
    int64_t n;
} keys_t;

typedef struct {
    uint64_t *slots;
    uint64_t mask;
    uint64_t *filter; /* index_in: a bit per hash (top bits) of the set, ~8 bits per key */
    uint64_t filter_mask;
} table_t;

static inline uint64_t hash_key(const uint8_t *p, int64_t len) {
    uint64_t h = MUL ^ ((uint64_t)len * 0xff51afd7ed558ccdull);
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * MUL;
        h ^= h >> 29;
    }
    if (len > 0) {
        uint64_t w = 0;
        memcpy(&w, p, (size_t)len);
        h = (h ^ w) * MUL;
        h ^= h >> 29;
    }
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
    return h;
}

static inline int same_key(const keys_t *a, int64_t i, const keys_t *b, int64_t j) {
    int64_t len = a->offsets[i + 1] - a->offsets[i];
    return len == b->offsets[j + 1] - b->offsets[j] &&
           memcmp(a->data + a->offsets[i], b->data + b->offsets[j], (size_t)len) == 0;
}

static inline uint64_t hash_of(const keys_t *keys, int64_t i) {
    return hash_key(keys->data + keys->offsets[i], keys->offsets[i + 1] - keys->offsets[i]);
}

/* The first row of ``keys`` holding key ``i`` of ``of`` (hash ``h``; -1: none); with ``insert``,
 * a key not found is added as row ``i`` (``of`` is then ``keys``). */
static inline int64_t find(table_t *t, const keys_t *keys, const keys_t *of, int64_t i, uint64_t h, int insert) {
    uint64_t tag = h & 0xFFFFFFFF00000000ull;
    for (uint64_t at = h & t->mask;; at = (at + 1) & t->mask) {
        uint64_t slot = t->slots[at];
        if (slot == 0) {
            if (insert) t->slots[at] = tag | (uint64_t)(i + 1);
            return -1;
        }
        int64_t row = (int64_t)(slot & 0xFFFFFFFFull) - 1;
        if ((slot & 0xFFFFFFFF00000000ull) == tag && same_key(keys, row, of, i)) return row;
    }
}

#define AHEAD 16

/* ``find`` for rows [0, n) of ``of``, the hashes of AHEAD rows computed and their slots fetched
 * ahead of the probes (each probe is otherwise a wait on memory); ``out[i]``: the row found, or
 * with ``insert`` the row itself when the key is new. Returns the keys not found. */
static int64_t find_all(table_t *t, const keys_t *keys, const keys_t *of, int64_t *out, int insert) {
    uint64_t hashes[AHEAD];
    int64_t missing = 0;
    for (int64_t start = 0; start < of->n; start += AHEAD) {
        int64_t stop = start + AHEAD < of->n ? start + AHEAD : of->n;
        for (int64_t i = start; i < stop; i++) {
            hashes[i - start] = hash_of(of, i);
            __builtin_prefetch(&t->slots[hashes[i - start] & t->mask]);
        }
        for (int64_t i = start; i < stop; i++) {
            uint64_t h = hashes[i - start], bit = (h >> 32) & t->filter_mask;
            if (t->filter) {
                if (insert) {
                    t->filter[bit >> 6] |= 1ull << (bit & 63);
                } else if (!(t->filter[bit >> 6] & (1ull << (bit & 63)))) {
                    missing++; /* a key the set cannot hold: its slot is not waited for */
                    if (out) out[i] = -1;
                    continue;
                }
            }
            int64_t row = find(t, keys, of, i, h, insert);
            missing += row < 0;
            if (out) out[i] = row < 0 && insert ? i : row;
        }
    }
    return missing;
}

/* Room for ``n`` keys: a power of two of at least 2n slots (a load of at most one half); with
 * ``filtered`` a bit array of 8 bits per key (a power of two, at least 512 bits), which rules out
 * most keys the set does not hold from a few hundred KB where the slots take megabytes. */
static int alloc_table(table_t *t, int64_t n, int filtered) {
    uint64_t size = 16, bits = 512;
    while (size < (uint64_t)n * 2) size <<= 1;
    while (bits < (uint64_t)n * 8) bits <<= 1;
    t->slots = (uint64_t *)PyMem_RawCalloc(size, sizeof(uint64_t));
    t->mask = size - 1;
    t->filter = filtered ? (uint64_t *)PyMem_RawCalloc(bits / 64, sizeof(uint64_t)) : NULL;
    t->filter_mask = bits - 1;
    if (!t->slots || (filtered && !t->filter)) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void free_table(table_t *t) {
    PyMem_RawFree(t->slots);
    PyMem_RawFree(t->filter);
}

/* The key buffers checked (check_strings), fewer than 2^32 - 1 keys. */
static int check_keys(Py_buffer *offsets, Py_buffer *data, keys_t *keys) {
    if (check_strings(offsets, data, &keys->n) < 0) return -1;
    keys->offsets = (const int32_t *)offsets->buf;
    keys->data = (const uint8_t *)data->buf;
    if (keys->n >= 0xFFFFFFFFll) {
        PyErr_SetString(PyExc_ValueError, "too many keys for one table");
        return -1;
    }
    return 0;
}

static int check_out(Py_buffer *out, int64_t n) {
    if (out->len != (Py_ssize_t)(n * 8)) {
        PyErr_SetString(PyExc_ValueError, "out must hold one int64 per key");
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(index_in_doc,
             "index_in(out, offsets, data, set_offsets, set_data)\n\n"
             "For each key, the row of its first equal in the set, or -1, into ``out`` (a writable "
             "int64 buffer of one value per key): ``pc.index_in`` of arrays without nulls.");

static PyObject *index_in(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer out, offsets, data, set_offsets, set_data;
    if (!PyArg_ParseTuple(args, "w*y*y*y*y*", &out, &offsets, &data, &set_offsets, &set_data)) return NULL;
    PyObject *result = NULL;
    keys_t keys, set;
    table_t t = {NULL, 0, NULL, 0};
    if (check_keys(&offsets, &data, &keys) < 0 || check_keys(&set_offsets, &set_data, &set) < 0 ||
        check_out(&out, keys.n) < 0 || alloc_table(&t, set.n, 1) < 0)
        goto done;
    int64_t *o = (int64_t *)out.buf;
    Py_BEGIN_ALLOW_THREADS
    find_all(&t, &set, &set, NULL, 1);
    find_all(&t, &set, &keys, o, 0);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    free_table(&t);
    PyBuffer_Release(&out);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    PyBuffer_Release(&set_offsets);
    PyBuffer_Release(&set_data);
    return result;
}

PyDoc_STRVAR(first_rows_doc,
             "first_rows(out, offsets, data) -> int\n\n"
             "For each key, the row of its first occurrence, into ``out`` (a writable int64 buffer "
             "of one value per key); returns the number of distinct keys.");

static PyObject *first_rows(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer out, offsets, data;
    if (!PyArg_ParseTuple(args, "w*y*y*", &out, &offsets, &data)) return NULL;
    PyObject *result = NULL;
    keys_t keys;
    table_t t = {NULL, 0, NULL, 0};
    int64_t distinct = 0;
    if (check_keys(&offsets, &data, &keys) < 0 || check_out(&out, keys.n) < 0 || alloc_table(&t, keys.n, 0) < 0)
        goto done;
    int64_t *o = (int64_t *)out.buf;
    Py_BEGIN_ALLOW_THREADS
    distinct = find_all(&t, &keys, &keys, o, 1);
    Py_END_ALLOW_THREADS
    result = PyLong_FromLongLong((long long)distinct);
done:
    free_table(&t);
    PyBuffer_Release(&out);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef methods[] = {
    {"index_in", index_in, METH_VARARGS, index_in_doc},
    {"first_rows", first_rows, METH_VARARGS, first_rows_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_match", "Record keys matched by their bytes (hash tables), compiled.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__match(void) { return PyModule_Create(&module); }
