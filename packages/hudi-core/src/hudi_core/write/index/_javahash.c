/* Java's String.hashCode() of many strings, compiled: the BUCKET index's hash of record keys.
 *
 * bucket.py holds the reference (numpy for ASCII, Python for the rest) and the tests hold both to
 * the same answers. A Java string is UTF-16: the hash is h = 31 * h + u over its code units u, in
 * 32-bit wrapping arithmetic. Strings come as an Arrow string array's buffers (``offsets``, int32,
 * n + 1, and the UTF-8 ``data`` they index); each is decoded on the way, a code point past U+FFFF
 * counting as its two surrogates. Four ASCII bytes at a time are one step of
 * h = 31^4 h + 31^3 c0 + 31^2 c1 + 31 c2 + c3, so a key's chain of multiplications is a quarter as
 * long, and four ASCII keys of one length (uuids, zero-padded ids) are hashed side by side, so
 * their chains overlap. The GIL is released while hashing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../../_strings.h"

#define P2 (31u * 31u)
#define P3 (31u * 31u * 31u)
#define P4 (31u * 31u * 31u * 31u)

/* The hash of one UTF-8 string; *bad set when it is not valid UTF-8. */
static uint32_t hash_one(const uint8_t *s, int64_t len, int *bad) {
    uint32_t h = 0;
    int64_t i = 0;
    while (i < len) {
        if (i + 4 <= len) {
            uint32_t w;
            memcpy(&w, s + i, 4);
            if ((w & 0x80808080u) == 0) {
                h = h * P4 + s[i] * P3 + s[i + 1] * P2 + s[i + 2] * 31u + s[i + 3];
                i += 4;
                continue;
            }
        }
        uint32_t b = s[i];
        if (b < 0x80) {
            h = h * 31u + b;
            i += 1;
            continue;
        }
        uint32_t cp, need;
        if (b >= 0xC2 && b <= 0xDF) {
            cp = b & 0x1F;
            need = 1;
        } else if (b >= 0xE0 && b <= 0xEF) {
            cp = b & 0x0F;
            need = 2;
        } else if (b >= 0xF0 && b <= 0xF4) {
            cp = b & 0x07;
            need = 3;
        } else {
            *bad = 1;
            return 0;
        }
        if (i + (int64_t)need >= len) {
            *bad = 1;
            return 0;
        }
        for (uint32_t k = 1; k <= need; k++) {
            uint32_t c = s[i + k];
            if ((c & 0xC0) != 0x80) {
                *bad = 1;
                return 0;
            }
            cp = (cp << 6) | (c & 0x3F);
        }
        /* overlong forms, surrogates and code points past U+10FFFF are not UTF-8 */
        if ((need == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (need == 3 && (cp < 0x10000 || cp > 0x10FFFF))) {
            *bad = 1;
            return 0;
        }
        if (cp > 0xFFFF) {
            cp -= 0x10000;
            h = h * 31u + (0xD800u + (cp >> 10));
            h = h * 31u + (0xDC00u + (cp & 0x3FF));
        } else {
            h = h * 31u + cp;
        }
        i += 1 + need;
    }
    return h;
}

enum { OTHER_LENGTHS, HASHED, NOT_ASCII };

/* Four keys from row i of one byte length, all ASCII, hashed side by side into out[i..i+3]
 * (HASHED); else nothing written: OTHER_LENGTHS, or NOT_ASCII (one length, a byte past 0x7F). */
static int hash_four(const uint8_t *d, const int32_t *o, int64_t i, uint32_t *out) {
    int64_t len = o[i + 1] - o[i];
    for (int k = 1; k < 4; k++)
        if (o[i + k + 1] - o[i + k] != len) return OTHER_LENGTHS;
    const uint8_t *s0 = d + o[i], *s1 = d + o[i + 1], *s2 = d + o[i + 2], *s3 = d + o[i + 3];
    uint32_t h0 = 0, h1 = 0, h2 = 0, h3 = 0, high = 0;
    int64_t j = 0;
    for (; j + 4 <= len; j += 4) {
        uint32_t w0, w1, w2, w3;
        memcpy(&w0, s0 + j, 4);
        memcpy(&w1, s1 + j, 4);
        memcpy(&w2, s2 + j, 4);
        memcpy(&w3, s3 + j, 4);
        high |= w0 | w1 | w2 | w3;
        h0 = h0 * P4 + s0[j] * P3 + s0[j + 1] * P2 + s0[j + 2] * 31u + s0[j + 3];
        h1 = h1 * P4 + s1[j] * P3 + s1[j + 1] * P2 + s1[j + 2] * 31u + s1[j + 3];
        h2 = h2 * P4 + s2[j] * P3 + s2[j + 1] * P2 + s2[j + 2] * 31u + s2[j + 3];
        h3 = h3 * P4 + s3[j] * P3 + s3[j + 1] * P2 + s3[j + 2] * 31u + s3[j + 3];
    }
    for (; j < len; j++) {
        high |= (uint32_t)(s0[j] | s1[j] | s2[j] | s3[j]);
        h0 = h0 * 31u + s0[j];
        h1 = h1 * 31u + s1[j];
        h2 = h2 * 31u + s2[j];
        h3 = h3 * 31u + s3[j];
    }
    if (high & 0x80808080u) return NOT_ASCII;
    out[i] = h0;
    out[i + 1] = h1;
    out[i + 2] = h2;
    out[i + 3] = h3;
    return HASHED;
}

PyDoc_STRVAR(hashes_doc,
             "hashes(out, offsets, data) -> int\n\n"
             "Java's String.hashCode() of each string into ``out`` (a writable uint32 buffer, one per "
             "string); the row of the first string that is not valid UTF-8, or -1.");

static PyObject *hashes(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer out, offsets, data;
    if (!PyArg_ParseTuple(args, "w*y*y*", &out, &offsets, &data)) return NULL;
    PyObject *result = NULL;
    int64_t n;
    if (check_strings(&offsets, &data, &n) < 0) goto done;
    if (out.len != n * 4) {
        PyErr_SetString(PyExc_ValueError, "out must hold one uint32 per string");
        goto done;
    }
    const int32_t *o = (const int32_t *)offsets.buf;
    int64_t first_bad = -1;
    Py_BEGIN_ALLOW_THREADS
    const uint8_t *d = (const uint8_t *)data.buf;
    uint32_t *h = (uint32_t *)out.buf;
    int64_t i = 0;
    while (i < n) {
        /* a run of four tried once: keys that are not ASCII are hashed one by one, all four */
        int four = i + 4 <= n ? hash_four(d, o, i, h) : OTHER_LENGTHS;
        if (four == HASHED) {
            i += 4;
            continue;
        }
        for (int64_t end = four == NOT_ASCII ? i + 4 : i + 1; i < end; i++) {
            int bad = 0;
            h[i] = hash_one(d + o[i], o[i + 1] - o[i], &bad);
            if (bad && first_bad < 0) first_bad = i;
        }
    }
    Py_END_ALLOW_THREADS
    result = PyLong_FromLongLong(first_bad);
done:
    PyBuffer_Release(&out);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef methods[] = {
    {"hashes", hashes, METH_VARARGS, hashes_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_javahash", "Java's String.hashCode() of many strings, compiled.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__javahash(void) { return PyModule_Create(&module); }
