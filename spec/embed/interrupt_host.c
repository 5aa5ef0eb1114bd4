/*
 * interrupt_host.c — ltorch_interrupt from a host's second thread (built and run by
 * spec/embed/embed_spec.lua against an installed ltorch, via pkg-config).
 *
 * Why: "a host interrupts a long call from another thread and goes on using the runtime" is a
 * promise only a real host with a real second thread can check.
 *
 * What: one runtime; a watchdog thread calls ltorch_interrupt(rt) after a delay while the main
 * thread is inside ltorch_call:
 *   - spin(): a Lua loop that never ends (kept out of the JIT) -> LTORCH_ERR_RUN "interrupted!";
 *   - train(): backward through a Lua autograd Function in an endless loop, ROUNDS times with
 *     delays from 1 to ROUNDS ms -> each time LTORCH_ERR_RUN "interrupted!", and right after, a
 *     backward through the same Function gives the right gradient (autograd was not wedged);
 *   - modes(): torch.no_grad, inference_mode, autocast and a Function's forward in an endless
 *     loop, MODE_ROUNDS times at delays a few microseconds apart -> each time "interrupted!", and
 *     after it grad mode is on, inference mode and autocast off: no interrupt lands between a
 *     mode change and its restore (the C guard, runtime/guard.c);
 *   - tensor_spin(): a loop of tensor ops LuaJIT compiles into one trace (no hook runs there) ->
 *     "interrupted!" raised by the op itself, and the next call runs normally;
 *   - ltorch_interrupt with no call running leaves the next call alone; NULL is LTORCH_ERR_ARG.
 * Prints "interrupt_host: ok (N checks)" and exits 0, or prints each "FAIL: ..." and exits 1.
 *
 * How:  cc interrupt_host.c $(pkg-config --cflags --libs ltorch) -pthread -o interrupt_host
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <ltorch.h>

enum { ROUNDS = 20, MODE_ROUNDS = 200 };

static int checks, failures;

#define CHECK(cond, ...)                  \
    do {                                  \
        checks++;                         \
        if (!(cond)) {                    \
            failures++;                   \
            printf("FAIL: " __VA_ARGS__); \
        }                                 \
    } while (0)

struct watchdog {
    ltorch_runtime *rt;
    long delay_us;
    atomic_int done; /* the call returned: stop interrupting */
};

/* Interrupts after delay_us, then again every 20 ms until the call has returned: an interrupt
 * that arrives before the call has started is, as documented, not for it (a loaded machine can
 * deschedule the caller between pthread_create and ltorch_call for longer than the delay). */
static void *interrupt_later(void *arg)
{
    struct watchdog *w = arg;
    struct timespec ts = {w->delay_us / 1000000, (w->delay_us % 1000000) * 1000L};
    struct timespec again = {0, 20 * 1000000L};
    nanosleep(&ts, NULL);
    while (!atomic_load(&w->done)) {
        ltorch_interrupt(w->rt);
        nanosleep(&again, NULL);
    }
    return NULL;
}

/* Runs func on rt while another thread interrupts it after delay_us; returns the status. */
static int call_interrupted(ltorch_runtime *rt, const char *func, long delay_us)
{
    pthread_t t;
    struct watchdog w = {rt, delay_us, 0};
    int st;
    pthread_create(&t, NULL, interrupt_later, &w);
    st = ltorch_call(rt, func, NULL, 0, NULL, 0);
    atomic_store(&w.done, 1);
    pthread_join(t, NULL);
    return st;
}

static const char *SETUP =
    "torch = require 'torch'\n"
    "function spin() local n = 0; while true do n = n + 1 end end\n"
    "function tensor_spin() local x = torch.ones(4); while true do x:add_(1) end end\n"
    "jit.off(spin)\n"
    "local Sq = torch.autograd.Function('Sq')\n"
    "function Sq.forward(ctx, x) ctx:save_for_backward(x); return x * x end\n"
    "function Sq.backward(ctx, g) return g * 2 * ctx.saved_tensors[1] end\n"
    "function train() while true do Sq.apply(torch.ones(4, {requires_grad = true})):sum():backward() end end\n"
    "function check()\n"
    "  local x = torch.ones(3, {requires_grad = true})\n"
    "  Sq.apply(x):sum():backward()\n"
    "  return x.grad:sum():item(), torch.is_grad_enabled()\n"
    "end\n"
    "local function nothing() end\n"
    "function modes()\n"
    "  while true do\n"
    "    torch.no_grad(nothing); torch.inference_mode(nothing); torch.autocast('cpu', nothing)\n"
    "    Sq.apply(torch.ones(2, {requires_grad = true}))\n"
    "  end\n"
    "end\n"
    "function modes_state()\n"
    "  return torch.is_grad_enabled(), torch.is_inference_mode_enabled(), torch.is_autocast_enabled('cpu')\n"
    "end\n";

int main(void)
{
    ltorch_runtime *rt;
    ltorch_value res[3];
    int st, i;
    if (ltorch_runtime_new(NULL, &rt) != LTORCH_OK) {
        printf("FAIL: runtime: %s\n", ltorch_error(NULL));
        return 1;
    }
    st = ltorch_run_string(rt, SETUP, "=setup", NULL, 0);
    CHECK(st == LTORCH_OK, "setup: %s\n", ltorch_error(rt));

    st = call_interrupted(rt, "spin", 200000);
    CHECK(st == LTORCH_ERR_RUN && strstr(ltorch_error(rt), "interrupted!") != NULL,
          "spin: status %d, %s\n", st, ltorch_error(rt));

    for (i = 1; i <= ROUNDS; i++) {
        st = call_interrupted(rt, "train", i * 1000L);
        CHECK(st == LTORCH_ERR_RUN && strstr(ltorch_error(rt), "interrupted!") != NULL,
              "train round %d: status %d, %s\n", i, st, ltorch_error(rt));
        st = ltorch_call(rt, "check", NULL, 0, res, 2);
        CHECK(st == LTORCH_OK && res[0].number == 6 && res[1].number == 1,
              "after round %d: status %d, grad sum %g, grad mode %g, %s\n", i, st, res[0].number,
              res[1].number, ltorch_error(rt));
    }

    for (i = 1; i <= 5; i++) {
        st = call_interrupted(rt, "tensor_spin", 100000L * i);
        CHECK(st == LTORCH_ERR_RUN && strstr(ltorch_error(rt), "interrupted!") != NULL,
              "tensor_spin round %d: status %d, %s\n", i, st, ltorch_error(rt));
        st = ltorch_call(rt, "check", NULL, 0, res, 2);
        CHECK(st == LTORCH_OK && res[0].number == 6 && res[1].number == 1,
              "after tensor_spin round %d: status %d, %s\n", i, st, ltorch_error(rt));
    }

    for (i = 1; i <= MODE_ROUNDS; i++) {
        st = call_interrupted(rt, "modes", 500 + i * 13L);
        CHECK(st == LTORCH_ERR_RUN && strstr(ltorch_error(rt), "interrupted!") != NULL,
              "modes round %d: status %d, %s\n", i, st, ltorch_error(rt));
        st = ltorch_call(rt, "modes_state", NULL, 0, res, 3);
        CHECK(st == LTORCH_OK && res[0].number == 1 && res[1].number == 0 && res[2].number == 0,
              "after modes round %d: status %d, grad mode %g, inference mode %g, autocast %g, %s\n", i, st,
              res[0].number, res[1].number, res[2].number, ltorch_error(rt));
    }

    CHECK(ltorch_interrupt(rt) == LTORCH_OK, "idle interrupt\n");
    st = ltorch_run_string(rt, "local s = 0; for i = 1, 1e5 do s = s + i end; return s", NULL, res, 1);
    CHECK(st == LTORCH_OK && res[0].number == 5000050000.0, "after an idle interrupt: %d %s\n", st,
          ltorch_error(rt));
    CHECK(ltorch_interrupt(NULL) == LTORCH_ERR_ARG, "NULL runtime\n");

    ltorch_runtime_free(rt);
    if (failures > 0)
        return 1;
    printf("interrupt_host: ok (%d checks)\n", checks);
    return 0;
}
