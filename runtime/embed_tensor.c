/*
 * embed_tensor.c — tensors for host applications: wrap a caller-owned buffer without copying,
 * read a result's dtype, shape and bytes, free handles.
 *
 * Why: a host has its inputs in C arrays and wants its outputs as C arrays; copying through
 * Lua tables would cost time and memory, and the host must know when libtorch is done with a
 * buffer it lent.
 *
 * What: ltorch_tensor is bindings/lt.h's lt_tensor, so these are thin checks over lt_*:
 * from_buffer -> lt_from_blob_release (the release callback runs from libtorch's deleter, on
 * whichever thread drops the last reference); info -> dtype + sizes; data -> the data pointer
 * of a contiguous CPU tensor. Failures set the per-thread message read by ltorch_error(NULL).
 *
 * How: see ltorch.h (ltorch_tensor_*).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>

#include "ltorch.h"
#include "embed_internal.h"
#include "lt.h"

enum { DEVICE_CPU = 0 }; /* c10::DeviceType::CPU */

static int tensor_error(const char *what)
{
    char msg[480];
    snprintf(msg, sizeof msg, "%s: %s", what, lt_last_error());
    return ltorch__set_thread_error(LTORCH_ERR_TENSOR, msg);
}

int ltorch_tensor_from_buffer(void *data, int dtype, const int64_t *shape, int ndim,
                              ltorch_release_fn release, void *ctx, ltorch_tensor **out)
{
    if (out == NULL || data == NULL || ndim < 0 || (ndim > 0 && shape == NULL))
        return ltorch__set_thread_error(LTORCH_ERR_ARG,
                                        "ltorch_tensor_from_buffer: NULL data, shape or out");
    *out = NULL;
    if (lt_from_blob_release(out, data, shape, ndim, dtype, release, ctx) != 0)
        return tensor_error("ltorch_tensor_from_buffer");
    return ltorch__set_thread_error(LTORCH_OK, NULL);
}

int ltorch_tensor_info(const ltorch_tensor *t, int *dtype, int64_t *shape, int capacity,
                       int *ndim)
{
    int64_t n = 0;
    int code = 0;
    if (t == NULL || capacity < 0 || (capacity > 0 && shape == NULL))
        return ltorch__set_thread_error(LTORCH_ERR_ARG, "ltorch_tensor_info: bad argument");
    if (lt_tensor_dtype(t, &code) != 0 || lt_tensor_sizes(t, shape, capacity, &n) != 0)
        return tensor_error("ltorch_tensor_info");
    if (dtype != NULL)
        *dtype = code;
    if (ndim != NULL)
        *ndim = (int)n;
    return ltorch__set_thread_error(LTORCH_OK, NULL);
}

int ltorch_tensor_data(const ltorch_tensor *t, void **data, int64_t *nbytes)
{
    int device = 0, index = 0, contiguous = 0;
    int64_t n = 0;
    void *p = NULL;
    if (t == NULL || data == NULL)
        return ltorch__set_thread_error(LTORCH_ERR_ARG, "ltorch_tensor_data: NULL argument");
    *data = NULL;
    if (lt_tensor_device(t, &device, &index) != 0 ||
        lt_tensor_is_contiguous(t, &contiguous) != 0)
        return tensor_error("ltorch_tensor_data");
    if (device != DEVICE_CPU || !contiguous)
        return ltorch__set_thread_error(
            LTORCH_ERR_TYPE, "ltorch_tensor_data: the tensor is not a contiguous CPU tensor "
                             "(return x:contiguous():cpu() from Lua)");
    if (lt_tensor_nbytes(t, &n) != 0 || (n > 0 && lt_tensor_data_ptr(t, &p) != 0))
        return tensor_error("ltorch_tensor_data");
    *data = p;
    if (nbytes != NULL)
        *nbytes = n;
    return ltorch__set_thread_error(LTORCH_OK, NULL);
}

void ltorch_tensor_free(ltorch_tensor *t)
{
    if (t != NULL)
        lt_tensor_free(t);
}
