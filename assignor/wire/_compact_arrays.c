/* Two flexible (compact) arrays in C, for the compiled response reader
 * (`assignor.wire.compiled`): KIP-848's topic partitions,
 * ``{TopicId UUID, TopicName COMPACT_STRING, Partitions COMPACT_ARRAY(INT32)}``, and arrays of
 * strings (topic names). ConsumerGroupDescribe gives each member's subscribed topic names, its
 * assignment and its target in them.
 *
 * Why: a group of 2,000 members over a million partitions, each subscribed to 500 topics, is a
 * million names and two million topic partitions; here a value is a few checks and its objects,
 * the text of a topic id or name found by its bytes in the caller's dictionaries (a response
 * names each of a few thousand topics many times), where the compiled reader's closures walk
 * each value's fields in Python: that group's snapshot takes about a quarter of the time
 * (3.8x, `bench/fastpaths.py`), names of members subscribed alike found by their whole array
 * (`recent_of`).
 *
 * The values are the plain codec's (`assignor.wire.codec`): anything not read plainly here (a
 * tagged field, a null, a length past the bytes, a varint of more than five bytes, text that is
 * not UTF-8) gives None, and the caller reads the array its own way, which reads it or says why
 * it cannot. Property tests hold the two equal, on good bytes and bad.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../_buffers.h"

/* An unsigned varint of at most five bytes and at most 2**32 - 1, as the compiled reader's
 * `_varint` reads it: its value, or -1 (and `*at` unchanged) when it does not read. */
static int64_t
varint(const unsigned char *data, Py_ssize_t size, Py_ssize_t *at)
{
    uint64_t value = 0;
    Py_ssize_t i = *at;
    for (int shift = 0; shift < 35; shift += 7) {
        if (i >= size)
            return -1;
        unsigned char byte = data[i++];
        value |= (uint64_t)(byte & 0x7F) << shift;
        if (byte < 0x80) {
            if (value > 0xFFFFFFFFu)
                return -1;
            *at = i;
            return (int64_t)value;
        }
    }
    return -1;
}

/* The text of `size` bytes at `raw`, found in `known` by those bytes, or made by `make(bytes)`
 * and kept there: a new reference, NULL with an error set, or NULL without one when `make`
 * gives no str (the caller then reads plainly). */
static PyObject *
text_of(PyObject *known, PyObject *make, const unsigned char *raw, Py_ssize_t size)
{
    PyObject *key = PyBytes_FromStringAndSize((const char *)raw, size);
    if (key == NULL)
        return NULL;
    PyObject *text = PyDict_GetItemWithError(known, key);
    if (text != NULL) {
        Py_INCREF(text);
        Py_DECREF(key);
        return text;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    text = make == NULL ? PyUnicode_DecodeUTF8((const char *)raw, size, "strict")
                        : PyObject_CallOneArg(make, key);
    if (text == NULL || !PyUnicode_CheckExact(text)) {
        Py_DECREF(key);
        Py_XDECREF(text);
        if (PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
            PyErr_Clear();  /* not UTF-8: read plainly, which says so */
        return NULL;
    }
    if (PyDict_SetItem(known, key, text) < 0) {
        Py_DECREF(key);
        Py_DECREF(text);
        return NULL;
    }
    Py_DECREF(key);
    return text;
}

/* A new list of as many (empty) items as the compact array at `*at` has entries, `*at` moved past
 * its count; NULL (an error set only when the list cannot be made) when the offset or the count
 * does not read, when the array is null (not these fields'), or when its entries, of `least`
 * bytes at least, would not fit in the bytes left (checked before anything is allocated). */
static PyObject *
new_array(const unsigned char *data, Py_ssize_t size, Py_ssize_t *at, Py_ssize_t least)
{
    if (*at < 0 || *at > size)
        return NULL;
    int64_t count = varint(data, size, at) - 1;
    if (count < 0 || count > (size - *at) / least)
        return NULL;
    return PyList_New((Py_ssize_t)count);
}

/* A reader's answer, `view` released: (out, end) when it read to `end`; when it gave up (end -1),
 * NULL if an error is set, else None (the caller reads plainly, which says what is wrong). */
static PyObject *
answer(Py_buffer *view, PyObject *out, Py_ssize_t end)
{
    PyBuffer_Release(view);
    if (end >= 0)
        return Py_BuildValue("(Nn)", out, end);
    Py_XDECREF(out);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

/* The smallest entry: a topic id, a name's length, a partitions' count, the tagged fields' count. */
#define LEAST_ENTRY (16 + 1 + 1 + 1)

PyDoc_STRVAR(read_doc,
"read(data, at, ids, names, id_text) -> (list, end) or None\n\n"
"The flexible array of (topic id, topic name, [partitions]) entries at offset `at` of the bytes\n"
"`data` (its compact count first), as the plain codec reads it: a list of (str, str, list of\n"
"int) tuples, and the offset after the array. A topic id's text is `id_text(its 16 bytes)`,\n"
"kept in the dict `ids` by those bytes; a name's is kept in `names`. None where anything is not\n"
"plainly read (see the top of assignor/wire/_compact_arrays.c).");

static PyObject *
read_array(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t at;
    PyObject *ids, *names, *id_text;
    if (!PyArg_ParseTuple(args, "y*nO!O!O:read", &view, &at, &PyDict_Type, &ids, &PyDict_Type, &names, &id_text))
        return NULL;
    const unsigned char *data = view.buf;
    Py_ssize_t size = view.len;
    PyObject *out = new_array(data, size, &at, LEAST_ENTRY);
    if (out == NULL)
        goto given_up;
    for (Py_ssize_t e = 0; e < PyList_GET_SIZE(out); e++) {
        if (size - at < 16)
            goto given_up;
        PyObject *id = text_of(ids, id_text, data + at, 16);
        if (id == NULL)
            goto given_up;
        at += 16;
        int64_t length = varint(data, size, &at) - 1;
        if (length < 0 || length > size - at) {
            Py_DECREF(id);
            goto given_up;
        }
        PyObject *name = text_of(names, NULL, data + at, (Py_ssize_t)length);
        if (name == NULL) {
            Py_DECREF(id);
            goto given_up;
        }
        at += (Py_ssize_t)length;
        int64_t partitions = varint(data, size, &at) - 1;
        /* the partitions, then one byte: no tagged fields (the usual case; others read plainly) */
        if (partitions < 0 || size - at < 1 || partitions > (size - at - 1) / 4 || data[at + 4 * partitions] != 0) {
            Py_DECREF(id);
            Py_DECREF(name);
            goto given_up;
        }
        PyObject *numbers = PyList_New((Py_ssize_t)partitions);
        if (numbers == NULL) {
            Py_DECREF(id);
            Py_DECREF(name);
            goto given_up;
        }
        for (Py_ssize_t p = 0; p < (Py_ssize_t)partitions; p++) {
            PyObject *number = PyLong_FromLong(int32_at(data + at + 4 * p));
            if (number == NULL) {
                Py_DECREF(id);
                Py_DECREF(name);
                Py_DECREF(numbers);
                goto given_up;
            }
            PyList_SET_ITEM(numbers, p, number);
        }
        at += 4 * (Py_ssize_t)partitions + 1;
        PyObject *entry = PyTuple_Pack(3, id, name, numbers);
        Py_DECREF(id);
        Py_DECREF(name);
        Py_DECREF(numbers);
        if (entry == NULL)
            goto given_up;
        PyList_SET_ITEM(out, e, entry);
    }
    return answer(&view, out, at);
given_up:
    return answer(&view, out, -1);
}

/* The last few arrays of names read, by their bytes (count and entries), with the texts read from
 * them: ConsumerGroupDescribe lists each member's subscribed names in full, and the members of a
 * group mostly subscribe alike (2,000 members of 500 names: 0.11 s of lookups of a new bytes
 * object per name, where comparing each array with the last one read takes a few milliseconds).
 * Only arrays read whole are kept, up to RECENT_BYTES each, so the same bytes read again give the
 * same texts; the oldest goes first. */
#define RECENT 4
#define RECENT_BYTES (1 << 16)
static PyObject *recent_bytes[RECENT];  /* bytes */
static PyObject *recent_texts[RECENT];  /* tuple of str */
static int recent_next;

/* The end of the strings array whose count lies at `at` (-1 when a count or length does not read
 * or a string would pass the end), walking the lengths only. */
static Py_ssize_t
strings_end(const unsigned char *data, Py_ssize_t size, Py_ssize_t at)
{
    if (at < 0 || at > size)
        return -1;
    int64_t count = varint(data, size, &at) - 1;
    if (count < 0 || count > size - at)
        return -1;
    for (int64_t e = 0; e < count; e++) {
        int64_t length = varint(data, size, &at) - 1;
        if (length < 0 || length > size - at)
            return -1;
        at += (Py_ssize_t)length;
    }
    return at;
}

/* The kept texts of the array at data[at:end], or NULL when it is not one of the recent ones
 * (a borrowed reference). */
static PyObject *
recent_of(const unsigned char *data, Py_ssize_t at, Py_ssize_t end)
{
    for (int r = 0; r < RECENT; r++) {
        PyObject *raw = recent_bytes[r];
        if (raw != NULL && PyBytes_GET_SIZE(raw) == end - at && memcmp(PyBytes_AS_STRING(raw), data + at, end - at) == 0)
            return recent_texts[r];
    }
    return NULL;
}

/* Keep the texts `out` read from data[at:end] (an error set only when memory runs out). */
static int
keep_recent(const unsigned char *data, Py_ssize_t at, Py_ssize_t end, PyObject *out)
{
    if (end - at > RECENT_BYTES)
        return 0;
    PyObject *raw = PyBytes_FromStringAndSize((const char *)data + at, end - at);
    PyObject *texts = raw == NULL ? NULL : PyList_AsTuple(out);
    if (texts == NULL) {
        Py_XDECREF(raw);
        return -1;
    }
    Py_XSETREF(recent_bytes[recent_next], raw);
    Py_XSETREF(recent_texts[recent_next], texts);
    recent_next = (recent_next + 1) % RECENT;
    return 0;
}

PyDoc_STRVAR(strings_doc,
"strings(data, at, names) -> (list, end) or None\n\n"
"The flexible array of strings at offset `at` of the bytes `data` (its compact count first), as\n"
"the plain codec reads it, and the offset after it; each text kept in the dict `names` by its\n"
"bytes. None where anything is not plainly read (a null string among them, say).");

static PyObject *
read_strings(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t at;
    PyObject *names;
    if (!PyArg_ParseTuple(args, "y*nO!:strings", &view, &at, &PyDict_Type, &names))
        return NULL;
    const unsigned char *data = view.buf;
    Py_ssize_t size = view.len, start = at, end = strings_end(data, size, at);
    PyObject *known = end < 0 ? NULL : recent_of(data, start, end);
    if (known != NULL) {
        PyObject *out = PySequence_List(known);
        return answer(&view, out, out == NULL ? -1 : end);
    }
    PyObject *out = new_array(data, size, &at, 1);  /* (a string's length takes a byte at least) */
    if (out == NULL)
        goto given_up;
    for (Py_ssize_t e = 0; e < PyList_GET_SIZE(out); e++) {
        int64_t length = varint(data, size, &at) - 1;
        if (length < 0 || length > size - at)
            goto given_up;
        PyObject *name = text_of(names, NULL, data + at, (Py_ssize_t)length);
        if (name == NULL)
            goto given_up;
        at += (Py_ssize_t)length;
        PyList_SET_ITEM(out, e, name);
    }
    if (keep_recent(data, start, at, out) < 0)
        goto given_up;
    return answer(&view, out, at);
given_up:
    return answer(&view, out, -1);
}

static PyMethodDef methods[] = {
    {"read", read_array, METH_VARARGS, read_doc},
    {"strings", read_strings, METH_VARARGS, strings_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "assignor.wire._compact_arrays",
    "Flexible arrays of topic partitions and of strings read in C (see assignor.wire.compiled).", 0, methods,
};

PyMODINIT_FUNC
PyInit__compact_arrays(void)
{
    return PyModuleDef_Init(&module_def);
}
