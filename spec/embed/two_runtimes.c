/*
 * two_runtimes.c — the embedding API under two threads, each with its own runtime (built and
 * run by spec/embed/embed_spec.lua against an installed ltorch, via pkg-config).
 *
 * Why: "several runtimes in one process, one runtime per thread" and "a Lua error comes back
 * as a status with its message while the host goes on" are promises only a real host can check.
 *
 * What: threads A and B start together (a barrier) and each, in its own runtime:
 *   - defines globals tag = "A"|"B" and work(x, k) = (x * k):sum(), x * k, tag;
 *   - runs ROUNDS calls on a host buffer wrapped without copying (values differ per thread)
 *     and checks every number, tensor and string result — and that the other thread's
 *     globals never show through;
 *   - raises a Lua error inside a call (LTORCH_ERR_RUN with "boom A" and a traceback), then
 *     keeps working; also checks syntax/file/missing-function/bad-result statuses;
 *   - frees its runtime and checks the buffer's release callback ran exactly once.
 * Prints "two_runtimes: ok (N checks)" and exits 0, or prints each "FAIL: ..." and exits 1.
 *
 * How:  cc two_runtimes.c $(pkg-config --cflags --libs ltorch) -pthread -o two_runtimes
 *       ./two_runtimes
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <ltorch.h>

enum { ROUNDS = 200, N = 64 };

static pthread_barrier_t start;
static atomic_int checks, failures;

#define CHECK(cond, ...)                                    \
    do {                                                    \
        atomic_fetch_add(&checks, 1);                       \
        if (!(cond)) {                                      \
            atomic_fetch_add(&failures, 1);                 \
            printf("FAIL: " __VA_ARGS__);                   \
            printf("\n");                                   \
        }                                                   \
    } while (0)

static void on_release(void *data, void *ctx)
{
    (void)data;
    atomic_fetch_add((atomic_int *)ctx, 1);
}

static const char *setup_code =
    "local torch = require 'torch'\n"
    "tag = ...\n"
    "function work(x, k) local y = x * k; return y:sum():item(), y, tag end\n"
    "function boom() error('boom ' .. tag) end\n"
    "function kinds() return 'text', true, nil, 42 end\n"
    "function table_result() return {} end\n";

/* Everything one thread does with its runtime; name is "A" or "B". */
static void exercise(ltorch_runtime *rt, const char *name, float scale)
{
    float buf[N];
    int64_t shape[1] = {N};
    double expected = 0;
    atomic_int released = 0;
    ltorch_tensor *x = NULL;
    ltorch_value args[2], res[4];
    char code[1024];
    int i, st;

    for (i = 0; i < N; i++) {
        buf[i] = scale * (float)(i + 1);
        expected += buf[i];
    }
    st = ltorch_run_string(rt, "return 1", "=probe", res, 1);
    CHECK(st == LTORCH_OK && res[0].type == LTORCH_TNUMBER && res[0].number == 1,
          "%s: probe (%s)", name, ltorch_error(rt));
    /* The setup chunk reads its tag from `...`. */
    snprintf(code, sizeof code, "assert(loadstring([==[%s]==]))('%s')", setup_code, name);
    st = ltorch_run_string(rt, code, "=setup", NULL, 0);
    CHECK(st == LTORCH_OK, "%s: setup (%s)", name, ltorch_error(rt));

    st = ltorch_tensor_from_buffer(buf, LTORCH_FLOAT32, shape, 1, on_release,
                                   (void *)&released, &x);
    CHECK(st == LTORCH_OK, "%s: from_buffer (%s)", name, ltorch_error(NULL));
    pthread_barrier_wait(&start);
    for (i = 0; i < ROUNDS && st == LTORCH_OK; i++) {
        void *data;
        int64_t nbytes;
        int k = i % 7 + 1;
        args[0] = ltorch_tensor_value(x);
        args[1] = ltorch_number_value(k);
        st = ltorch_call(rt, "work", args, 2, res, 3);
        CHECK(st == LTORCH_OK, "%s: work (%s)", name, ltorch_error(rt));
        if (st != LTORCH_OK)
            break;
        CHECK(res[0].type == LTORCH_TNUMBER && res[0].number == expected * k,
              "%s: sum %g, expected %g", name, res[0].number, expected * k);
        CHECK(res[2].type == LTORCH_TSTRING && strcmp(res[2].string, name) == 0,
              "%s: tag %s", name, res[2].type == LTORCH_TSTRING ? res[2].string : "?");
        CHECK(ltorch_tensor_data(res[1].tensor, &data, &nbytes) == LTORCH_OK &&
                  nbytes == N * 4 && ((float *)data)[N - 1] == buf[N - 1] * k,
              "%s: tensor result", name);
        ltorch_value_clear(&res[0]);
        ltorch_value_clear(&res[1]);
        ltorch_value_clear(&res[2]);
    }

    /* A Lua error: a status and a message with a traceback; the runtime goes on. */
    st = ltorch_call(rt, "boom", NULL, 0, NULL, 0);
    CHECK(st == LTORCH_ERR_RUN, "%s: boom status %d", name, st);
    CHECK(strstr(ltorch_error(rt), "boom ") != NULL &&
              strstr(ltorch_error(rt), name) != NULL &&
              strstr(ltorch_error(rt), "stack traceback") != NULL,
          "%s: boom message '%s'", name, ltorch_error(rt));
    st = ltorch_call(rt, "kinds", NULL, 0, res, 4);
    CHECK(st == LTORCH_OK && *ltorch_error(rt) == '\0', "%s: after error (%s)", name,
          ltorch_error(rt));
    CHECK(res[0].type == LTORCH_TSTRING && strcmp(res[0].string, "text") == 0 &&
              res[1].type == LTORCH_TBOOLEAN && res[1].number == 1 &&
              res[2].type == LTORCH_TNIL && res[3].type == LTORCH_TNUMBER &&
              res[3].number == 42,
          "%s: result kinds", name);
    for (i = 0; i < 4; i++)
        ltorch_value_clear(&res[i]);

    /* The other failure classes. */
    CHECK(ltorch_run_string(rt, "return +", NULL, NULL, 0) == LTORCH_ERR_SYNTAX,
          "%s: syntax status", name);
    CHECK(ltorch_run_file(rt, "/nonexistent/x.lua", NULL, 0) == LTORCH_ERR_FILE,
          "%s: file status", name);
    CHECK(ltorch_call(rt, "no_such_function", NULL, 0, NULL, 0) == LTORCH_ERR_TYPE &&
              strstr(ltorch_error(rt), "no_such_function") != NULL,
          "%s: missing function (%s)", name, ltorch_error(rt));
    CHECK(ltorch_call(rt, "table_result", NULL, 0, res, 1) == LTORCH_ERR_TYPE &&
              res[0].type == LTORCH_TNIL,
          "%s: table result", name);
    args[0] = ltorch_string_value("ab");
    args[1] = ltorch_number_value(3);
    st = ltorch_call(rt, "string:rep", args, 2, res, 1);
    CHECK(st == LTORCH_OK && res[0].type == LTORCH_TSTRING &&
              strcmp(res[0].string, "ababab") == 0,
          "%s: module function (%s)", name, ltorch_error(rt));
    ltorch_value_clear(&res[0]);
    st = ltorch_call(rt, "math.max", (ltorch_value[]){ltorch_number_value(2),
                                                      ltorch_number_value(5)}, 2, res, 1);
    CHECK(st == LTORCH_OK && res[0].number == 5, "%s: dotted name", name);

    ltorch_tensor_free(x);
    ltorch_runtime_free(rt);
    CHECK(atomic_load(&released) == 1, "%s: release callback ran %d times", name,
          atomic_load(&released));
}

static void *thread_main(void *arg)
{
    const char *name = arg;
    ltorch_runtime *rt;
    ltorch_options opt = {0};
    opt.num_threads = 1;
    if (ltorch_runtime_new(&opt, &rt) != LTORCH_OK) {
        CHECK(0, "%s: runtime_new (%s)", name, ltorch_error(NULL));
        pthread_barrier_wait(&start);
        return NULL;
    }
    exercise(rt, name, name[0] == 'A' ? 1.0f : -0.5f);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_barrier_init(&start, NULL, 2);
    pthread_create(&a, NULL, thread_main, "A");
    pthread_create(&b, NULL, thread_main, "B");
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    pthread_barrier_destroy(&start);
    CHECK(ltorch_runtime_new(NULL, NULL) == LTORCH_ERR_ARG, "main: NULL out");
    if (atomic_load(&failures) != 0) {
        printf("two_runtimes: %d of %d checks failed\n", atomic_load(&failures),
               atomic_load(&checks));
        return 1;
    }
    printf("two_runtimes: ok (%d checks)\n", atomic_load(&checks));
    return 0;
}
