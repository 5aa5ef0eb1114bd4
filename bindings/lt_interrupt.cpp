/*
 * lt_interrupt.cpp — per-thread interrupt requests for the bindings.
 *
 * Why: a Ctrl-C or a host's ltorch_interrupt becomes a Lua error at the next instruction the Lua
 * interpreter runs (the runtime's debug hook). Two kinds of code never get there: a thread
 * blocked inside a C++ wait (a collective whose peer never answers held the interrupt until the
 * group's timeout, 30 minutes by default), and a Lua loop of tensor ops that LuaJIT compiled into
 * one trace (traces run no hooks: `while true do x:add_(1) end` ignored Ctrl-C).
 *
 * What: each thread that runs interruptible Lua gets a cell (lt_interrupt_cell_here: allocated
 * once per thread and never freed, so a pointer to it stays valid even after the thread ends;
 * threads that never ask, such as DataLoader workers and autograd's engine, have none).
 *   lt_interrupt_request(cell)   sets it (async-signal-safe: one lock-free atomic store); the
 *                                runtime's SIGINT handler and ltorch_interrupt call it with the
 *                                cell of the thread running the call;
 *   lt_interrupt_take(cell)      clears it and says whether it was set: whoever takes it raises
 *                                the one "interrupted!" (the runtime's hook, or a compute op);
 *   lt_interrupt_clear(cell)     drops a request nobody took (the interrupted call ended);
 *   lt::interrupt_requested()    the calling thread's cell is set: what the collectives' wait
 *                                polls (it runs on the thread that called the collective);
 *   LT_TRY_OP (lt_internal.hpp)  a compute op takes its thread's pending request and fails with
 *                                "interrupted!" before running.
 * Requests are per thread, so two runtimes on two threads never take each other's interrupts.
 */
#include "lt_internal.hpp"

#include <atomic>
#include <new>

struct lt_interrupt_cell {
  std::atomic<int> requested{0};
};
static_assert(std::atomic<int>::is_always_lock_free, "the SIGINT handler needs a lock-free store");

namespace {
thread_local lt_interrupt_cell *this_thread_cell = nullptr;
}  // namespace

bool lt::interrupt_requested() {
  lt_interrupt_cell *c = this_thread_cell;
  return c != nullptr && c->requested.load(std::memory_order_relaxed) != 0;
}

bool lt::interrupt_take_here() {
  lt_interrupt_cell *c = this_thread_cell;
  return c != nullptr && c->requested.load(std::memory_order_relaxed) != 0 &&
         c->requested.exchange(0, std::memory_order_relaxed) != 0;
}

int lt::fail_interrupted() noexcept {
  try {
    lt::set_error(LT_ERR_RUNTIME, "interrupted!");
  } catch (...) {
  }
  return LT_ERR_RUNTIME;
}

extern "C" {

lt_interrupt_cell *lt_interrupt_cell_here(void) {
  if (this_thread_cell == nullptr) this_thread_cell = new (std::nothrow) lt_interrupt_cell();  // kept: see above
  return this_thread_cell;
}

void lt_interrupt_request(lt_interrupt_cell *cell) {
  if (cell != nullptr) cell->requested.store(1, std::memory_order_relaxed);
}

int lt_interrupt_take(lt_interrupt_cell *cell) {
  return cell != nullptr && cell->requested.exchange(0, std::memory_order_relaxed) != 0;
}

void lt_interrupt_clear(lt_interrupt_cell *cell) {
  if (cell != nullptr) cell->requested.store(0, std::memory_order_relaxed);
}

}  // extern "C"
