/*
 * lt_warnings.cpp — libtorch's warnings (TORCH_WARN, TORCH_WARN_ONCE, TORCH_WARN_DEPRECATION)
 * printed the way Python's default warning filter prints PyTorch's: once per call site.
 *
 * Why: c10's default handler prints every warning every time ("[W... Resize.cpp:31] Warning:
 * ..."), so a warning raised inside a training step (an out= resize, a deprecated overload)
 * flooded stderr once per step. PyTorch turns each into a Python warning, which the default
 * filter shows once per (message, category, module, line) of the user's code.
 *
 * What: c10's warning handler is per thread (c10::WarningUtils::set_warning_handler), so each
 * thread that asks gets a Handler of its own:
 *   lt_warnings_enable()          installs it: each distinct warning prints once per process;
 *   lt_warnings_set_notify(f, c)  also: the thread's warnings are queued and f(c) is called after
 *                                 each. The runtime's f (runtime/warnings.c) arms a Lua debug
 *                                 hook; at the next instruction the interpreter runs it finds
 *                                 the user's frame and calls lt_warnings_flush("file:line"),
 *                                 which prints each queued warning once per (site, message);
 *   lt_warnings_forget(c)         drops the notify of every thread registered with c (the Lua
 *                                 state c is closing) and prints what they still queued;
 *   lt_set_warn_always(1)         torch.set_warn_always: every warning prints every time, and
 *                                 libtorch's TORCH_WARN_ONCE repeats (c10's warnAlways).
 * Threads that never ask (DataLoader workers, c10d's) keep c10's default handler. A backward
 * runs the engine on the Lua thread, or on a job's helper thread under the Lua thread's handler
 * (lt_function.cpp): its warnings are queued there, and lt::warnings_deliver() notifies once the
 * job is finished, so they too print once per call site of backward().
 * Output: "<site>: UserWarning: <message> (Triggered internally at <file>:<line>.)", the site
 * left out when unknown, as Python prints a warning PyTorch raised from C++.
 */
#include "lt_internal.hpp"
#include "lt_warnings.hpp"

#include <c10/util/Exception.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <variant>
#include <vector>

namespace {

/* Leaked on purpose: threads' Handlers may outlive static destruction at exit. */
std::mutex &g_mutex = *new std::mutex;  // guards everything below and every Handler's fields
std::unordered_set<std::string> &g_printed = *new std::unordered_set<std::string>;  // "site\nwarning"

struct Handler;
std::vector<Handler *> &g_handlers = *new std::vector<Handler *>;  // live threads' Handlers (forget)

std::string format(const c10::Warning &w) {
  bool deprecation = std::holds_alternative<c10::DeprecationWarning>(w.type());
  std::string text = deprecation ? "DeprecationWarning: " : "UserWarning: ";
  text += w.msg();
  const c10::SourceLocation &loc = w.source_location();
  if (!w.verbatim() && loc.file != nullptr) {
    text += " (Triggered internally at ";
    text += loc.file;
    text += ":" + std::to_string(loc.line) + ".)";
  }
  return text;
}

// Prints text for site unless already printed there (under g_mutex).
void print_locked(const char *site, const std::string &text) {
  std::string where = site != nullptr ? site : "";
  if (!c10::WarningUtils::get_warnAlways() && !g_printed.insert(where + "\n" + text).second) return;
  if (where.empty()) {
    std::fprintf(stderr, "%s\n", text.c_str());
  } else {
    std::fprintf(stderr, "%s: %s\n", where.c_str(), text.c_str());
  }
  std::fflush(stderr);
}

struct Handler : c10::WarningHandler {
  void (*notify)(void *) = nullptr;
  void *ctx = nullptr;
  std::vector<std::string> queued;
  std::thread::id owner = std::this_thread::get_id();  // thread_local: made on its own thread

  Handler() {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_handlers.push_back(this);
  }
  ~Handler() override {
    if (c10::WarningUtils::get_warning_handler() == this) c10::WarningUtils::set_warning_handler(nullptr);
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const std::string &text : queued) print_locked(nullptr, text);
    for (size_t i = 0; i < g_handlers.size(); i++) {
      if (g_handlers[i] == this) {
        g_handlers.erase(g_handlers.begin() + static_cast<long>(i));
        break;
      }
    }
  }

  void process(const c10::Warning &warning) override {
    void (*to_call)(void *) = nullptr;
    void *with = nullptr;
    try {
      std::string text = format(warning);
      std::lock_guard<std::mutex> lock(g_mutex);
      if (notify == nullptr) {
        print_locked(nullptr, text);
      } else {
        queued.push_back(std::move(text));
        if (std::this_thread::get_id() == owner) {  // another thread (a backward job's) must not
          to_call = notify;                         // touch the Lua state: warnings_deliver does
          with = ctx;
        }
      }
    } catch (...) {
      return;  // out of memory formatting a warning: drop it rather than fail the op
    }
    if (to_call != nullptr) to_call(with);
  }
};

thread_local Handler t_handler;

void install_here() {
  if (c10::WarningUtils::get_warning_handler() != &t_handler) c10::WarningUtils::set_warning_handler(&t_handler);
}

}  // namespace

void lt::warnings_deliver() noexcept {
  void (*to_call)(void *) = nullptr;
  void *with = nullptr;
  Handler &h = t_handler;  // made (it takes g_mutex) before the lock
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (h.queued.empty() || h.notify == nullptr) return;
    to_call = h.notify;
    with = h.ctx;
  }
  to_call(with);
}

extern "C" {

int lt_warnings_enable(void) {
  LT_TRY
  install_here();
  LT_CATCH
}

int lt_warnings_set_notify(void (*notify)(void *ctx), void *ctx) {
  LT_TRY
  install_here();  // makes t_handler, which takes g_mutex, before the lock
  std::lock_guard<std::mutex> lock(g_mutex);
  t_handler.notify = notify;
  t_handler.ctx = ctx;
  LT_CATCH
}

void lt_warnings_forget(void *ctx) {
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (Handler *h : g_handlers) {
      if (h->ctx != ctx || ctx == nullptr) continue;
      h->notify = nullptr;
      h->ctx = nullptr;
      for (const std::string &text : h->queued) print_locked(nullptr, text);
      h->queued.clear();
    }
  } catch (...) {
  }
}

int lt_warnings_flush(const char *site) {
  LT_TRY
  Handler &h = t_handler;  // made (it takes g_mutex) before the lock
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<std::string> queued;
  queued.swap(h.queued);
  for (const std::string &text : queued) print_locked(site, text);
  LT_CATCH
}

int lt_set_warn_always(int on) {
  LT_TRY
  c10::WarningUtils::set_warnAlways(on != 0);
  LT_CATCH
}

int lt_get_warn_always(int *out) {
  LT_TRY
  *out = c10::WarningUtils::get_warnAlways() ? 1 : 0;
  LT_CATCH
}

}  // extern "C"
