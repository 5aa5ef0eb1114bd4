/*
 * classify.c — a host application that embeds ltorch: loads a checkpoint through a Lua
 * script and classifies inputs it holds in a C float array.
 *
 * Why: shows the whole embedding API on one page (runtime, search path, calls with tensors
 * and strings, zero-copy input with a release callback, reading result tensors, a Lua error
 * that comes back as a status while the host goes on), and is what spec/embed builds against
 * an installed ltorch.
 *
 * What: model.lua (beside this file) builds a 4 -> 4 -> 3 MLP and loads the checkpoint that
 * make_checkpoint.lua wrote; inputs x [N=4, 4] float32 are classified into classes [N]
 * (int64) with probabilities [N] (float32). Output, one line per input:
 *     input 0: class 0 (p=0.5388)
 * then one line for a deliberately bad call (3 features instead of 4):
 *     bad input rejected: ... classify: expected input [N, 4], got torch.Size([2, 3]) ...
 * and "input buffer released" once libtorch let go of the host's array.
 *
 * How:  ltorch examples/embed/make_checkpoint.lua /tmp/model.pt
 *       cmake -S examples/embed -B /tmp/ex -DCMAKE_PREFIX_PATH=<ltorch prefix> &&
 *       cmake --build /tmp/ex && /tmp/ex/classify examples/embed /tmp/model.pt
 * Exit status 0 when everything behaved, 1 otherwise (message on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ltorch.h>

static void on_release(void *data, void *ctx)
{
    (void)data;
    *(int *)ctx = 1; /* the host may now reuse or free the array */
}

static int fail(const char *what, const char *msg)
{
    fprintf(stderr, "classify: %s: %s\n", what, msg);
    return 1;
}

/* Prints one line per input from the classes [N] int64 and probabilities [N] float32. */
static int print_results(ltorch_tensor *classes, ltorch_tensor *probs)
{
    void *c, *p;
    int64_t nbytes, shape[1];
    int dtype, ndim, i;
    if (ltorch_tensor_info(classes, &dtype, shape, 1, &ndim) != LTORCH_OK ||
        ltorch_tensor_data(classes, &c, &nbytes) != LTORCH_OK ||
        ltorch_tensor_data(probs, &p, NULL) != LTORCH_OK)
        return fail("results", ltorch_error(NULL));
    if (dtype != LTORCH_INT64 || ndim != 1)
        return fail("results", "unexpected classes tensor");
    for (i = 0; i < shape[0]; i++)
        printf("input %d: class %lld (p=%.4f)\n", i, (long long)((int64_t *)c)[i],
               (double)((float *)p)[i]);
    return 0;
}

int main(int argc, char **argv)
{
    /* Class = the largest of the first three features (see make_checkpoint.lua). */
    float x[4][4] = {{0.9f, 0.1f, 0.0f, 5.0f},
                     {0.0f, 0.2f, 0.7f, 0.0f},
                     {0.1f, 0.8f, 0.3f, 0.0f},
                     {2.0f, 1.0f, 3.0f, 9.0f}};
    float bad[2][3] = {{1, 2, 3}, {4, 5, 6}};
    int64_t shape[2] = {4, 4}, bad_shape[2] = {2, 3};
    char path[4096];
    int released = 0, status = 0;
    ltorch_options opt = {0};
    ltorch_runtime *rt;
    ltorch_tensor *input = NULL, *bad_input = NULL;
    ltorch_value arg, res[2];

    if (argc != 3) {
        fprintf(stderr, "usage: classify <dir with model.lua> <checkpoint.pt>\n");
        return 2;
    }
    snprintf(path, sizeof path, "%s/?.lua", argv[1]);
    opt.package_path = path;
    opt.num_threads = 1;
    if (ltorch_runtime_new(&opt, &rt) != LTORCH_OK)
        return fail("runtime", ltorch_error(NULL));

    arg = ltorch_string_value(argv[2]);
    if (ltorch_call(rt, "model:load", &arg, 1, NULL, 0) != LTORCH_OK) {
        status = fail("load", ltorch_error(rt));
        goto done;
    }

    /* The C array becomes the tensor's storage: no copy; on_release says when it is free. */
    if (ltorch_tensor_from_buffer(x, LTORCH_FLOAT32, shape, 2, on_release, &released,
                                  &input) != LTORCH_OK) {
        status = fail("input", ltorch_error(NULL));
        goto done;
    }
    arg = ltorch_tensor_value(input);
    if (ltorch_call(rt, "model:classify", &arg, 1, res, 2) != LTORCH_OK) {
        status = fail("classify", ltorch_error(rt));
        goto done;
    }
    status = print_results(res[0].tensor, res[1].tensor);
    ltorch_value_clear(&res[0]);
    ltorch_value_clear(&res[1]);

    /* A Lua error comes back as a status and a message; the runtime stays usable. */
    if (ltorch_tensor_from_buffer(bad, LTORCH_FLOAT32, bad_shape, 2, NULL, NULL,
                                  &bad_input) != LTORCH_OK) {
        status = fail("bad input", ltorch_error(NULL));
        goto done;
    }
    arg = ltorch_tensor_value(bad_input);
    if (ltorch_call(rt, "model:classify", &arg, 1, res, 2) == LTORCH_ERR_RUN) {
        const char *msg = ltorch_error(rt);
        const char *eol = strchr(msg, '\n');
        printf("bad input rejected: %.*s\n", eol ? (int)(eol - msg) : (int)strlen(msg), msg);
    } else {
        status = fail("bad input", "was not rejected");
    }

done:
    ltorch_tensor_free(input);
    ltorch_tensor_free(bad_input);
    ltorch_runtime_free(rt); /* Lua's own handles on the inputs go with it */
    if (released)
        printf("input buffer released\n");
    else
        status = fail("input", "buffer never released");
    return status;
}
