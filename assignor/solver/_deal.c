/* The sticky plan's deal (`assignor.strategies.sticky`): the partitions nobody keeps go to the
 * members that still need some of their class round-robin, in member order, round after round,
 * so that consecutive partitions of a topic go to different members (KAFKA-16277).
 *
 * Why in C: numpy lays out a triple per partition (class, round, member) and sorts them, about
 * 15 ms at a million partitions, more than a third of a fresh plan; here the members of a class
 * are walked round by round, those done dropped as they finish, in one pass over the answer.
 * The plain reference (`sticky._deal_plainly`: the triples and their sort) is held to this by a
 * property test; without a compiler the package uses it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../_buffers.h"

PyDoc_STRVAR(deal_doc,
"deal(cls, member, need) -> bytearray\n\n"
"The members, as one int64 column, in the order the deal serves them: class by class\n"
"(ascending), round by round, in each round every member of the class whose need is above the\n"
"round, in the order given. `cls`, `member` and `need` are int64 columns of one length, one row\n"
"per (class, member), by class; needs are not negative.");

static PyObject *
deal(PyObject *module, PyObject *args)
{
    PyObject *cls_object, *member_object, *need_object;
    if (!PyArg_ParseTuple(args, "OOO:deal", &cls_object, &member_object, &need_object))
        return NULL;
    Py_buffer views[3];
    if (int64_columns(3, (PyObject *[]){cls_object, member_object, need_object}, views,
                      (const char *[]){"cls", "member", "need"}) < 0)
        return NULL;
    Py_buffer *classes = &views[0], *members = &views[1], *needs = &views[2];
    PyObject *out = NULL;
    Py_ssize_t *active = NULL;
    const int64_t *cls = classes->buf, *member = members->buf, *need = needs->buf;
    Py_ssize_t rows = classes->shape[0];
    int64_t total = 0;
    if (members->shape[0] != rows || needs->shape[0] != rows) {
        PyErr_SetString(PyExc_ValueError, "cls, member and need must have one length");
        goto done;
    }
    for (Py_ssize_t j = 0; j < rows; j++) {
        if (need[j] < 0 || (j > 0 && cls[j] < cls[j - 1]) || need[j] > (INT64_MAX / 8) - total) {
            PyErr_SetString(PyExc_ValueError, "needs must not be negative, nor classes descend");
            goto done;
        }
        total += need[j];
    }
    if ((out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(total * 8))) == NULL)
        goto done;
    if ((active = PyMem_Malloc((rows + 1) * sizeof(Py_ssize_t))) == NULL) {
        PyErr_NoMemory();
        Py_CLEAR(out);
        goto done;
    }
    int64_t *dealt = (int64_t *)PyByteArray_AS_STRING(out);
    Py_ssize_t at = 0;
    for (Py_ssize_t start = 0, end; start < rows; start = end) {
        /* One class: its rows start to end; `active` holds those whose need is above the round. */
        Py_ssize_t count = 0;
        for (end = start; end < rows && cls[end] == cls[start]; end++) {
            if (need[end] > 0)
                active[count++] = end;
        }
        for (int64_t round = 0; count > 0; round++) {
            Py_ssize_t still = 0;
            for (Py_ssize_t i = 0; i < count; i++) {
                Py_ssize_t j = active[i];
                dealt[at++] = member[j];
                if (need[j] > round + 1)
                    active[still++] = j;  /* compacted in place, in the order given */
            }
            count = still;
        }
    }
done:
    PyMem_Free(active);
    PyBuffer_Release(classes);
    PyBuffer_Release(members);
    PyBuffer_Release(needs);
    return out;
}

static PyMethodDef methods[] = {
    {"deal", deal, METH_VARARGS, deal_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "assignor.solver._deal",
    "The sticky plan's round-robin deal (see assignor.strategies.sticky).", 0, methods,
};

PyMODINIT_FUNC
PyInit__deal(void)
{
    return PyModuleDef_Init(&module_def);
}
