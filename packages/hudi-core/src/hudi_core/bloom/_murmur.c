/* Hudi's bloom filter hashing (spec 6.3) compiled: the bit positions of many record keys.
 *
 * murmur.py holds the reference (numpy) version and the tests hold both to the same answers.
 * A key's positions are numHashes chained MurmurHash2 rounds (Hudi's Hadoop port: seed = the
 * previous round's hash, tail bytes signed and taken from the end), each position
 * abs(h % bitSize) in Java's int arithmetic. Runs of GROUP keys of one byte length are hashed
 * together, one key per vector lane, so their rounds interleave instead of waiting on one key's
 * chain of multiplications; other keys one at a time. The GIL is released while hashing.
 *
 * Keys come as an Arrow string (or binary) array's buffers: ``offsets`` (int32, n + 1) and
 * ``data`` (the bytes the offsets index).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../_strings.h"

#define M 0x5bd1e995u
#define LANES 8
#define VECTORS 4
#define GROUP (LANES * VECTORS)
_Static_assert(VECTORS == 4, "group_keys keeps four vectors of hashes");
/* keys longer than this many 4-byte blocks are hashed one at a time */
#define MAX_BLOCKS 64

static inline uint32_t mix_block(const uint8_t *p) {
    uint32_t k;
    memcpy(&k, p, 4); /* little-endian: the top byte's sign extension shifts out in Java */
    k *= M;
    k ^= k >> 24;
    k *= M;
    return k;
}

/* The tail value: Java's signed bytes, indexed from the key's end (spec 6.3). */
static inline uint32_t tail_of(const uint8_t *key, int64_t len, int left) {
    const int8_t *s = (const int8_t *)(key + len - left);
    int32_t t = s[left - 1];
    if (left >= 2) t ^= (int32_t)s[left - 2] * 256;
    if (left >= 3) t ^= (int32_t)s[left - 3] * 65536;
    return (uint32_t)t;
}

static inline uint32_t finish(uint32_t h) {
    h ^= h >> 13;
    h *= M;
    h ^= h >> 15;
    return h;
}

/* abs(h % d) with h a Java int: the magnitude of a truncating remainder is |h| mod d, taken
 * with a multiplication by the precomputed c = 2^64 / d + 1 instead of a division (Lemire,
 * Kaser, Kurz, "Faster remainder by direct computation", exact for 32-bit operands). */
static inline uint32_t position(uint32_t h, uint32_t d, uint64_t c) {
    uint32_t sign = (uint32_t)((int32_t)h >> 31);
    uint32_t a = (h ^ sign) - sign; /* |h|, |INT_MIN| = 2^31 fits */
    uint64_t low = c * a;
    return (uint32_t)(((__uint128_t)low * d) >> 64);
}

/* What a position does: sets its bit (bit row_base[i] + position of a packed, LSB-first bit
 * vector: the serialised layout), tests it (found[i] stays 1 while every bit is set), or is
 * stored hash-major (out[r * n + i]). A packed vector of Hudi's default size (2.6M bits) fits
 * in the L2 cache, where one byte per bit did not. */
enum { SET, TEST, STORE };
typedef struct {
    int what;
    uint8_t *bits;
    const int64_t *row_base; /* SET: NULL puts every key in row 0 */
    uint8_t *found;
    uint32_t *out;
    int64_t n;
} sink_t;

static inline void emit(const sink_t *s, int64_t i, int r, uint32_t pos) {
    if (s->what == SET) {
        uint64_t b = (uint64_t)(s->row_base ? s->row_base[i] : 0) + pos;
        s->bits[b >> 3] |= (uint8_t)(1u << (b & 7));
    } else if (s->what == TEST) {
        s->found[i] &= (uint8_t)((s->bits[pos >> 3] >> (pos & 7)) & 1);
    } else {
        s->out[(int64_t)r * s->n + i] = pos;
    }
}

static void one_key(const uint8_t *key, int64_t len, int64_t i, int rounds, uint32_t d, uint64_t c,
                    const sink_t *s) {
    int64_t nblocks = len / 4;
    int left = (int)(len - nblocks * 4);
    uint32_t tail = left ? tail_of(key, len, left) : 0;
    uint32_t h = 0;
    for (int r = 0; r < rounds; r++) {
        h ^= (uint32_t)len;
        for (int64_t j = 0; j < nblocks; j++) {
            h *= M;
            h ^= mix_block(key + 4 * j);
        }
        if (left) {
            h ^= tail;
            h *= M;
        }
        h = finish(h);
        emit(s, i, r, position(h, d, c));
    }
}

/* GROUP keys of one length: the blocks mixed once, then every round over all of them, as
 * GROUP / LANES independent vectors of LANES keys (GCC's vector extensions; an AVX2 build
 * beside the baseline one, chosen at load): four chains of multiplications in flight hide
 * each multiplication's latency. */
typedef uint32_t lanes_t __attribute__((vector_size(4 * LANES)));

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

CLONES static void group_keys(const uint8_t *data, const int32_t *offsets, int64_t first, int64_t len,
                              int rounds, uint32_t d, uint64_t c, const sink_t *s) {
    int64_t nblocks = len / 4;
    int left = (int)(len - nblocks * 4);
    lanes_t k[MAX_BLOCKS][VECTORS];
    lanes_t tail[VECTORS] = {{0}};
    for (int v = 0; v < VECTORS; v++) {
        for (int l = 0; l < LANES; l++) {
            const uint8_t *key = data + offsets[first + v * LANES + l];
            for (int64_t j = 0; j < nblocks; j++) k[j][v][l] = mix_block(key + 4 * j);
            if (left) tail[v][l] = tail_of(key, len, left);
        }
    }
    lanes_t zero = {0};
    const lanes_t m = zero + M;
    const lanes_t length = zero + (uint32_t)len;
    lanes_t h0 = zero, h1 = zero, h2 = zero, h3 = zero;
    for (int r = 0; r < rounds; r++) {
        h0 ^= length, h1 ^= length, h2 ^= length, h3 ^= length;
        for (int64_t j = 0; j < nblocks; j++) {
            h0 = (h0 * m) ^ k[j][0], h1 = (h1 * m) ^ k[j][1];
            h2 = (h2 * m) ^ k[j][2], h3 = (h3 * m) ^ k[j][3];
        }
        if (left) {
            h0 = (h0 ^ tail[0]) * m, h1 = (h1 ^ tail[1]) * m;
            h2 = (h2 ^ tail[2]) * m, h3 = (h3 ^ tail[3]) * m;
        }
        h0 ^= h0 >> 13, h1 ^= h1 >> 13, h2 ^= h2 >> 13, h3 ^= h3 >> 13;
        h0 *= m, h1 *= m, h2 *= m, h3 *= m;
        h0 ^= h0 >> 15, h1 ^= h1 >> 15, h2 ^= h2 >> 15, h3 ^= h3 >> 15;
        for (int l = 0; l < LANES; l++) {
            emit(s, first + l, r, position(h0[l], d, c));
            emit(s, first + LANES + l, r, position(h1[l], d, c));
            emit(s, first + 2 * LANES + l, r, position(h2[l], d, c));
            emit(s, first + 3 * LANES + l, r, position(h3[l], d, c));
        }
    }
}

static void hash_all(const uint8_t *data, const int32_t *offsets, int64_t n, int rounds, uint32_t d,
                     const sink_t *s) {
    uint64_t c = UINT64_MAX / d + 1;
    int64_t i = 0;
    while (i < n) {
        int64_t len = offsets[i + 1] - offsets[i];
        int same = i + GROUP <= n && len / 4 <= MAX_BLOCKS;
        for (int l = 1; same && l < GROUP; l++) same = offsets[i + l + 1] - offsets[i + l] == len;
        if (same) {
            group_keys(data, offsets, i, len, rounds, d, c, s);
            i += GROUP;
        } else {
            one_key(data + offsets[i], len, i, rounds, d, c, s);
            i += 1;
        }
    }
}

static int check_hashing(int rounds, long long bit_size) {
    if (rounds <= 0 || bit_size <= 0 || bit_size > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "num_hashes and bit_size must be positive (bit_size an int32)");
        return -1;
    }
    return 0;
}

/* Hash every key into ``s`` without the GIL; None, the functions' result. */
static PyObject *run(Py_buffer *offsets, Py_buffer *data, int rounds, uint32_t bit_size, sink_t *s) {
    Py_BEGIN_ALLOW_THREADS
    hash_all((const uint8_t *)data->buf, (const int32_t *)offsets->buf, s->n, rounds, bit_size, s);
    Py_END_ALLOW_THREADS
    return Py_NewRef(Py_None);
}

PyDoc_STRVAR(set_bits_doc,
             "set_bits(bits, offsets, data, num_hashes, bit_size, row_base=None)\n\n"
             "Set each key's bits in ``bits``, a writable packed bit vector (LSB first, as Hudi "
             "serialises it): bit ``row_base[i] + position`` for key i (``row_base`` one int64 per "
             "key, a multiple of bit_size), or ``position`` without it.");

static PyObject *set_bits(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bits, offsets, data, rows = {0};
    int rounds;
    long long bit_size;
    PyObject *rows_obj = Py_None;
    if (!PyArg_ParseTuple(args, "w*y*y*iL|O", &bits, &offsets, &data, &rounds, &bit_size, &rows_obj)) return NULL;
    PyObject *result = NULL;
    int have_rows = 0;
    int64_t n;
    int64_t capacity = (int64_t)bits.len * 8;
    if (check_strings(&offsets, &data, &n) < 0 || check_hashing(rounds, bit_size) < 0) goto done;
    if (rows_obj != Py_None) {
        if (PyObject_GetBuffer(rows_obj, &rows, PyBUF_SIMPLE) < 0) goto done;
        have_rows = 1;
        if (rows.len != n * 8) {
            PyErr_SetString(PyExc_ValueError, "row_base must hold one int64 per key");
            goto done;
        }
        const int64_t *rb = (const int64_t *)rows.buf;
        for (int64_t i = 0; i < n; i++) {
            if (rb[i] < 0 || rb[i] > capacity - bit_size) {
                PyErr_SetString(PyExc_ValueError, "row_base points outside bits");
                goto done;
            }
        }
    } else if (bit_size > capacity) {
        PyErr_SetString(PyExc_ValueError, "bits holds fewer than bit_size bits");
        goto done;
    }
    sink_t s = {SET, (uint8_t *)bits.buf, have_rows ? (const int64_t *)rows.buf : NULL, NULL, NULL, n};
    result = run(&offsets, &data, rounds, (uint32_t)bit_size, &s);
done:
    if (have_rows) PyBuffer_Release(&rows);
    PyBuffer_Release(&bits);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    return result;
}

PyDoc_STRVAR(contains_doc,
             "contains(found, bits, offsets, data, num_hashes, bit_size)\n\n"
             "found[i] (a writable uint8 buffer, one per key) = 1 when every bit of key i is set "
             "in ``bits`` (a packed bit vector of bit_size bits), else 0.");

static PyObject *contains(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer found, bits, offsets, data;
    int rounds;
    long long bit_size;
    if (!PyArg_ParseTuple(args, "w*y*y*y*iL", &found, &bits, &offsets, &data, &rounds, &bit_size)) return NULL;
    PyObject *result = NULL;
    int64_t n;
    if (check_strings(&offsets, &data, &n) < 0 || check_hashing(rounds, bit_size) < 0) goto done;
    if (found.len != n || bit_size > (int64_t)bits.len * 8) {
        PyErr_SetString(PyExc_ValueError, "found must hold one byte per key and bits bit_size bits");
        goto done;
    }
    memset(found.buf, 1, (size_t)n);
    sink_t s = {TEST, (uint8_t *)bits.buf, NULL, (uint8_t *)found.buf, NULL, n};
    result = run(&offsets, &data, rounds, (uint32_t)bit_size, &s);
done:
    PyBuffer_Release(&found);
    PyBuffer_Release(&bits);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    return result;
}

PyDoc_STRVAR(positions_doc,
             "positions(out, offsets, data, num_hashes, bit_size)\n\n"
             "Each key's bit positions into ``out`` (a writable uint32 buffer of num_hashes * n), "
             "hash-major: position r of key i at r * n + i.");

static PyObject *positions(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer out, offsets, data;
    int rounds;
    long long bit_size;
    if (!PyArg_ParseTuple(args, "w*y*y*iL", &out, &offsets, &data, &rounds, &bit_size)) return NULL;
    PyObject *result = NULL;
    int64_t n;
    if (check_strings(&offsets, &data, &n) < 0 || check_hashing(rounds, bit_size) < 0) goto done;
    if (out.len != (Py_ssize_t)(n * rounds * 4)) {
        PyErr_SetString(PyExc_ValueError, "out must hold num_hashes * n uint32 values");
        goto done;
    }
    sink_t s = {STORE, NULL, NULL, NULL, (uint32_t *)out.buf, n};
    result = run(&offsets, &data, rounds, (uint32_t)bit_size, &s);
done:
    PyBuffer_Release(&out);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef methods[] = {
    {"set_bits", set_bits, METH_VARARGS, set_bits_doc},
    {"contains", contains, METH_VARARGS, contains_doc},
    {"positions", positions, METH_VARARGS, positions_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_murmur", "Hudi's bloom filter positions (MurmurHash2, spec 6.3), compiled.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__murmur(void) { return PyModule_Create(&module); }
