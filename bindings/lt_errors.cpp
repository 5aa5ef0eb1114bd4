/*
 * lt_errors.cpp — the per-thread error slot behind every status the C ABI returns: LT_CATCH
 * (lt_internal.hpp) calls lt::fail_current_exception(), which sorts the exception in flight
 * into an lt error kind and keeps its message for lt_last_error() / lt_last_error_kind().
 * The slot is per thread, so one thread's failure never overwrites another's message.
 */
#include "lt_internal.hpp"

#include <c10/util/Logging.h>
#include <c10/util/Exception.h>

#include <exception>
#include <new>
#include <string>

namespace {

thread_local std::string t_error_message;
thread_local int t_error_kind = LT_OK;

/* c10::Error captures a C++ backtrace by unwinding the whole stack. Called through the LuaJIT
 * FFI, that stack can hold JIT-compiled trace frames, and libgcc's unwinder aborts the process
 * on them (seen: a libtorch shape error raised in a loop killed the interpreter). Messages use
 * what_without_backtrace() anyway, so capture nothing: errors become safe, and cheaper.
 * Set when the library loads, before any call can throw. */
[[maybe_unused]] const bool g_backtraces_disabled = [] {
  c10::SetStackTraceFetcher([] { return std::string(); });
  return true;
}();

}  // namespace

namespace lt {

void set_error(int kind, const std::string &message) {
  t_error_kind = kind;
  t_error_message = message;
}

int fail_current_exception() noexcept {
  try {
    throw;
  } catch (const FreedError &e) {
    set_error(LT_ERR_FREED, e.what());
  } catch (const ValueError &e) {
    set_error(LT_ERR_VALUE, e.what());
  } catch (const c10::IndexError &e) {
    set_error(LT_ERR_INDEX, e.what_without_backtrace());
  } catch (const c10::ValueError &e) {
    set_error(LT_ERR_VALUE, e.what_without_backtrace());
  } catch (const c10::TypeError &e) {
    set_error(LT_ERR_TYPE, e.what_without_backtrace());
  } catch (const c10::NotImplementedError &e) {
    set_error(LT_ERR_NOT_IMPLEMENTED, e.what_without_backtrace());
  } catch (const c10::OutOfMemoryError &e) {
    set_error(LT_ERR_MEMORY, e.what_without_backtrace());
  } catch (const c10::Error &e) {
    set_error(LT_ERR_RUNTIME, e.what_without_backtrace());
  } catch (const std::bad_alloc &) {
    set_error(LT_ERR_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    set_error(LT_ERR_RUNTIME, e.what());
  } catch (...) {
    set_error(LT_ERR_RUNTIME, "unknown C++ exception");
  }
  return t_error_kind;
}

}  // namespace lt

extern "C" {

const char *lt_last_error(void) { return t_error_message.c_str(); }
int lt_last_error_kind(void) { return t_error_kind; }

}  // extern "C"
