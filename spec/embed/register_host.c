/*
 * register_host.c — host C functions called from Lua through ltorch_register (built and run by
 * spec/embed/embed_spec.lua against an installed ltorch, via pkg-config).
 *
 * Why: "a host registers its own functions, and their failures are Lua errors raised safely"
 * is a promise only a real host can check: the host function must never see a longjmp.
 *
 * What: registers
 *   host.scale(t, k)  -> a new tensor t * k computed in C over the tensor's data, made with
 *                        ltorch_tensor_from_buffer (taken over by ltorch, freed by its release)
 *   host.echo(...)    -> its arguments back (nil, boolean, number, string; a tensor becomes an
 *                        empty tensor of its own), then a string from a static buffer
 *   host.fail(msg)    -> returns -1 with msg: a Lua error at the Lua caller's line
 *   count             -> a global: how many times it ran (ud is the host's counter)
 * and checks from Lua: values, the error's text and line, that pcall catches it and the runtime
 * goes on, that a table argument is a clear error, that every buffer made by host.scale is
 * released after collection, and the bad registrations (NULL, empty component, a non-table in
 * the way). Prints "register_host: ok (N checks)" and exits 0, or each "FAIL: ..." and exits 1.
 *
 * How:  cc register_host.c $(pkg-config --cflags --libs ltorch) -o register_host
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ltorch.h>

static int checks, failures, live_buffers;

#define CHECK(cond, ...)                  \
    do {                                  \
        checks++;                         \
        if (!(cond)) {                    \
            failures++;                   \
            printf("FAIL: " __VA_ARGS__); \
        }                                 \
    } while (0)

static void release_buffer(void *data, void *ctx)
{
    (void)ctx;
    free(data);
    live_buffers--;
}

static int fail_with(char *error, size_t size, const char *msg)
{
    snprintf(error, size, "%s", msg);
    return -1;
}

static int host_scale(void *ud, const ltorch_value *args, int nargs, ltorch_value *results,
                      int max_results, char *error, size_t error_size)
{
    int dtype, ndim;
    int64_t shape[8], nbytes, i, n;
    void *data;
    float *out;
    (void)ud;
    (void)max_results;
    if (nargs != 2 || args[0].type != LTORCH_TTENSOR || args[1].type != LTORCH_TNUMBER)
        return fail_with(error, error_size, "expected (tensor, number)");
    if (ltorch_tensor_info(args[0].tensor, &dtype, shape, 8, &ndim) != LTORCH_OK || ndim > 8
        || dtype != LTORCH_FLOAT32)
        return fail_with(error, error_size, "expected a float32 tensor of at most 8 dims");
    if (ltorch_tensor_data(args[0].tensor, &data, &nbytes) != LTORCH_OK)
        return fail_with(error, error_size, ltorch_error(NULL));
    n = nbytes / (int64_t)sizeof(float);
    out = malloc((size_t)(n > 0 ? nbytes : 1));
    if (out == NULL)
        return fail_with(error, error_size, "out of memory");
    for (i = 0; i < n; i++)
        out[i] = ((const float *)data)[i] * (float)args[1].number;
    live_buffers++;
    if (ltorch_tensor_from_buffer(out, LTORCH_FLOAT32, shape, ndim, release_buffer, NULL,
                                  &results[0].tensor) != LTORCH_OK) {
        release_buffer(out, NULL);
        return fail_with(error, error_size, ltorch_error(NULL));
    }
    results[0].type = LTORCH_TTENSOR;
    return 1;
}

static int host_echo(void *ud, const ltorch_value *args, int nargs, ltorch_value *results,
                     int max_results, char *error, size_t error_size)
{
    static char own[32];
    int i;
    (void)ud;
    if (nargs + 1 > max_results)
        return fail_with(error, error_size, "too many arguments");
    for (i = 0; i < nargs; i++) {
        results[i] = args[i]; /* strings: copied by ltorch; tensors: a new handle each */
        if (args[i].type == LTORCH_TTENSOR) {
            int64_t shape[1] = {0};
            results[i] = ltorch_nil_value();
            /* a tensor result is taken over, so echo an empty one of our own instead */
            if (ltorch_tensor_from_buffer(own, LTORCH_FLOAT32, shape, 1, NULL, NULL,
                                          &results[i].tensor) != LTORCH_OK)
                return fail_with(error, error_size, "from_buffer failed");
            results[i].type = LTORCH_TTENSOR;
        }
    }
    snprintf(own, sizeof own, "from the host's buffer");
    results[nargs] = ltorch_string_value(own);
    return nargs + 1;
}

static int host_fail(void *ud, const ltorch_value *args, int nargs, ltorch_value *results,
                     int max_results, char *error, size_t error_size)
{
    (void)ud;
    (void)results;
    (void)max_results;
    return fail_with(error, error_size,
                     nargs > 0 && args[0].type == LTORCH_TSTRING ? args[0].string : "no message");
}

static int host_count(void *ud, const ltorch_value *args, int nargs, ltorch_value *results,
                      int max_results, char *error, size_t error_size)
{
    int *counter = ud;
    (void)args;
    (void)nargs;
    (void)max_results;
    (void)error;
    (void)error_size;
    results[0] = ltorch_number_value(++*counter);
    return 1;
}

static const char *LUA_CHECKS =
    "local torch = require 'torch'\n"
    "local x = torch.tensor({{1, 2}, {3, 4}}, {dtype = torch.float32})\n"
    "local y = host.scale(x, 2.5)\n"
    "assert(torch.equal(y, x * 2.5), 'scale: ' .. tostring(y))\n"
    "assert(y:size(0) == 2 and y.dtype == torch.float32)\n"
    "local a, b, c, d, e, f = host.echo(nil, true, 42, 'hé\\0llo', x)\n"
    "assert(a == nil and b == true and c == 42 and d == 'hé\\0llo', 'echo values')\n"
    "assert(torch.is_tensor(e) and e:numel() == 0 and f == \"from the host's buffer\", 'echo tail: ' .. tostring(e) .. ' ' .. tostring(f))\n"
    "local ok, err = pcall(function() host.fail('sensor offline') end)\n"
    "assert(not ok and err:find('^checks:9: host.fail: sensor offline$'), 'fail: ' .. tostring(err))\n"
    "ok, err = pcall(host.scale, x, 'k')\n"
    "assert(not ok and err:find('host.scale: expected %(tensor, number%)'), 'bad arg: ' .. tostring(err))\n"
    "ok, err = pcall(function() local r = host.echo(1, {}); return r end)\n"
    "assert(not ok and err:find('^checks:13: host.echo: argument #2 is a table; expected nil, a boolean'),\n"
    "  'table arg: ' .. tostring(err))\n"
    "local freed = torch.ones(2); freed:free()\n"
    "ok, err = pcall(host.echo, freed)\n"
    "assert(not ok and err:find('argument #1: tensor was freed'), 'freed: ' .. tostring(err))\n"
    "assert(count() == 1 and count() == 2)\n"
    "for _ = 1, 200 do host.scale(x, 3) end\n"
    "y, e, a = nil, nil, nil\n"
    "torch.collect()\n"
    "return 'done'\n";

int main(void)
{
    ltorch_runtime *rt;
    ltorch_value res[1];
    int counter = 0, st;
    if (ltorch_runtime_new(NULL, &rt) != LTORCH_OK) {
        printf("FAIL: runtime: %s\n", ltorch_error(NULL));
        return 1;
    }
    CHECK(ltorch_register(rt, "host.scale", host_scale, NULL) == LTORCH_OK, "register scale: %s\n",
          ltorch_error(rt));
    CHECK(ltorch_register(rt, "host.echo", host_echo, NULL) == LTORCH_OK, "register echo\n");
    CHECK(ltorch_register(rt, "host.fail", host_fail, NULL) == LTORCH_OK, "register fail\n");
    CHECK(ltorch_register(rt, "count", host_count, &counter) == LTORCH_OK, "register count\n");

    st = ltorch_run_string(rt, LUA_CHECKS, "=checks", res, 1);
    CHECK(st == LTORCH_OK && res[0].type == LTORCH_TSTRING && strcmp(res[0].string, "done") == 0,
          "lua checks: status %d, %s\n", st, ltorch_error(rt));
    ltorch_value_clear(&res[0]);
    CHECK(counter == 2, "count ran %d times\n", counter);
    CHECK(live_buffers == 0, "%d host buffers never released\n", live_buffers);

    CHECK(ltorch_register(NULL, "x", host_fail, NULL) == LTORCH_ERR_ARG, "NULL runtime\n");
    CHECK(ltorch_register(rt, NULL, host_fail, NULL) == LTORCH_ERR_ARG, "NULL name\n");
    CHECK(ltorch_register(rt, "x", NULL, NULL) == LTORCH_ERR_ARG, "NULL fn\n");
    CHECK(ltorch_register(rt, "a..b", host_fail, NULL) == LTORCH_ERR_ARG, "empty component\n");
    st = ltorch_run_string(rt, "notatable = 3", NULL, NULL, 0);
    st = ltorch_register(rt, "notatable.f", host_fail, NULL);
    CHECK(st == LTORCH_ERR_TYPE && strstr(ltorch_error(rt), "'notatable' is a number") != NULL,
          "non-table in the way: %d %s\n", st, ltorch_error(rt));
    st = ltorch_run_string(rt, "return host.echo('still works')", NULL, res, 1);
    CHECK(st == LTORCH_OK && res[0].type == LTORCH_TSTRING, "after the bad registrations: %s\n",
          ltorch_error(rt));
    ltorch_value_clear(&res[0]);

    ltorch_runtime_free(rt);
    CHECK(live_buffers == 0, "%d host buffers live after runtime_free\n", live_buffers);
    if (failures > 0)
        return 1;
    printf("register_host: ok (%d checks)\n", checks);
    return 0;
}
