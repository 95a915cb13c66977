/* TopicPartition objects from columns, and columns from them: the object API's two ends
 * (`assignor.model.topic_partitions_at`, `member_topic_partitions`, `claim_columns`), the group
 * JSON's claims as objects (`topic_partitions_of_pairs`), subscriptions' names as indices
 * (`name_indices`), and a consumer-protocol snapshot's pairs (`entry_pairs`, for
 * `assignor.cluster.snapshot`), in C.
 *
 * Why: a plan on columns takes about 40 ms at a million partitions; making its million
 * `TopicPartition`s in Python (`tuple.__new__` mapped over pairs, after numpy has sorted the
 * partitions by member and gathered their columns) takes about 120 ms more, the cyclic
 * collector's first pass over them 40 ms after that, and reading a million claimed ones back
 * into columns as long again. Here each object is one allocation filled in place (as
 * `PyTuple_New` allocates a tuple, of the subclass), never tracked by the collector: a tuple of
 * a str and an int can be in no reference cycle, which is why CPython untracks such plain tuples
 * itself on its first pass over them.
 *
 * Only the standard C API; arrays come in through the buffer protocol (C-contiguous int64) and
 * go out as bytearrays, so nothing here is built against numpy. The plain references, which
 * property tests hold these to, are in assignor/model.py; without a compiler the package uses
 * them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_buffers.h"

/* Partition numbers below this share one int object per call (a million partitions of a few
 * hundred numbers make a few hundred ints, not a million). */
#define SHARED_INTS (1 << 16)

/* The type must be a tuple subclass that adds nothing to its instances (a NamedTuple: no
 * __dict__, no slots), or filling the items in place would not make a valid instance. */
static int
check_type(PyTypeObject *type)
{
    if (!PyType_IsSubtype(type, &PyTuple_Type) || type->tp_basicsize != PyTuple_Type.tp_basicsize
        || type->tp_itemsize != PyTuple_Type.tp_itemsize || type->tp_dictoffset != 0) {
        PyErr_Format(PyExc_TypeError, "%s is not a tuple type without instance attributes", type->tp_name);
        return -1;
    }
    return 0;
}


/* `sequence` as a new tuple, copied with the cyclic collector paused. A list's copy
 * (PySequence_Tuple, then PyList_AsTuple) allocates the tuple after reading where the list's
 * items are, and on Python 3.11 that allocation can run a collection at once: a finalizer it
 * runs could empty the list, and the copy would then read freed items. Once copied, a finalizer
 * can change the list but not the tuple, which is why the loops read tuples. */
static PyObject *
tuple_of(PyObject *sequence)
{
    int was_enabled = PyGC_Disable();
    PyObject *found = PySequence_Tuple(sequence);
    if (was_enabled)
        PyGC_Enable();
    return found;
}

/* Every name a str. */
static int
check_names(PyObject *names)
{
    for (Py_ssize_t t = 0; t < PyTuple_GET_SIZE(names); t++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(names, t))) {
            PyErr_SetString(PyExc_TypeError, "names must be strings");
            return -1;
        }
    }
    return 0;
}

/* The names as a checked tuple: the loops read a tuple, which a finalizer the collector runs
 * while objects are allocated could not change, as it could a list. */
static PyObject *
names_of(PyObject *list)
{
    PyObject *names = tuple_of(list);
    if (names != NULL && check_names(names) < 0)
        Py_CLEAR(names);
    return names;
}

/* What one call makes its objects with: their type and the ints it shares. */
typedef struct {
    PyTypeObject *type;
    PyObject **shared;
    int64_t sharing;  /* partition numbers below it share an int */
} Maker;

static int
maker_open(Maker *maker, PyTypeObject *type, int64_t largest)
{
    maker->type = type;
    maker->sharing = largest < 0 ? 0 : (largest < SHARED_INTS ? largest + 1 : SHARED_INTS);
    maker->shared = PyMem_Calloc(maker->sharing + 1, sizeof(PyObject *));
    if (maker->shared == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void
maker_close(Maker *maker)
{
    if (maker->shared == NULL)
        return;
    for (int64_t v = 0; v < maker->sharing; v++)
        Py_XDECREF(maker->shared[v]);
    PyMem_Free(maker->shared);
    maker->shared = NULL;
}

/* A new type((name, number)), taking the caller's references to both (released on failure). */
static PyObject *
pair_of(PyTypeObject *type, PyObject *name, PyObject *number)
{
    /* Allocated as PyTuple_New allocates a tuple, of `type` (a heap type: the instance holds a
     * reference to it), and never tracked: a str and an int are in no cycle (see the top). */
    PyObject *pair = (PyObject *)PyObject_GC_NewVar(PyTupleObject, type, 2);
    if (pair == NULL) {
        Py_DECREF(name);
        Py_DECREF(number);
        return NULL;
    }
#if PY_VERSION_HEX >= 0x030E0000
    /* Python 3.14 caches a tuple's hash (gh-131525): -1 is "not computed yet", as its own
     * allocation sets it; left as it came, the hash would be garbage. */
    ((PyTupleObject *)pair)->ob_hash = -1;
#endif
    PyTuple_SET_ITEM(pair, 0, name);
    PyTuple_SET_ITEM(pair, 1, number);
    return pair;
}

/* A new type((name, value)). */
static PyObject *
make_pair(Maker *maker, PyObject *name, int64_t value)
{
    PyObject *number;
    if (value >= 0 && value < maker->sharing) {
        number = maker->shared[value];
        if (number == NULL && (number = maker->shared[value] = PyLong_FromLongLong(value)) == NULL)
            return NULL;
        Py_INCREF(number);
    }
    else if ((number = PyLong_FromLongLong(value)) == NULL)
        return NULL;
    Py_INCREF(name);
    return pair_of(maker->type, name, number);
}

PyDoc_STRVAR(make_doc,
"make(type, names, topic, partition) -> list\n\n"
"type((names[topic[i]], partition[i])) for each row, in row order: `topic` and `partition` are\n"
"int64 arrays of one length, each topic an index into the list `names`.");

static PyObject *
make_objects(PyObject *module, PyObject *args)
{
    PyTypeObject *type;
    PyObject *name_list, *topic_object, *partition_object;
    if (!PyArg_ParseTuple(args, "O!O!OO:make", &PyType_Type, &type, &PyList_Type, &name_list, &topic_object,
                          &partition_object))
        return NULL;
    if (check_type(type) < 0)
        return NULL;
    PyObject *names = names_of(name_list);
    Py_buffer views[2];
    if (names == NULL || int64_columns(2, (PyObject *[]){topic_object, partition_object}, views,
                                       (const char *[]){"topic", "partition"}) < 0) {
        Py_XDECREF(names);
        return NULL;
    }
    Py_buffer *topics = &views[0], *partitions = &views[1];
    Maker maker = {0};
    PyObject *out = NULL;
    Py_ssize_t n = topics->shape[0], count = PyTuple_GET_SIZE(names);
    const int64_t *topic = topics->buf, *partition = partitions->buf;
    int64_t largest = -1;
    if (partitions->shape[0] != n) {
        PyErr_SetString(PyExc_ValueError, "topic and partition must have one length");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (topic[i] < 0 || topic[i] >= count) {
            PyErr_Format(PyExc_IndexError, "topic index %lld is not in names (%zd of them)",
                         (long long)topic[i], count);
            goto done;
        }
        if (partition[i] > largest)
            largest = partition[i];
    }
    if (maker_open(&maker, type, largest) < 0 || (out = PyList_New(n)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = make_pair(&maker, PyTuple_GET_ITEM(names, topic[i]), partition[i]);
        if (pair == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, i, pair);
    }
done:
    maker_close(&maker);
    Py_DECREF(names);
    PyBuffer_Release(topics);
    PyBuffer_Release(partitions);
    return out;
}

/* Where a member's previous objects stand in its new run: the next one not yet passed. */
typedef struct {
    PyObject **items;
    Py_ssize_t size, next;
} Cursor;

/* The topic index of `item` (exactly a `type` of an exact str and an exact int) when it is one
 * of `names` (`index`: name -> int); -1 when it is no such object. `*value`: its partition. */
static int64_t
index_of(PyObject *item, PyTypeObject *type, PyObject *names, PyObject *index, int64_t hint, int64_t *value)
{
    if (Py_TYPE(item) != type || PyTuple_GET_SIZE(item) != 2)
        return -1;
    PyObject *name = PyTuple_GET_ITEM(item, 0), *number = PyTuple_GET_ITEM(item, 1);
    if (!PyUnicode_CheckExact(name) || !PyLong_CheckExact(number))
        return -1;
    int overflow;
    long long partition = PyLong_AsLongLongAndOverflow(number, &overflow);
    if (overflow || (partition == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -1;
    }
    *value = partition;
    if (hint >= 0 && hint < PyTuple_GET_SIZE(names) && PyTuple_GET_ITEM(names, hint) == name)
        return hint;  /* the same str object as the name: no look-up */
    PyObject *found = PyDict_GetItemWithError(index, name);
    if (found == NULL) {
        PyErr_Clear();
        return -1;
    }
    long long at = PyLong_Check(found) ? PyLong_AsLongLong(found) : -1;
    if (at == -1 && PyErr_Occurred())
        PyErr_Clear();
    if (at < 0 || at >= PyTuple_GET_SIZE(names) || PyUnicode_Compare(PyTuple_GET_ITEM(names, at), name) != 0) {
        PyErr_Clear();
        return -1;
    }
    return at;
}

PyDoc_STRVAR(member_runs_doc,
"member_runs(type, names, offsets, owner, members, previous=None, index=None) -> list\n\n"
"A list per member (0 to members - 1) of type((names[t], p)) for each flat partition\n"
"offsets[t] + p whose owner is that member, in flat order: `offsets` (int64, len(names) + 1,\n"
"ascending from 0 to len(owner)) numbers each topic's partitions from offsets[t]; `owner`\n"
"(int64) is a member index, or negative for none. With `previous` (a list of one sequence per\n"
"member, in flat order as this makes them) and `index` (name -> position in names), a\n"
"partition a member had is that member's object where it is exactly `type` of an equal str\n"
"and int, found by walking both in flat order.");

static PyObject *
member_runs(PyObject *module, PyObject *args)
{
    PyTypeObject *type;
    PyObject *name_list, *offsets_object, *owner_object, *previous = Py_None, *index = Py_None;
    Py_ssize_t members;
    if (!PyArg_ParseTuple(args, "O!O!OOn|OO:member_runs", &PyType_Type, &type, &PyList_Type, &name_list,
                          &offsets_object, &owner_object, &members, &previous, &index))
        return NULL;
    if (check_type(type) < 0)
        return NULL;
    if (members < 0) {
        PyErr_SetString(PyExc_ValueError, "members must not be negative");
        return NULL;
    }
    if (previous != Py_None && (!PyList_CheckExact(previous) || PyList_GET_SIZE(previous) != members
                                || !PyDict_CheckExact(index))) {
        PyErr_SetString(PyExc_ValueError, "previous must be a list of one sequence per member, with index a dict");
        return NULL;
    }
    PyObject *names = names_of(name_list);
    Py_buffer views[2];
    if (names == NULL || int64_columns(2, (PyObject *[]){offsets_object, owner_object}, views,
                                       (const char *[]){"offsets", "owner"}) < 0) {
        Py_XDECREF(names);
        return NULL;
    }
    Py_buffer *offsets_view = &views[0], *owners = &views[1];
    Maker maker = {0};
    PyObject *out = NULL, *held = NULL;
    Py_ssize_t *starts = NULL, *filled = NULL;
    int64_t *flats = NULL, *topic_of = NULL;  /* each assigned flat partition and its topic, member by member */
    Cursor *cursors = NULL;
    const int64_t *offsets = offsets_view->buf, *owner = owners->buf;
    Py_ssize_t topics = PyTuple_GET_SIZE(names), total = owners->shape[0], assigned = 0;
    int ascending = offsets_view->shape[0] == topics + 1 && offsets[0] == 0 && offsets[topics] == total;
    int64_t largest = -1;
    for (Py_ssize_t t = 0; ascending && t < topics; t++) {
        ascending = offsets[t] <= offsets[t + 1];
        if (offsets[t + 1] - offsets[t] - 1 > largest)
            largest = offsets[t + 1] - offsets[t] - 1;
    }
    if (!ascending) {
        PyErr_SetString(PyExc_ValueError, "offsets must ascend from 0 to len(owner), one more than names");
        goto done;
    }
    starts = PyMem_Calloc(members + 1, sizeof(Py_ssize_t));
    filled = PyMem_Calloc(members + 1, sizeof(Py_ssize_t));
    if (starts == NULL || filled == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t f = 0; f < total; f++) {
        if (owner[f] >= members) {
            PyErr_Format(PyExc_IndexError, "owner %lld is not one of %zd members", (long long)owner[f], members);
            goto done;
        }
        if (owner[f] >= 0) {
            starts[owner[f] + 1]++;
            assigned++;
        }
    }
    for (Py_ssize_t m = 0; m < members; m++)
        starts[m + 1] += starts[m];
    /* The partitions sorted by member (a counting sort, flat order kept within each), so that the
     * objects are made member by member: each member's list then lies together in memory, and
     * whoever reads it later (the next rebalance's claims, say) reads it without cache misses. */
    flats = PyMem_Malloc((assigned + 1) * sizeof(int64_t));
    topic_of = PyMem_Malloc((assigned + 1) * sizeof(int64_t));
    if (flats == NULL || topic_of == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t t = 0; t < topics; t++) {
        for (int64_t f = offsets[t]; f < offsets[t + 1]; f++) {
            if (owner[f] >= 0) {
                Py_ssize_t at = starts[owner[f]] + filled[owner[f]]++;
                flats[at] = f;
                topic_of[at] = t;
            }
        }
    }
    if (previous != Py_None) {
        /* Each member's previous objects as a tuple (`held` keeps them; see make_objects). */
        PyObject *given = tuple_of(previous);
        if (given == NULL)
            goto done;
        if (PyTuple_GET_SIZE(given) != members) {
            Py_DECREF(given);
            PyErr_SetString(PyExc_ValueError, "previous must hold one sequence per member");
            goto done;
        }
        if ((held = PyTuple_New(members)) == NULL || (cursors = PyMem_Calloc(members + 1, sizeof(Cursor))) == NULL) {
            Py_DECREF(given);
            if (held != NULL)
                PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t m = 0; m < members; m++) {
            PyObject *had = tuple_of(PyTuple_GET_ITEM(given, m));
            if (had == NULL) {
                Py_DECREF(given);
                goto done;
            }
            PyTuple_SET_ITEM(held, m, had);
            cursors[m].items = &PyTuple_GET_ITEM(had, 0);
            cursors[m].size = PyTuple_GET_SIZE(had);
        }
        Py_DECREF(given);
    }
    if (maker_open(&maker, type, largest) < 0 || (out = PyList_New(members)) == NULL)
        goto done;
    for (Py_ssize_t m = 0; m < members; m++) {
        PyObject *run = PyList_New(starts[m + 1] - starts[m]);
        if (run == NULL)
            goto fail;
        PyList_SET_ITEM(out, m, run);
        for (Py_ssize_t k = starts[m]; k < starts[m + 1]; k++) {
            int64_t t = topic_of[k], p = flats[k] - offsets[t];
            PyObject *pair = NULL;
            if (cursors != NULL) {
                /* Pass the member's previous objects that come before (t, p) in flat order (or are
                 * no such object); take the one that is (t, p). */
                Cursor *cursor = &cursors[m];
                while (cursor->next < cursor->size) {
                    PyObject *had = cursor->items[cursor->next];
                    int64_t value = 0, at = index_of(had, type, names, index, t, &value);
                    if (at >= 0 && (at > t || (at == t && value > p)))
                        break;  /* a partition after this one: kept for later */
                    cursor->next++;
                    if (at == t && value == p) {
                        Py_INCREF(had);
                        pair = had;
                        break;
                    }
                }
            }
            if (pair == NULL && (pair = make_pair(&maker, PyTuple_GET_ITEM(names, t), p)) == NULL)
                goto fail;
            PyList_SET_ITEM(run, k - starts[m], pair);
        }
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    maker_close(&maker);
    PyMem_Free(starts);
    PyMem_Free(filled);
    PyMem_Free(flats);
    PyMem_Free(topic_of);
    PyMem_Free(cursors);
    Py_XDECREF(held);
    Py_DECREF(names);
    PyBuffer_Release(offsets_view);
    PyBuffer_Release(owners);
    return out;
}

PyDoc_STRVAR(read_doc,
"read(type, owned, index) -> (topic, partition) or None\n\n"
"The claims of `owned` (a list of sequences of claims, member by member) as two int64 columns\n"
"(bytearrays): each claim's topic by `index` (a dict of name to int; -1 for a name it lacks)\n"
"and its partition. None unless every claim is exactly of `type` with an exact str topic and an\n"
"exact int partition that fits in 64 bits: the caller reads any other claims its own way.");

static PyObject *
read_claims(PyObject *module, PyObject *args)
{
    PyTypeObject *type;
    PyObject *owned, *index;
    if (!PyArg_ParseTuple(args, "O!O!O!:read", &PyType_Type, &type, &PyList_Type, &owned, &PyDict_Type, &index))
        return NULL;
    if (check_type(type) < 0)
        return NULL;
    PyObject *given = tuple_of(owned);  /* tuples throughout: see make_objects */
    if (given == NULL)
        return NULL;
    Py_ssize_t members = PyTuple_GET_SIZE(given), n = 0;
    PyObject *sequences = PyTuple_New(members);  /* each member's claims as a tuple */
    if (sequences == NULL) {
        Py_DECREF(given);
        return NULL;
    }
    PyObject *topics = NULL, *partitions = NULL, *result = NULL;
    for (Py_ssize_t m = 0; m < members; m++) {
        PyObject *claims = tuple_of(PyTuple_GET_ITEM(given, m));
        if (claims == NULL)
            goto done;
        PyTuple_SET_ITEM(sequences, m, claims);
        n += PyTuple_GET_SIZE(claims);
    }
    if (n > PY_SSIZE_T_MAX / 8) {
        PyErr_NoMemory();
        goto done;
    }
    topics = PyByteArray_FromStringAndSize(NULL, n * 8);
    partitions = PyByteArray_FromStringAndSize(NULL, n * 8);
    if (topics == NULL || partitions == NULL)
        goto done;
    int64_t *topic = (int64_t *)PyByteArray_AS_STRING(topics), *partition = (int64_t *)PyByteArray_AS_STRING(partitions);
    Py_ssize_t row = 0;
    for (Py_ssize_t m = 0; m < members; m++) {
        PyObject *claims = PyTuple_GET_ITEM(sequences, m);
        PyObject **items = &PyTuple_GET_ITEM(claims, 0);
        Py_ssize_t size = PyTuple_GET_SIZE(claims);
        for (Py_ssize_t i = 0; i < size; i++, row++) {
            PyObject *claim = items[i];
            if (Py_TYPE(claim) != type || PyTuple_GET_SIZE(claim) != 2)
                goto unread;
            PyObject *name = PyTuple_GET_ITEM(claim, 0), *number = PyTuple_GET_ITEM(claim, 1);
            if (!PyUnicode_CheckExact(name) || !PyLong_CheckExact(number))
                goto unread;
            int overflow;
            long long value = PyLong_AsLongLongAndOverflow(number, &overflow);
            if (overflow != 0)
                goto unread;
            if (value == -1 && PyErr_Occurred())
                goto done;
            PyObject *found = PyDict_GetItemWithError(index, name);
            if (found == NULL && PyErr_Occurred())
                goto done;
            long long at = -1;
            if (found != NULL) {
                if (!PyLong_CheckExact(found)) {
                    PyErr_SetString(PyExc_TypeError, "index must map names to ints");
                    goto done;
                }
                at = PyLong_AsLongLong(found);
                if (at == -1 && PyErr_Occurred())
                    goto done;
            }
            topic[row] = at;
            partition[row] = value;
        }
    }
    result = PyTuple_Pack(2, topics, partitions);
    goto done;
unread:
    result = Py_NewRef(Py_None);
done:
    Py_DECREF(given);
    Py_DECREF(sequences);
    Py_XDECREF(topics);
    Py_XDECREF(partitions);
    return result;
}

PyDoc_STRVAR(indices_doc,
"indices(sequences, index) -> bytearray\n\n"
"index.get(name, -1) for every name of every sequence in `sequences` (a list of sequences), in\n"
"order, as one int64 column; `index` maps names to ints.");

static PyObject *
name_indices(PyObject *module, PyObject *args)
{
    PyObject *sequences, *index;
    if (!PyArg_ParseTuple(args, "O!O!:indices", &PyList_Type, &sequences, &PyDict_Type, &index))
        return NULL;
    /* Tuples throughout: a name's own __hash__ or __eq__ (a str subclass's) could change a list. */
    PyObject *given = tuple_of(sequences);
    if (given == NULL)
        return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(given), n = 0;
    PyObject *held = PyTuple_New(count), *out = NULL;
    if (held == NULL) {
        Py_DECREF(given);
        return NULL;
    }
    for (Py_ssize_t j = 0; j < count; j++) {
        PyObject *names = tuple_of(PyTuple_GET_ITEM(given, j));
        if (names == NULL)
            goto done;
        PyTuple_SET_ITEM(held, j, names);
        n += PyTuple_GET_SIZE(names);
    }
    if (n > PY_SSIZE_T_MAX / 8) {
        PyErr_NoMemory();
        goto done;
    }
    if ((out = PyByteArray_FromStringAndSize(NULL, n * 8)) == NULL)
        goto done;
    int64_t *column = (int64_t *)PyByteArray_AS_STRING(out);
    Py_ssize_t row = 0;
    for (Py_ssize_t j = 0; j < count; j++) {
        PyObject *names = PyTuple_GET_ITEM(held, j);
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++, row++) {
            PyObject *found = PyDict_GetItemWithError(index, PyTuple_GET_ITEM(names, i));  /* unhashable: TypeError */
            long long at = -1;
            if (found == NULL && PyErr_Occurred())
                goto fail;
            if (found != NULL && !PyLong_CheckExact(found)) {
                PyErr_SetString(PyExc_TypeError, "index must map names to ints");
                goto fail;
            }
            if (found != NULL && (at = PyLong_AsLongLong(found)) == -1 && PyErr_Occurred())
                goto fail;
            column[row] = at;
        }
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    Py_DECREF(given);
    Py_DECREF(held);
    return out;
}

/* The largest partition the JSON form takes: an INT32 on the wire, never negative. */
#define INT32_LARGEST 2147483647LL

/* The partition `number` is when it is exactly an int in [0, INT32_LARGEST], else -1 (an exact int
 * raises nothing here). */
static long long
partition_of(PyObject *number)
{
    if (!PyLong_CheckExact(number))
        return -1;
    int overflow;
    long long partition = PyLong_AsLongLongAndOverflow(number, &overflow);
    return overflow || partition > INT32_LARGEST ? -1 : partition;
}

PyDoc_STRVAR(pairs_doc,
"pairs(type, value) -> list or None\n\n"
"type((name, partition)) for each entry of the list `value`, in order, the entry's own two\n"
"objects; None unless every entry is exactly a list or a tuple of an exact str and an exact int\n"
"in [0, 2**31 - 1]: the caller reads any other value its own way (and names what is wrong).");

static PyObject *
from_pairs(PyObject *module, PyObject *args)
{
    PyTypeObject *type;
    PyObject *value;
    if (!PyArg_ParseTuple(args, "O!O!:pairs", &PyType_Type, &type, &PyList_Type, &value))
        return NULL;
    if (check_type(type) < 0)
        return NULL;
    /* A tuple of the entries: a finalizer the collector runs while objects are allocated could
     * change the list, and each entry's two objects are held before an allocation for the same
     * reason (an entry may be a list too). */
    PyObject *entries = tuple_of(value);
    if (entries == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(entries);
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        Py_DECREF(entries);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *entry = PyTuple_GET_ITEM(entries, i), *name, *number;
        if (PyList_CheckExact(entry) && PyList_GET_SIZE(entry) == 2) {
            name = PyList_GET_ITEM(entry, 0);
            number = PyList_GET_ITEM(entry, 1);
        }
        else if (PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 2) {
            name = PyTuple_GET_ITEM(entry, 0);
            number = PyTuple_GET_ITEM(entry, 1);
        }
        else
            goto other;
        if (!PyUnicode_CheckExact(name) || partition_of(number) < 0)
            goto other;
        Py_INCREF(name);  /* (held before the allocation: see above) */
        Py_INCREF(number);
        PyObject *pair = pair_of(type, name, number);
        if (pair == NULL)
            goto fail;
        PyList_SET_ITEM(out, i, pair);
    }
    Py_DECREF(entries);
    return out;
other:
    Py_DECREF(entries);
    Py_DECREF(out);
    Py_RETURN_NONE;
fail:
    Py_DECREF(entries);
    Py_DECREF(out);
    return NULL;
}

PyDoc_STRVAR(entry_pairs_doc,
"entry_pairs(type, entries, held) -> list or None\n\n"
"type((name, partition)) for each partition of each (topic id, name, partitions) tuple of the\n"
"list `entries` (a ConsumerGroupDescribe assignment as the compiled reader gives it), entry by\n"
"entry, each entry's partitions in ascending order (sorted where they are not), the partitions'\n"
"own int objects; the name of each entry with partitions added to the set `held`. None unless\n"
"every entry is exactly such a tuple of an exact str and a list of exact ints in [0, 2**31 - 1]:\n"
"the caller reads any other value its own way (and names what is wrong).");

/* Whether the list `partitions` holds exact ints in [0, 2**31 - 1] only (1), in ascending order
 * (2 when so). */
static int
partitions_kind(PyObject *partitions)
{
    long long before = -1;
    int ascending = 1;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(partitions); j++) {
        long long partition = partition_of(PyList_GET_ITEM(partitions, j));
        if (partition < 0)
            return 0;
        ascending &= partition >= before;
        before = partition;
    }
    return 1 + ascending;
}

static PyObject *
entry_pairs(PyObject *module, PyObject *args)
{
    PyTypeObject *type;
    PyObject *entries, *held, *out = NULL;
    if (!PyArg_ParseTuple(args, "O!O!O!:entry_pairs", &PyType_Type, &type, &PyList_Type, &entries, &PySet_Type,
                          &held))
        return NULL;
    if (check_type(type) < 0)
        return NULL;
    /* The collector paused throughout: nothing here runs Python code, so with no collection (and
     * no finalizer it could run) the lists read cannot change while objects are allocated. */
    int was_enabled = PyGC_Disable();
    Py_ssize_t n = PyList_GET_SIZE(entries), total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *entry = PyList_GET_ITEM(entries, i);
        if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 3
                || !PyUnicode_CheckExact(PyTuple_GET_ITEM(entry, 1)) || !PyList_CheckExact(PyTuple_GET_ITEM(entry, 2)))
            goto other;
        total += PyList_GET_SIZE(PyTuple_GET_ITEM(entry, 2));
    }
    if ((out = PyList_New(total)) == NULL)
        goto done;
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *entry = PyList_GET_ITEM(entries, i);
        PyObject *name = PyTuple_GET_ITEM(entry, 1), *partitions = PyTuple_GET_ITEM(entry, 2);
        if (PyList_GET_SIZE(partitions) == 0)
            continue;
        int kind = partitions_kind(partitions);
        if (kind == 0)
            goto other;
        PyObject *ordered = partitions;
        if (kind == 1 && ((ordered = PySequence_List(partitions)) == NULL || PyList_Sort(ordered) < 0)) {
            Py_XDECREF(ordered);
            Py_CLEAR(out);
            goto done;
        }
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(ordered); j++) {
            PyObject *number = PyList_GET_ITEM(ordered, j);
            Py_INCREF(name);
            Py_INCREF(number);
            PyObject *pair = pair_of(type, name, number);
            if (pair == NULL) {
                if (ordered != partitions)
                    Py_DECREF(ordered);
                Py_CLEAR(out);
                goto done;
            }
            PyList_SET_ITEM(out, k++, pair);
        }
        if (ordered != partitions)
            Py_DECREF(ordered);
        if (PySet_Add(held, name) < 0) {
            Py_CLEAR(out);
            goto done;
        }
    }
    goto done;
other:
    Py_XDECREF(out);
    out = Py_None;
    Py_INCREF(out);
done:
    if (was_enabled)
        PyGC_Enable();
    return out;
}

static PyMethodDef methods[] = {
    {"indices", name_indices, METH_VARARGS, indices_doc},
    {"make", make_objects, METH_VARARGS, make_doc},
    {"entry_pairs", entry_pairs, METH_VARARGS, entry_pairs_doc},
    {"member_runs", member_runs, METH_VARARGS, member_runs_doc},
    {"pairs", from_pairs, METH_VARARGS, pairs_doc},
    {"read", read_claims, METH_VARARGS, read_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "assignor._topic_partitions",
    "TopicPartition objects from columns and from JSON pairs, and columns from them (see assignor.model).", 0, methods,
};

PyMODINIT_FUNC
PyInit__topic_partitions(void)
{
    return PyModuleDef_Init(&module_def);
}
