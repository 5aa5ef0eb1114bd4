/*
 * guarded_state_host.c — an embedding host whose Lua allocator fails on demand, running
 * spec/runtime/guarded_state_sweep.lua (built and run by spec/runtime/guarded_state_spec.lua).
 *
 * Why: a host that caps the memory of the scripts it runs makes any Lua allocation fail with a
 * memory error, at any instruction; no state that the library sets may stay set after one. The
 * embedding API has no allocator option, so this host does what any host can: it wraps the
 * runtime state's allocator (lua_getallocf / lua_setallocf on ltorch_runtime_lua(rt)).
 *
 * What: one runtime; its allocator counts every allocation (a new block or a growing realloc)
 * and can fail the n-th one from now, once. Lua sees two host functions:
 *     host.fail_allocation(n)   n > 0 arms (the n-th allocation from now fails), 0 disarms;
 *                               returns whether the failure armed before it fired
 *     host.allocations()        the number of allocations so far
 * then the host runs the sweep with MODE_ARG = "alloc" (ONLY_ARG = argv[2] if given) and exits
 * with the sweep's verdict: 0 when it printed "sweep: ok".
 *
 * How:  cc guarded_state_host.c -I runtime -I bindings $(pkg-config --cflags luajit) \
 *          -L build -lltorch -Wl,-rpath,build -o host
 *       ./host spec/runtime/guarded_state_sweep.lua [case]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ltorch.h>

struct failing_alloc {
    lua_Alloc inner;
    void *inner_ud;
    long long allocations;
    long long countdown; /* 0: disarmed */
    int fired;
};

static void *alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    struct failing_alloc *a = ud;
    if (nsize > 0 && (ptr == NULL || nsize > osize)) {
        a->allocations++;
        if (a->countdown > 0 && --a->countdown == 0) {
            a->fired = 1;
            return NULL;
        }
    }
    return a->inner(a->inner_ud, ptr, osize, nsize);
}

static int fail_allocation(void *ud, const ltorch_value *args, int nargs, ltorch_value *results,
                           int max_results, char *error, size_t error_size)
{
    struct failing_alloc *a = ud;
    int fired = a->fired;
    if (nargs != 1 || args[0].type != LTORCH_TNUMBER || max_results < 1) {
        snprintf(error, error_size, "expected a count");
        return -1;
    }
    a->countdown = (long long)args[0].number;
    a->fired = 0;
    results[0] = ltorch_number_value(fired);
    results[0].type = LTORCH_TBOOLEAN;
    return 1;
}

static int allocations(void *ud, const ltorch_value *args, int nargs, ltorch_value *results,
                       int max_results, char *error, size_t error_size)
{
    struct failing_alloc *a = ud;
    (void)args, (void)nargs, (void)error, (void)error_size;
    if (max_results < 1)
        return 0;
    results[0] = ltorch_number_value((double)a->allocations);
    return 1;
}

int main(int argc, char **argv)
{
    static struct failing_alloc a;
    ltorch_runtime *rt;
    lua_State *L;
    char setup[256];
    ltorch_value verdict = ltorch_nil_value();
    int status, ok;
    if (argc < 2) {
        fprintf(stderr, "usage: %s guarded_state_sweep.lua [case]\n", argv[0]);
        return 2;
    }
    if (ltorch_runtime_new(NULL, &rt) != LTORCH_OK) {
        fprintf(stderr, "runtime: %s\n", ltorch_error(NULL));
        return 2;
    }
    L = ltorch_runtime_lua(rt);
    a.inner = lua_getallocf(L, &a.inner_ud);
    lua_setallocf(L, alloc, &a);
    if (ltorch_register(rt, "host.fail_allocation", fail_allocation, &a) != LTORCH_OK
        || ltorch_register(rt, "host.allocations", allocations, &a) != LTORCH_OK) {
        fprintf(stderr, "register: %s\n", ltorch_error(rt));
        return 2;
    }
    snprintf(setup, sizeof setup, "MODE_ARG = 'alloc'; ONLY_ARG = %s%s%s", argc > 2 ? "'" : "",
             argc > 2 ? argv[2] : "nil", argc > 2 ? "'" : "");
    status = ltorch_run_string(rt, setup, "=setup", NULL, 0);
    if (status == LTORCH_OK)
        status = ltorch_run_file(rt, argv[1], &verdict, 1);
    if (status != LTORCH_OK) {
        fprintf(stderr, "sweep: %s\n", ltorch_error(rt));
        ltorch_runtime_free(rt);
        return 1;
    }
    ok = verdict.type == LTORCH_TBOOLEAN && verdict.number != 0;
    ltorch_value_clear(&verdict);
    fflush(stdout);
    ltorch_runtime_free(rt);
    return ok ? 0 : 1;
}
