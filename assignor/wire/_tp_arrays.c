/* The classic consumer protocol's ``[Topic STRING, Partitions [INT32]]`` arrays of many messages
 * in C, as columns (`assignor.wire.arrays.read_tp_columns`): a group leader's JoinGroup metadata
 * (owned partitions, KIP-429; sticky user data, KIP-54) and SyncGroup assignments.
 *
 * Why: a classic group of 2,000 members over a million partitions sends a million entries in
 * its metadata and a million in its assignments. The numpy reader (`read_tp_columns_in_rounds`)
 * reads them in rounds of a dozen array passes each, and finds each entry's name by a key in a
 * sorted table; here each entry is a few checks, one look-up in a small hash table of the names
 * met in this call (each name's text made once, through the caller's cache), and its partitions
 * copied: 18 ms for that million against 70 in numpy, and that group's snapshot 1.8x quicker
 * (`bench/fastpaths.py`).
 *
 * The answers are the plain codec's: a message whose array does not read (a negative or too
 * large count or length, bytes past its end, a negative partition, a name that is not UTF-8) is
 * not ok and gives no entries; the caller reads it again with the plain codec, which says what is
 * wrong. Property tests hold this reader and the numpy one to the plain codec, on good bytes and
 * bad. (Where the numpy reader meets a name that is not UTF-8, it leaves every message to be
 * read plainly; here only that name's.)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../_buffers.h"

static inline int16_t
int16_at(const unsigned char *b)
{
    return (int16_t)(((uint16_t)b[0] << 8) | b[1]);
}

/* The names met in one call: open addressing over their bytes, each slot an index into `names`
 * (-1: empty). */
typedef struct {
    const unsigned char **at;  /* each name's bytes (in the buffer read) */
    Py_ssize_t *length;
    uint64_t *hash;
    uint64_t *head;  /* each name's first 8 bytes (`hash_of`) */
    Py_ssize_t *slot;
    Py_ssize_t size, used;  /* slots (a power of two), names */
} Names;

/* The `n` (at most 8) bytes at `raw` as the low bytes of a word, the others zero; `end` is where
 * the buffer ends (a whole word is loaded where it fits, and masked). */
static inline uint64_t
word_of(const unsigned char *raw, Py_ssize_t n, const unsigned char *end)
{
    uint64_t word = 0;
#if PY_LITTLE_ENDIAN
    if (end - raw >= 8) {
        memcpy(&word, raw, 8);
        return n == 8 ? word : word & ((UINT64_C(1) << (8 * n)) - 1);
    }
#endif
    for (Py_ssize_t i = 0; i < n; i++)
        word |= (uint64_t)raw[i] << (8 * i);
    return word;
}

/* A name's hash, and its first (up to) 8 bytes as a word in `*head`: most topic names are told
 * apart by their length and head alone, before any memcmp. */
static inline uint64_t
hash_of(const unsigned char *raw, Py_ssize_t length, const unsigned char *end, uint64_t *head)
{
    *head = word_of(raw, length < 8 ? length : 8, end);
    uint64_t h = (0x9E3779B97F4A7C15u ^ (uint64_t)length) + *head;
    for (Py_ssize_t i = 8; i < length; i += 8) {
        h *= 0xFF51AFD7ED558CCDu;
        h ^= (h >> 32) ^ word_of(raw + i, length - i < 8 ? length - i : 8, end);
    }
    h *= 0xC4CEB9FE1A85EC53u;
    return h ^ (h >> 29);
}

static int
names_grow(Names *names)
{
    Py_ssize_t size = names->size ? 2 * names->size : 64;
    Py_ssize_t *slot = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)size);
    const unsigned char **at = PyMem_Realloc(names->at, sizeof(*at) * (size_t)(size / 2));
    if (at != NULL)
        names->at = at;
    Py_ssize_t *length = PyMem_Realloc(names->length, sizeof(*length) * (size_t)(size / 2));
    if (length != NULL)
        names->length = length;
    uint64_t *hash = PyMem_Realloc(names->hash, sizeof(*hash) * (size_t)(size / 2));
    if (hash != NULL)
        names->hash = hash;
    uint64_t *head = PyMem_Realloc(names->head, sizeof(*head) * (size_t)(size / 2));
    if (head != NULL)
        names->head = head;
    if (slot == NULL || at == NULL || length == NULL || hash == NULL || head == NULL) {
        PyMem_Free(slot);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t s = 0; s < size; s++)
        slot[s] = -1;
    for (Py_ssize_t i = 0; i < names->used; i++) {
        Py_ssize_t s = (Py_ssize_t)(names->hash[i] & (uint64_t)(size - 1));
        while (slot[s] >= 0)
            s = (s + 1) & (size - 1);
        slot[s] = i;
    }
    PyMem_Free(names->slot);
    names->slot = slot;
    names->size = size;
    return 0;
}

static void
names_free(Names *names)
{
    PyMem_Free(names->at);
    PyMem_Free(names->length);
    PyMem_Free(names->hash);
    PyMem_Free(names->head);
    PyMem_Free(names->slot);
}

/* The index of the name of `length` bytes at `raw` among those met (its text appended to `texts`
 * when new: from the dict `known` by its bytes, else `text(bytes)`, kept there); -1 with an error
 * set, -2 when it is not UTF-8 (`text` gives None). */
static Py_ssize_t
name_index(Names *names, PyObject *texts, PyObject *known, PyObject *text, const unsigned char *raw,
           Py_ssize_t length, const unsigned char *end)
{
    uint64_t head, h = hash_of(raw, length, end, &head);
    Py_ssize_t s = (Py_ssize_t)(h & (uint64_t)(names->size - 1));
    for (;; s = (s + 1) & (names->size - 1)) {
        Py_ssize_t i = names->slot[s];
        if (i < 0)
            break;
        if (names->hash[i] == h && names->length[i] == length && names->head[i] == head
                && (length <= 8 || memcmp(names->at[i] + 8, raw + 8, (size_t)(length - 8)) == 0))
            return i;
    }
    PyObject *key = PyBytes_FromStringAndSize((const char *)raw, length);
    if (key == NULL)
        return -1;
    PyObject *found = PyDict_GetItemWithError(known, key);
    if (found != NULL) {
        Py_INCREF(found);
    } else if (PyErr_Occurred()) {
        Py_DECREF(key);
        return -1;
    } else {
        found = PyObject_CallOneArg(text, key);
        if (found == NULL) {
            Py_DECREF(key);
            return -1;
        }
    }
    Py_DECREF(key);
    if (!PyUnicode_CheckExact(found)) {
        Py_DECREF(found);
        return -2;
    }
    int appended = PyList_Append(texts, found);
    Py_DECREF(found);
    if (appended < 0)
        return -1;
    Py_ssize_t i = names->used++;
    names->at[i] = raw;
    names->length[i] = length;
    names->hash[i] = h;
    names->head[i] = head;
    names->slot[s] = i;
    if (2 * names->used >= names->size && names_grow(names) < 0)
        return -1;
    return i;
}

/* A writable buffer of `count` int64 values. */
static PyObject *
int64s(Py_ssize_t count)
{
    return PyByteArray_FromStringAndSize(NULL, 8 * count);
}

/* Where one call writes the entries it reads: the names met, and the columns with the room they
 * have and what is written (`e` entries, `p` partitions). */
typedef struct {
    Names names;
    PyObject *texts, *known, *text;
    const unsigned char *end;  /* the buffer's end */
    int64_t *message, *topic, *count, *parts;
    Py_ssize_t entries, total, e, p;
} Out;

/* Where message `i`'s array at `at` ends when it reads (all of it before `limit`), else -1 (-2
 * with an error set); its entries and partitions added to `*entries` and `*partitions`, and, with
 * `out`, written there (every bound checked again as it is written: the caller's `text` runs
 * Python code between the count and the writing). */
static Py_ssize_t
walk(const unsigned char *data, Py_ssize_t at, Py_ssize_t limit, Py_ssize_t i, Out *out, Py_ssize_t *entries,
     Py_ssize_t *partitions)
{
    if (limit - at < 4)
        return -1;
    int64_t count = int32_at(data + at);
    at += 4;
    if (count < 0 || count > (limit - at) / 6 || (out != NULL && count > out->entries - out->e))
        return -1;  /* (an entry takes 6 bytes at least) */
    Py_ssize_t parts = 0;
    for (int64_t e = 0; e < count; e++) {
        if (limit - at < 2)
            return -1;
        int64_t length = int16_at(data + at);
        if (length < 0 || length > limit - at - 2 - 4)
            return -1;
        Py_ssize_t index = 0;
        if (out != NULL) {
            index = name_index(&out->names, out->texts, out->known, out->text, data + at + 2, (Py_ssize_t)length,
                               out->end);
            if (index < 0)
                return index == -1 ? -2 : -1;  /* (-2 there: not UTF-8, read plainly, which says so) */
        }
        at += 2 + (Py_ssize_t)length;
        int64_t n = int32_at(data + at);
        at += 4;
        if (n < 0 || n > (limit - at) / 4 || (out != NULL && n > out->total - out->p))
            return -1;
        for (int64_t q = 0; q < n; q++)
            if (data[at + 4 * q] & 0x80)
                return -1;  /* a negative partition */
        if (out != NULL) {
            out->message[out->e] = i;
            out->topic[out->e] = index;
            out->count[out->e++] = n;
            for (int64_t q = 0; q < n; q++)
                out->parts[out->p++] = int32_at(data + at + 4 * q);
        }
        at += 4 * (Py_ssize_t)n;
        parts += (Py_ssize_t)n;
    }
    *entries += (Py_ssize_t)count;
    *partitions += parts;
    return at;
}

PyDoc_STRVAR(read_doc,
"read(buffer, position, limit, known, text) -> (ok, end, message, topic, count, partitions, names)\n\n"
"The ``[Topic STRING, Partitions [INT32]]`` array (its INT32 count first) at offset position[i]\n"
"of `buffer` for each message i, which ends at limit[i] (int64 columns). Per message: ok (one\n"
"byte each, 1 or 0) and the offset after its array (int64); per entry of the ok messages, in\n"
"order: its message, its topic (an index into `names`, in order of first appearance; a message\n"
"left to be read plainly may leave one there unused) and its partition count (int64 each); all\n"
"their partitions (int64). Columns are bytearrays; a name's text is found in the dict `known` by\n"
"its bytes, else is `text(bytes)` (None: not UTF-8).");

static PyObject *
read_arrays(PyObject *module, PyObject *args)
{
    PyObject *buffer_object, *columns[2], *known, *text;
    if (!PyArg_ParseTuple(args, "OOOO!O:read", &buffer_object, &columns[0], &columns[1], &PyDict_Type, &known, &text))
        return NULL;
    Py_buffer buffer, views[2];
    if (PyObject_GetBuffer(buffer_object, &buffer, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    static const char *const column_names[2] = {"position", "limit"};
    if (int64_columns(2, columns, views, column_names) < 0) {
        PyBuffer_Release(&buffer);
        return NULL;
    }
    const unsigned char *data = buffer.buf;
    const int64_t *position = views[0].buf, *limit = views[1].buf;
    Py_ssize_t messages = views[0].len / 8;
    PyObject *ok = NULL, *end = NULL, *message = NULL, *topic = NULL, *count = NULL, *partitions = NULL;
    PyObject *result = NULL;
    Out out = {.known = known, .text = text, .end = data + buffer.len};
    if (views[1].len / 8 != messages) {
        PyErr_SetString(PyExc_ValueError, "position and limit must have one value per message");
        goto done;
    }
    /* First the arrays' shapes, to size the columns; then the entries. */
    ok = PyByteArray_FromStringAndSize(NULL, messages);
    end = int64s(messages);
    if (ok == NULL || end == NULL)
        goto done;
    char *is_ok = PyByteArray_AS_STRING(ok);
    int64_t *ends = (int64_t *)PyByteArray_AS_STRING(end);
    Py_ssize_t entries = 0, total = 0;
    for (Py_ssize_t i = 0; i < messages; i++) {
        Py_ssize_t at = (Py_ssize_t)position[i], stop = (Py_ssize_t)limit[i];
        Py_ssize_t after = at < 0 || stop > buffer.len || at > stop ? -1
                           : walk(data, at, stop, i, NULL, &entries, &total);
        is_ok[i] = after >= 0;
        ends[i] = after >= 0 ? after : at;
    }
    message = int64s(entries);
    topic = int64s(entries);
    count = int64s(entries);
    partitions = int64s(total);
    out.texts = PyList_New(0);
    if (message == NULL || topic == NULL || count == NULL || partitions == NULL || out.texts == NULL
            || names_grow(&out.names) < 0)
        goto done;
    out.message = (int64_t *)PyByteArray_AS_STRING(message);
    out.topic = (int64_t *)PyByteArray_AS_STRING(topic);
    out.count = (int64_t *)PyByteArray_AS_STRING(count);
    out.parts = (int64_t *)PyByteArray_AS_STRING(partitions);
    out.entries = entries;
    out.total = total;
    Py_ssize_t counted = 0;  /* (the walk counts again; what it wrote is what counts) */
    for (Py_ssize_t i = 0; i < messages; i++) {
        if (!is_ok[i])
            continue;
        Py_ssize_t at = (Py_ssize_t)position[i], stop = (Py_ssize_t)limit[i], e = out.e, p = out.p;
        Py_ssize_t after = at < 0 || stop > buffer.len || at > stop ? -1
                           : walk(data, at, stop, i, &out, &counted, &counted);
        if (after == -2)
            goto done;
        if (after < 0) {  /* a name not UTF-8 (or bytes that changed meanwhile): read plainly */
            is_ok[i] = 0;
            out.e = e;
            out.p = p;
        }
    }
    /* (fewer entries than sized when a message was left to be read plainly) */
    if (PyByteArray_Resize(message, 8 * out.e) < 0 || PyByteArray_Resize(topic, 8 * out.e) < 0
            || PyByteArray_Resize(count, 8 * out.e) < 0 || PyByteArray_Resize(partitions, 8 * out.p) < 0)
        goto done;
    result = PyTuple_Pack(7, ok, end, message, topic, count, partitions, out.texts);
done:
    names_free(&out.names);
    Py_XDECREF(ok);
    Py_XDECREF(end);
    Py_XDECREF(message);
    Py_XDECREF(topic);
    Py_XDECREF(count);
    Py_XDECREF(partitions);
    Py_XDECREF(out.texts);
    PyBuffer_Release(&views[0]);
    PyBuffer_Release(&views[1]);
    PyBuffer_Release(&buffer);
    return result;
}

PyDoc_STRVAR(name_hash_doc,
"name_hash(raw) -> int\n\n"
"The hash `read` finds a name of these bytes by (its tests make names whose hashes collide).");

static PyObject *
name_hash(PyObject *module, PyObject *args)
{
    Py_buffer raw;
    if (!PyArg_ParseTuple(args, "y*:name_hash", &raw))
        return NULL;
    uint64_t head, h = hash_of(raw.buf, raw.len, (const unsigned char *)raw.buf + raw.len, &head);
    PyBuffer_Release(&raw);
    return PyLong_FromUnsignedLongLong(h);
}

static PyMethodDef methods[] = {
    {"read", read_arrays, METH_VARARGS, read_doc},
    {"name_hash", name_hash, METH_VARARGS, name_hash_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "assignor.wire._tp_arrays",
    "The classic protocol's arrays of topic partitions of many messages read in C (see "
    "assignor.wire.arrays.read_tp_columns).", 0, methods,
};

PyMODINIT_FUNC
PyInit__tp_arrays(void)
{
    return PyModuleDef_Init(&module_def);
}
