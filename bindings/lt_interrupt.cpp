/*
 * lt_interrupt.cpp — the process-wide "an interrupt was requested" flag for waits in the bindings.
 *
 * Why: a Ctrl-C or a host's ltorch_interrupt becomes a Lua error at the next Lua instruction, but
 * a thread blocked inside a C++ wait runs no Lua: a collective whose peer never answers would
 * hold the interrupt until the process group's timeout (30 minutes by default). Waits that may
 * block for long poll this flag instead and fail with "interrupted!".
 *
 * What: lt_interrupt_request() sets the flag (async-signal-safe: one lock-free atomic store; the
 * runtime calls it from its SIGINT handler and from ltorch_interrupt); lt_interrupt_clear() is
 * called once the interrupt has been raised in Lua or the call ended; lt::interrupt_requested()
 * is what waits poll (bindings/lt_distributed.cpp's collective wait). The flag is per process,
 * like SIGINT: an interrupt meant for one runtime also ends another runtime's collective wait.
 */
#include "lt_internal.hpp"

#include <atomic>

namespace {
std::atomic<int> requested{0};
static_assert(std::atomic<int>::is_always_lock_free, "the SIGINT handler needs a lock-free store");
}  // namespace

bool lt::interrupt_requested() { return requested.load(std::memory_order_relaxed) != 0; }

extern "C" {

void lt_interrupt_request(void) { requested.store(1, std::memory_order_relaxed); }

void lt_interrupt_clear(void) { requested.store(0, std::memory_order_relaxed); }

}  // extern "C"
