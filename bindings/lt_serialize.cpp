/*
 * lt_serialize.cpp — the native half of checkpoints: PyTorch's zip container (libtorch's own
 * caffe2::serialize reader and writer), atomic file replacement (temp file in the same folder,
 * fsync, rename, fsync of the folder) and the CPU generator's state.
 *
 * Temporary files are named "<path>.tmp.<host>.<pid>.XXXXXX" after their writer. A save that is
 * killed (SIGKILL, OOM, preemption) cannot remove its own; the next save to the same path removes
 * every one whose writer ran on this host and no longer exists (kill(pid, 0) fails with ESRCH).
 * A live writer's file is never touched (its pid exists, or is reused: then the file stays).
 *
 * The pickle inside a `.pt` archive is parsed in Lua (lua/torch/serialization/), never here:
 * these functions only move bytes. Records are read whole into a uint8 tensor; the Lua side
 * checks the central directory first (lua/torch/serialization/zipdir.lua) so that only stored
 * records, whose sizes miniz bounds by the file size, are ever read.
 */
#include "lt_internal.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/empty.h>
#include <caffe2/serialize/inline_container.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <signal.h>
#include <string>
#include <unistd.h>

struct lt_zip_reader {
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> r;
};

struct lt_zip_writer {
  FILE *f = nullptr;
  std::unique_ptr<caffe2::serialize::PyTorchStreamWriter> w;
  bool failed = false;
  int error = 0;  // errno of the first failed write
};

namespace {

std::string errno_text(const char *what, const std::string &path) {
  return std::string(what) + " '" + path + "': " + std::strerror(errno);
}

void sync_fd_path(const std::string &path, int flags) {
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) throw std::runtime_error(errno_text("cannot open", path));
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  errno = saved;
  if (rc != 0 && errno != EINVAL) throw std::runtime_error(errno_text("fsync failed for", path));
}

std::string parent_dir(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

/* "<basename of path>.tmp.<host>.": what every temporary file of a save to path on this host
 * starts with. */
std::string temp_prefix(const std::string &path) {
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "localhost");
  for (char *c = host; *c; ++c)
    if (*c == '/') *c = '_';
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return base + ".tmp." + host + ".";
}

/* Removes the temporary files of saves to path whose writer on this host is gone. Best effort:
 * a file that cannot be listed or removed is left as it is. */
void remove_orphaned_temps(const std::string &path) {
  std::string prefix = temp_prefix(path);
  DIR *dir = ::opendir(parent_dir(path).c_str());
  if (dir == nullptr) return;
  while (struct dirent *e = ::readdir(dir)) {
    const char *name = e->d_name;
    if (std::strncmp(name, prefix.c_str(), prefix.size()) != 0) continue;
    const char *p = name + prefix.size();
    long long pid = 0;
    const char *digits = p;
    while (*p >= '0' && *p <= '9' && p - digits < 10) pid = pid * 10 + (*p++ - '0');
    if (p == digits || *p != '.' || std::strlen(p + 1) != 6 || pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  /* alive (or EPERM: alive) */
    ::unlinkat(::dirfd(dir), name, 0);
  }
  ::closedir(dir);
}

}  // namespace

extern "C" {

int lt_zip_reader_open(lt_zip_reader **out, const char *path) {
  LT_TRY
  *out = nullptr;
  auto r = std::make_unique<lt_zip_reader>();
  r->r = std::make_unique<caffe2::serialize::PyTorchStreamReader>(std::string(path));
  *out = r.release();
  LT_CATCH
}

void lt_zip_reader_free(lt_zip_reader *r) { delete r; }

int lt_zip_reader_has(lt_zip_reader *r, const char *name, int *out) {
  LT_TRY
  if (r == nullptr) throw lt::ValueError("zip reader was closed");
  *out = r->r->hasRecord(name) ? 1 : 0;
  LT_CATCH
}

int lt_zip_reader_read(lt_tensor **out, lt_zip_reader *r, const char *name) {
  LT_TRY
  if (r == nullptr) throw lt::ValueError("zip reader was closed");
  if (!r->r->hasRecord(name)) throw lt::ValueError(std::string("archive has no record '") + name + "'");
  auto rec = r->r->getRecord(name);
  size_t size = std::get<1>(rec);
  at::Tensor t = at::empty({static_cast<int64_t>(size)}, at::TensorOptions().dtype(at::kByte));
  if (size > 0) std::memcpy(t.data_ptr(), std::get<0>(rec).get(), size);
  *out = lt::wrap(std::move(t));
  LT_CATCH
}

int lt_zip_writer_open(lt_zip_writer **out, const char *path) {
  LT_TRY
  *out = nullptr;
  auto w = std::make_unique<lt_zip_writer>();
  w->f = std::fopen(path, "wb");
  if (w->f == nullptr) throw std::runtime_error(errno_text("cannot create", path));
  lt_zip_writer *raw = w.get();
  w->w = std::make_unique<caffe2::serialize::PyTorchStreamWriter>(
      [raw](const void *data, size_t n) -> size_t {
        // Always report n written: after a short write PyTorchStreamWriter throws from its
        // position check, and its destructor (noexcept, run by lt_zip_writer_free) would then
        // std::terminate the process (seen: ENOSPC on a full disk). The failure is recorded
        // here and reported by lt_zip_writer_add/finish instead; later data is discarded.
        if (raw->failed || raw->f == nullptr) return n;
        size_t done = n == 0 ? 0 : std::fwrite(data, 1, n, raw->f);
        if (done != n) {
          raw->failed = true;
          raw->error = errno ? errno : EIO;
        }
        return n;
      });
  *out = w.release();
  LT_CATCH
}

int lt_zip_writer_add(lt_zip_writer *w, const char *name, const void *data, int64_t size) {
  LT_TRY
  if (w == nullptr || !w->w) throw lt::ValueError("zip writer was closed");
  if (size < 0) throw lt::ValueError("negative record size");
  w->w->writeRecord(name, data, static_cast<size_t>(size));
  if (w->failed) throw std::runtime_error(std::string("write failed: ") + std::strerror(w->error));
  LT_CATCH
}

/* Writes the central directory, flushes and fsyncs the file, closes it. */
int lt_zip_writer_finish(lt_zip_writer *w) {
  LT_TRY
  if (w == nullptr || !w->w) throw lt::ValueError("zip writer was closed");
  w->w->writeEndOfFile();
  if (!w->failed && std::fflush(w->f) != 0) {
    w->failed = true;
    w->error = errno;
  }
  if (w->failed) throw std::runtime_error(std::string("write failed: ") + std::strerror(w->error));
  if (::fsync(fileno(w->f)) != 0 && errno != EINVAL) throw std::runtime_error(std::string("fsync failed: ") + std::strerror(errno));
  std::fclose(w->f);
  w->f = nullptr;
  LT_CATCH
}

void lt_zip_writer_free(lt_zip_writer *w) {
  if (w == nullptr) return;
  w->failed = true;  // an unfinished archive: the destructor must not write its tail
  try {
    w->w.reset();
  } catch (...) {
  }
  if (w->f) std::fclose(w->f);
  delete w;
}

/* Creates an empty, unique "<path>.tmp.<host>.<pid>.XXXXXX" beside path (after removing those of
 * writers that are gone); writes its name into buf. */
int lt_file_temp(const char *path, char *buf, int capacity) {
  LT_TRY
  remove_orphaned_temps(path);
  std::string p(path);
  size_t slash = p.rfind('/');
  std::string tmpl = (slash == std::string::npos ? std::string() : p.substr(0, slash + 1)) + temp_prefix(p) +
                     std::to_string(static_cast<long long>(::getpid())) + ".XXXXXX";
  if (static_cast<int>(tmpl.size()) + 1 > capacity) throw lt::ValueError("path too long");
  std::memcpy(buf, tmpl.c_str(), tmpl.size() + 1);
  int fd = ::mkstemp(buf);
  if (fd < 0) throw std::runtime_error(errno_text("cannot create a temporary file", tmpl));
  ::close(fd);
  LT_CATCH
}

int lt_file_sync(const char *path) {
  LT_TRY
  sync_fd_path(path, O_RDONLY);
  LT_CATCH
}

/* rename(tmp, path) then fsync of the folder, so the new name survives a crash. */
int lt_file_commit(const char *tmp, const char *path) {
  LT_TRY
  if (::rename(tmp, path) != 0) throw std::runtime_error(errno_text("cannot rename onto", path));
  sync_fd_path(parent_dir(path), O_RDONLY | O_DIRECTORY);
  LT_CATCH
}

int lt_rng_get_state(lt_tensor **out) {
  LT_TRY
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  *out = lt::wrap(gen.get_state());
  LT_CATCH
}

int lt_rng_set_state(const lt_tensor *state) {
  LT_TRY
  const at::Tensor &s = lt::get(state);
  if (s.scalar_type() != at::kByte || s.dim() != 1)
    throw lt::ValueError("RNG state must be a 1-D uint8 tensor (torch.get_rng_state())");
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(s.contiguous());
  LT_CATCH
}

}  // extern "C"
