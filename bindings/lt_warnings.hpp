/*
 * lt_warnings.hpp — the bindings' side of libtorch's warnings (lt_warnings.cpp), for the other
 * bindings files: lt_function.cpp hands the engine's warnings to the Lua thread that started a
 * backward (the job's helper thread runs under that thread's c10 handler, which queues them
 * without notifying from the wrong thread) and delivers them when the job finishes.
 */
#pragma once

namespace lt {

/* On a Lua thread whose warnings are queued: notifies its host if any are queued. */
void warnings_deliver() noexcept;

}  // namespace lt
