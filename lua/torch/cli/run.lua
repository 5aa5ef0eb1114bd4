--[[
  torch.cli.run — `ltorch run`, ltorch's torchrun: starts one process per rank for distributed
  training and watches them. The runtime runs this file for the bare word "run" (no file of that
  name in the way); tools/run.lua runs it from the source tree.

      ltorch run --nproc-per-node 2 recipes/ddp_train.lua --epochs 1   (or build/ltorch tools/run.lua ...)
      # two machines, one command each (same master address and port on both):
      ltorch run --nnodes 2 --node-rank 0 --nproc-per-node 4 \
          --master-addr 10.0.0.1 --master-port 29500 train.lua
      ltorch run --nnodes 2 --node-rank 1 --nproc-per-node 4 \
          --master-addr 10.0.0.1 --master-port 29500 train.lua

  Each child gets torchrun's environment: RANK (node_rank * nproc + local), LOCAL_RANK,
  WORLD_SIZE (nnodes * nproc), LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR (default 127.0.0.1),
  MASTER_PORT (default 29500), and OMP_NUM_THREADS=1 unless set (ranks share the cores).
  A `.lua` script runs under this same ltorch executable; anything else is executed as a program.
  Every line a rank prints comes out prefixed "[rank N] " (stdout to stdout, stderr to stderr);
  --no-prefix turns that off.

  Failure policy: when any rank exits non-zero or dies by a signal, the others get SIGTERM, then
  SIGKILL after --kill-timeout seconds (default 5), and the launcher exits with the first failed
  rank's code (128+signal for a signal). The first failed rank is the one that died first: the
  launcher wakes on SIGCHLD, and among ranks reaped together one killed by a signal is named
  before the survivors whose collectives failed because of it.
  --max-restarts N (torchrun's elastic restarts): after a failure every rank of this node is
  stopped and started again, up to N times, with TORCHELASTIC_RESTART_COUNT=k (0 on the first
  run) and TORCHELASTIC_MAX_RESTARTS=N in its environment; a script resumes from its last
  checkpoint (recipes/ddp_train.lua and templates/ddp do). On other nodes the ranks fail in their
  next collective and their launchers restart them the same way. --timeout S bounds the whole run (exit 124). Each rank
  runs in its own process group, so helpers it started are stopped with it. SIGINT, SIGTERM or
  SIGHUP to the launcher (Ctrl-C, `timeout`, a scheduler) stops all ranks too (exit 128+signal).

  Options: --nproc-per-node N (default 1), --nnodes M (1), --node-rank R (0), --master-addr A,
  --master-port P (0: any free port, single node), --kill-timeout S, --timeout S,
  --max-restarts N (0), --no-prefix.
  Both --opt value and --opt=value, dashes or underscores (--nproc_per_node) are accepted.
]]
local ffi = require "ffi"

ffi.cdef [[
typedef int pid_t;
typedef struct { int64_t _opaque[32]; } lt_run_file_actions;   /* posix_spawn_file_actions_t (80 B) */
typedef struct { int64_t _opaque[64]; } lt_run_spawnattr;      /* posix_spawnattr_t (336 B) */
struct lt_run_pollfd { int fd; short events; short revents; };
struct lt_run_timespec { long tv_sec; long tv_nsec; };
extern char **environ;
int posix_spawn_file_actions_init(lt_run_file_actions *fa);
int posix_spawn_file_actions_destroy(lt_run_file_actions *fa);
int posix_spawn_file_actions_adddup2(lt_run_file_actions *fa, int fd, int newfd);
int posix_spawnattr_init(lt_run_spawnattr *a);
int posix_spawnattr_destroy(lt_run_spawnattr *a);
int posix_spawnattr_setflags(lt_run_spawnattr *a, short flags);
int posix_spawnattr_setpgroup(lt_run_spawnattr *a, pid_t pgroup);
typedef struct { uint64_t _bits[16]; } lt_run_sigset;            /* sigset_t (128 B) */
int posix_spawnattr_setsigmask(lt_run_spawnattr *a, const lt_run_sigset *mask);
int posix_spawnattr_setsigdefault(lt_run_spawnattr *a, const lt_run_sigset *mask);
int sigemptyset(lt_run_sigset *set);
int sigaddset(lt_run_sigset *set, int sig);
int sigprocmask(int how, const lt_run_sigset *set, lt_run_sigset *old);
int signalfd(int fd, const lt_run_sigset *mask, int flags);
int posix_spawnp(pid_t *pid, const char *file, const lt_run_file_actions *fa, const lt_run_spawnattr *a,
                 char *const argv[], char *const envp[]);
int pipe2(int fds[2], int flags);
int close(int fd);
long read(int fd, void *buf, size_t n);
int poll(struct lt_run_pollfd *fds, unsigned long nfds, int timeout);
pid_t waitpid(pid_t pid, int *status, int options);
int kill(pid_t pid, int sig);
long readlink(const char *path, char *buf, size_t n);
int lt_run_clock_gettime(int clk, struct lt_run_timespec *ts) __asm__("clock_gettime");
char *strerror(int errnum);
]]
local C = ffi.C

local SIGKILL, SIGTERM = 9, 15
local WNOHANG = 1
local POLLIN, POLLERR, POLLHUP = 1, 8, 16
local O_CLOEXEC = 0x80000
local POSIX_SPAWN_SETPGROUP, POSIX_SPAWN_SETSIGDEF, POSIX_SPAWN_SETSIGMASK = 0x02, 0x04, 0x08
local SIGHUP, SIGINT, SIGCHLD = 1, 2, 17
local SIG_BLOCK = 0
local SFD_NONBLOCK = 0x800
local CLOCK_MONOTONIC = 1

local function die(msg, code)
  io.stderr:write("run.lua: ", msg, "\n")
  os.exit(code or 2)
end

local function now()
  local ts = ffi.new("struct lt_run_timespec")
  C.lt_run_clock_gettime(CLOCK_MONOTONIC, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

---------------------------------------------------------------- arguments
local usage = [[
usage: ltorch tools/run.lua [--nproc-per-node N] [--nnodes M --node-rank R]
                            [--master-addr A] [--master-port P] [--kill-timeout S] [--timeout S]
                            [--max-restarts N] [--no-prefix] script.lua [args...]]

local opts = { nproc_per_node = 1, nnodes = 1, node_rank = 0, master_addr = "127.0.0.1",
               master_port = 29500, kill_timeout = 5, timeout = nil, prefix = true, max_restarts = 0 }
local numeric = { nproc_per_node = true, nnodes = true, node_rank = true, master_port = true,
                  kill_timeout = true, timeout = true, max_restarts = true }
local argv = arg or {}
local i = 1
while argv[i] and argv[i]:sub(1, 2) == "--" do
  local a = argv[i]
  if a == "--" then i = i + 1; break end
  local name, value = a:match("^%-%-([%w_%-]+)=(.*)$")
  if not name then name = a:sub(3) end
  name = name:gsub("%-", "_")
  if name == "help" then io.stdout:write(usage, "\n"); os.exit(0) end
  if name == "no_prefix" then
    opts.prefix = false
  elseif opts[name] ~= nil or name == "timeout" then
    if value == nil then i = i + 1; value = argv[i] end
    if value == nil then die("--" .. name .. " needs a value\n" .. usage) end
    if numeric[name] then
      local n = tonumber(value)
      if not n or n < 0 then die("--" .. name .. ": expected a non-negative number, got '" .. value .. "'") end
      value = n
    end
    opts[name] = value
  else
    die("unknown option " .. a .. "\n" .. usage)
  end
  i = i + 1
end
local script = argv[i]
if not script then die("no script given\n" .. usage) end
local script_args = {}
for k = i + 1, #argv do script_args[#script_args + 1] = argv[k] end
local nproc, nnodes, node_rank = opts.nproc_per_node, opts.nnodes, opts.node_rank
if nproc < 1 or nproc ~= math.floor(nproc) then die("--nproc-per-node must be a positive integer") end
if nnodes < 1 or node_rank >= nnodes then die("--node-rank must be in [0, nnodes)") end
local world_size = nproc * nnodes

-- --master-port 0 (single node only): a port the kernel says is free right now.
local function free_port()
  pcall(ffi.cdef, [[
  struct lt_run_sockaddr_in { uint16_t sin_family; uint16_t sin_port; uint32_t sin_addr; uint8_t zero[8]; };
  int socket(int domain, int type, int protocol);
  int bind(int fd, const void *addr, uint32_t len);
  int getsockname(int fd, void *addr, uint32_t *len);
  ]])
  local fd = C.socket(2, 1, 0)
  if fd < 0 then die("cannot pick a free port: socket() failed") end
  local sa = ffi.new("struct lt_run_sockaddr_in")
  sa.sin_family = 2
  sa.sin_addr = 0x0100007f
  local len = ffi.new("uint32_t[1]", ffi.sizeof(sa))
  local ok = C.bind(fd, sa, ffi.sizeof(sa)) == 0 and C.getsockname(fd, sa, len) == 0
  C.close(fd)
  if not ok then die("cannot pick a free port") end
  return bit.bor(bit.rshift(sa.sin_port, 8), bit.lshift(bit.band(sa.sin_port, 0xff), 8))
end
if opts.master_port == 0 then
  if nnodes > 1 then die("--master-port 0 (pick a free port) works on a single node only") end
  opts.master_port = free_port()
end

---------------------------------------------------------------- the child command and environment
local function self_exe()
  local buf = ffi.new("char[4096]")
  local n = C.readlink("/proc/self/exe", buf, 4095)
  if n <= 0 then return arg[-1] or "ltorch" end
  return ffi.string(buf, n)
end

local cmd
if script:match("%.lua$") then
  cmd = { self_exe(), script }
else
  cmd = { script }
end
for _, a in ipairs(script_args) do cmd[#cmd + 1] = a end

local base_env, overridden = {}, { RANK = true, LOCAL_RANK = true, WORLD_SIZE = true,
  LOCAL_WORLD_SIZE = true, GROUP_RANK = true, MASTER_ADDR = true, MASTER_PORT = true,
  TORCHELASTIC_RESTART_COUNT = true, TORCHELASTIC_MAX_RESTARTS = true }
do
  local env = C.environ
  local k = 0
  while env[k] ~= nil do
    local e = ffi.string(env[k])
    local name = e:match("^([^=]*)=")
    if name and not overridden[name] then base_env[#base_env + 1] = e end
    k = k + 1
  end
  if not os.getenv("OMP_NUM_THREADS") and nproc > 1 then base_env[#base_env + 1] = "OMP_NUM_THREADS=1" end
end

-- A NULL-terminated char*[] plus the Lua strings that keep its elements alive.
local function cstrings(list)
  local arr = ffi.new("char*[?]", #list + 1)
  local keep = {}
  for k, s in ipairs(list) do
    local b = ffi.new("char[?]", #s + 1, s)
    keep[k] = b
    arr[k - 1] = b
  end
  arr[#list] = nil
  return arr, keep
end

---------------------------------------------------------------- signals
-- SIGINT/SIGTERM/SIGHUP to the launcher (Ctrl-C, `timeout`, a scheduler) must stop the ranks too:
-- they live in their own process groups and would not get it. The launcher blocks those signals
-- and reads them from a signalfd in its poll loop; ranks start with them unblocked and default.
local term_signals = ffi.new("lt_run_sigset")
C.sigemptyset(term_signals)
for _, sig in ipairs({ SIGHUP, SIGINT, SIGTERM }) do C.sigaddset(term_signals, sig) end
local empty_sigset = ffi.new("lt_run_sigset")
C.sigemptyset(empty_sigset)
local sigfd = -1
if C.sigprocmask(SIG_BLOCK, term_signals, nil) == 0 then
  sigfd = C.signalfd(-1, term_signals, O_CLOEXEC + SFD_NONBLOCK)
end
local got_signal = nil
-- SIGCHLD through its own signalfd: the watch loop wakes the moment a rank exits, so the rank
-- that died first is reaped before the survivors it takes down with it.
local chld_signals = ffi.new("lt_run_sigset")
C.sigemptyset(chld_signals)
C.sigaddset(chld_signals, SIGCHLD)
local chldfd = -1
if C.sigprocmask(SIG_BLOCK, chld_signals, nil) == 0 then
  chldfd = C.signalfd(-1, chld_signals, O_CLOEXEC + SFD_NONBLOCK)
end

---------------------------------------------------------------- spawning
local children = {}   -- { rank, pid, out = fd, err = fd, status = nil|code, buf = {out=, err=} }

local function spawn(local_rank, restart)
  local rank = node_rank * nproc + local_rank
  local env = {}
  for k, e in ipairs(base_env) do env[k] = e end
  env[#env + 1] = "TORCHELASTIC_RESTART_COUNT=" .. restart
  env[#env + 1] = "TORCHELASTIC_MAX_RESTARTS=" .. math.floor(opts.max_restarts)
  env[#env + 1] = "RANK=" .. rank
  env[#env + 1] = "LOCAL_RANK=" .. local_rank
  env[#env + 1] = "WORLD_SIZE=" .. world_size
  env[#env + 1] = "LOCAL_WORLD_SIZE=" .. nproc
  env[#env + 1] = "GROUP_RANK=" .. node_rank
  env[#env + 1] = "MASTER_ADDR=" .. opts.master_addr
  env[#env + 1] = "MASTER_PORT=" .. math.floor(opts.master_port)
  local outp, errp = ffi.new("int[2]"), ffi.new("int[2]")
  if C.pipe2(outp, O_CLOEXEC) ~= 0 or C.pipe2(errp, O_CLOEXEC) ~= 0 then
    error("pipe2 failed: " .. ffi.string(C.strerror(ffi.errno())))
  end
  local fa, attr = ffi.new("lt_run_file_actions"), ffi.new("lt_run_spawnattr")
  C.posix_spawn_file_actions_init(fa)
  C.posix_spawn_file_actions_adddup2(fa, outp[1], 1)
  C.posix_spawn_file_actions_adddup2(fa, errp[1], 2)
  C.posix_spawnattr_init(attr)
  C.posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP + POSIX_SPAWN_SETSIGMASK + POSIX_SPAWN_SETSIGDEF)
  C.posix_spawnattr_setpgroup(attr, 0)
  C.posix_spawnattr_setsigmask(attr, empty_sigset)
  C.posix_spawnattr_setsigdefault(attr, term_signals)
  local cargv, keep_a = cstrings(cmd)
  local cenv, keep_e = cstrings(env)
  local pid = ffi.new("pid_t[1]")
  local rc = C.posix_spawnp(pid, cmd[1], fa, attr, cargv, cenv)
  C.posix_spawn_file_actions_destroy(fa)
  C.posix_spawnattr_destroy(attr)
  C.close(outp[1]); C.close(errp[1])
  local _ = keep_a and keep_e
  if rc ~= 0 then
    C.close(outp[0]); C.close(errp[0])
    -- a user error (a missing or non-executable program): one line, no traceback
    error({ usage = ("cannot start rank %d (%s): %s"):format(rank, cmd[1], ffi.string(C.strerror(rc))) })
  end
  children[#children + 1] = { rank = rank, pid = pid[0], fds = { outp[0], errp[0] },
    sinks = { io.stdout, io.stderr }, partial = { "", "" }, status = nil }
end

local function emit(child, which, text)
  local sink = child.sinks[which]
  if opts.prefix then
    local data = child.partial[which] .. text
    local lines = {}
    local pos = 1
    while true do
      local nl = data:find("\n", pos, true)
      if not nl then break end
      lines[#lines + 1] = "[rank " .. child.rank .. "] " .. data:sub(pos, nl)
      pos = nl + 1
    end
    child.partial[which] = data:sub(pos)
    if #lines > 0 then sink:write(table.concat(lines)); sink:flush() end
  else
    sink:write(text); sink:flush()
  end
end

local function flush_partial(child, which)
  if child.partial[which] ~= "" then
    emit(child, which, "\n")
  end
end

local function signal_all(sig)
  for _, c in ipairs(children) do
    if c.status == nil then C.kill(-c.pid, sig); C.kill(c.pid, sig) end
  end
end

---------------------------------------------------------------- the watch loop
local readbuf = ffi.new("char[65536]")
local statusbuf = ffi.new("int[1]")

local function pump(timeout_ms)
  local fds, owners = {}, {}
  for _, c in ipairs(children) do
    for w = 1, 2 do
      if c.fds[w] then fds[#fds + 1] = c.fds[w]; owners[#owners + 1] = { c, w } end
    end
  end
  local nfds = #fds + (sigfd >= 0 and 1 or 0)
  local pfd = ffi.new("struct lt_run_pollfd[?]", nfds + 2)
  for k, fd in ipairs(fds) do pfd[k - 1].fd = fd; pfd[k - 1].events = POLLIN end
  if sigfd >= 0 then pfd[#fds].fd = sigfd; pfd[#fds].events = POLLIN end
  if chldfd >= 0 then pfd[nfds].fd = chldfd; pfd[nfds].events = POLLIN; nfds = nfds + 1 end
  local n = C.poll(pfd, nfds, timeout_ms)
  if n <= 0 then return end
  if chldfd >= 0 and bit.band(pfd[nfds - 1].revents, POLLIN) ~= 0 then
    local info = ffi.new("uint32_t[32]")
    while C.read(chldfd, info, 128) == 128 do end            -- drained; reap() finds who
  end
  if sigfd >= 0 and bit.band(pfd[#fds].revents, POLLIN) ~= 0 then
    local info = ffi.new("uint32_t[32]")                     -- struct signalfd_siginfo (128 B)
    if C.read(sigfd, info, 128) == 128 and not got_signal then got_signal = tonumber(info[0]) end
  end
  for k = 1, #fds do
    if bit.band(pfd[k - 1].revents, POLLIN + POLLERR + POLLHUP) ~= 0 then
      local c, w = owners[k][1], owners[k][2]
      local got = C.read(fds[k], readbuf, 65536)
      if got > 0 then
        emit(c, w, ffi.string(readbuf, got))
      elseif got == 0 or ffi.errno() ~= 4 then   -- EOF or a real error (4: EINTR)
        flush_partial(c, w)
        C.close(fds[k]); c.fds[w] = nil
      end
    end
  end
end

local function reap()
  for _, c in ipairs(children) do
    if c.status == nil then
      local r = C.waitpid(c.pid, statusbuf, WNOHANG)
      if r == c.pid then
        local s = statusbuf[0]
        local sig = bit.band(s, 0x7f)
        if sig == 0 then c.status = bit.band(bit.rshift(s, 8), 0xff); c.how = "exit code " .. c.status
        else c.status = 128 + sig; c.how = "signal " .. sig end
        c.ended = now()
      end
    end
  end
end

local function drain_closed(grace)
  -- After every child is reaped: read what is left, but never wait on a pipe a stray
  -- grandchild keeps open for longer than `grace` seconds.
  local stop = now() + grace
  while now() < stop do
    local open = false
    for _, c in ipairs(children) do if c.fds[1] or c.fds[2] then open = true end end
    if not open then break end
    pump(50)
  end
  for _, c in ipairs(children) do
    for w = 1, 2 do
      if c.fds[w] then flush_partial(c, w); C.close(c.fds[w]); c.fds[w] = nil end
    end
  end
end

-- Of the ranks that failed since the last look, the one to blame: killed by a signal first
-- (the survivors' collectives fail because of it), then the earliest reaped.
local function first_failure(list)
  local best
  for _, c in ipairs(list) do
    if best == nil then best = c
    else
      local cs, bs = c.how:find("^signal") ~= nil, best.how:find("^signal") ~= nil
      if (cs and not bs) or (cs == bs and c.ended < best.ended) then best = c end
    end
  end
  return best
end

-- One run of every local rank; returns the exit code and whether a rank (not the launcher's
-- signal or --timeout) failed.
local function run_ranks(restart, start)
  children = {}
  local code = 0
  for lr = 0, nproc - 1 do spawn(lr, restart) end
  local failed, kill_deadline, killed_hard = nil, nil, false
  while true do
    pump(100)
    reap()
    local alive, newly = 0, {}
    for _, c in ipairs(children) do
      if c.status == nil then alive = alive + 1
      elseif c.status ~= 0 and not failed then newly[#newly + 1] = c end
    end
    if #newly > 0 then
      failed = first_failure(newly)
      io.stderr:write(("run.lua: rank %d failed (%s); stopping the other ranks\n"):format(failed.rank, failed.how))
      code = failed.status
    end
    if alive == 0 then break end
    if not failed and got_signal then
      failed = { rank = -1 }
      code = 128 + got_signal
      io.stderr:write(("run.lua: got signal %d; stopping all ranks\n"):format(got_signal))
    end
    if not failed and opts.timeout and now() - start > opts.timeout then
      failed = { rank = -1 }
      code = 124
      io.stderr:write(("run.lua: --timeout %gs reached; stopping all ranks\n"):format(opts.timeout))
    end
    if failed and not kill_deadline then
      signal_all(SIGTERM)
      kill_deadline = now() + opts.kill_timeout
    elseif kill_deadline and not killed_hard and now() >= kill_deadline then
      io.stderr:write("run.lua: ranks still running after --kill-timeout; sending SIGKILL\n")
      signal_all(SIGKILL)
      killed_hard = true
    end
  end
  drain_closed(failed and 0.5 or 2)
  return code, failed ~= nil and failed.rank >= 0
end

local exit_code = 0
local ok, err = xpcall(function()
  local start = now()
  local restart = 0
  while true do
    local rank_failed
    exit_code, rank_failed = run_ranks(restart, start)
    if not rank_failed or restart >= opts.max_restarts or got_signal then break end
    restart = restart + 1
    io.stderr:write(("run.lua: restarting every rank (restart %d of %d)\n"):format(restart, opts.max_restarts))
  end
end, function(e) return type(e) == "table" and e.usage or debug.traceback(e) end)

if not ok then
  -- Interrupted (Ctrl-C) or a launcher bug: never leave ranks behind.
  signal_all(SIGTERM)
  local stop = now() + opts.kill_timeout
  while now() < stop do
    reap()
    local alive = false
    for _, c in ipairs(children) do if c.status == nil then alive = true end end
    if not alive then break end
    C.poll(nil, 0, 50)
  end
  signal_all(SIGKILL)
  for _, c in ipairs(children) do if c.status == nil then C.waitpid(c.pid, statusbuf, 0) end end
  io.stderr:write("run.lua: ", tostring(err), "\n")
  os.exit(tostring(err):find("interrupted") and 130 or 1)
end
os.exit(exit_code)
