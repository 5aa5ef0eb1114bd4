--[[
  tools/api_fuzz.lua — a seeded, time-bounded fuzzer for ltorch's public Lua API.

  It calls every public torch function and Tensor method — the generated op surface (every name
  in torch._dispatch's index: torch.X and x:X) plus the hand-written ones (the functions in the
  torch table and in Tensor) plus indexing (x[k], x[k] = v) — with random and adversarial
  arguments: wrong types, nil, huge/negative sizes and dims, mismatched shapes and dtypes,
  non-contiguous and expanded views, freed tensors (x:free()), 0-dim and empty tensors, NaN/Inf,
  keyword tables with wrong values. Half the calls are schema-guided (one overload's parameter
  types, each argument sometimes mutated), half are random value lists.

  Every call runs under pcall. A Lua error is fine when it says what went wrong; one that leaked
  from inside the library (a Lua runtime error such as "attempt to index a nil value", a Lua
  builtin's "bad argument ... to 'ipairs'", a non-string error value, "unknown C++ exception")
  is an INTERNAL error: a library bug, listed at the end. A process abort or signal is the worst
  finding; the parent (spec/hardening/api_fuzz_spec.lua) runs this as a child process so such a
  crash fails the spec, and --progress FILE names the call in flight when it happened.

  Per-call watchdog: each call runs under alarm(--call-limit, default 60 s). A call that takes
  longer (a hang, or work out of all proportion to its arguments, like building 2^62 empty
  chunks) ends the process with SIGALRM; the parent reports it as a failure with the call and
  its arguments from the progress file.

  Canaries (--canaries): the bindings' allocator puts canary bytes around every CPU tensor's
  memory (bindings/lt_allocator.cpp, lt_debug_canaries), and they are checked after every call:
  a write out of bounds ends the run with status 3 and a line naming the call that made it, not
  a crash thousands of calls later (spec/hardening/canaries_spec.lua).

  Memory: the bindings' counting allocator is capped (lt_debug_alloc_limit, 64 MiB live CPU
  tensor bytes by default), so a huge size becomes an "out of memory" error instead of an
  allocation; results with more than 100k elements are dropped, never fed back.

  Use: build/ltorch tools/api_fuzz.lua [--seconds 60] [--calls N] [--seed 1] [--private] [--nn] [--only NAME]
                                        [--call-limit 60] [--progress FILE] [--trace FILE] [--skip-file FILE] [--verbose] [--limit-mb 64]
                                        [--canaries]
  Output ends with
       api_fuzz: N calls (N names) in S s, seed N: N distinct errors, N internal, N ok
  Exit status 0 unless an internal error was found and --strict was given (3: --canaries found damage).
]]
local ffi = require "ffi"
local torch = require "torch"
local T = require "torch._tensor"
local dispatch = require "torch._dispatch"
local schema = require "torch._schema"

pcall(ffi.cdef, "void lt_debug_alloc_limit(int64_t max_live_bytes, int64_t fail_after_allocs);")
pcall(ffi.cdef, "void lt_debug_canaries(int on); int lt_debug_check_canaries(int64_t *info);")

---------------------------------------------------------------- options
local opt = { seconds = 60, seed = os.time(), limit_mb = 64, call_limit = 60 }
do
  local a = arg or {}
  local i = 1
  while i <= #a do
    local k = a[i]
    if k == "--seconds" then opt.seconds = tonumber(a[i + 1]); i = i + 1
    elseif k == "--seed" then opt.seed = tonumber(a[i + 1]); i = i + 1
    elseif k == "--limit-mb" then opt.limit_mb = tonumber(a[i + 1]); i = i + 1
    elseif k == "--call-limit" then opt.call_limit = tonumber(a[i + 1]); i = i + 1
    elseif k == "--only" then opt.only = a[i + 1]; i = i + 1
    elseif k == "--progress" then opt.progress = a[i + 1]; i = i + 1
    elseif k == "--calls" then opt.calls = tonumber(a[i + 1]); i = i + 1
    elseif k == "--trace" then opt.trace = a[i + 1]; i = i + 1
    elseif k == "--skip-file" then opt.skip_file = a[i + 1]; i = i + 1
    elseif k == "--private" then opt.private = true
    elseif k == "--nn" then opt.nn = true
    elseif k == "--verbose" then opt.verbose = true
    elseif k == "--strict" then opt.strict = true
    elseif k == "--canaries" then opt.canaries = true
    else io.stderr:write("api_fuzz: unknown option " .. tostring(k) .. "\n"); os.exit(2) end
    i = i + 1
  end
end

ffi.C.lt_debug_alloc_limit(opt.limit_mb * 1024 * 1024, -1)
if opt.canaries then ffi.C.lt_debug_canaries(1) end
torch.set_num_threads(1)  -- deterministic and friendly to a 2-core CI box

---------------------------------------------------------------- exclusions
--[[ Names never called, each with the reason. Private schema names (a leading "_") are skipped
     unless --private: they are libtorch internals without argument checks. ]]
local EXCLUDE = {
  -- host / process / file effects: not API behaviour to fuzz
  breakpoint = "opens an interactive debugger on stdin",
  save = "writes files at fuzzed paths", load = "reads files at fuzzed paths",
  from_file = "reads/maps files at fuzzed paths",
  set_num_threads = "process-wide setting; a huge count spawns threads",
  seed = "reseeds every generator non-deterministically: the run would no longer repeat from --seed",
  set_default_dtype = "global state: it would change every later call (restored anyway)",
  from_buffer = "wraps raw memory at a caller-given address: unsafe by design (FFI contract)",
  data_ptr = "returns a raw address", collect = "full GC: slow, exercised by the soak spec",
  -- libtorch's own unchecked memory views: out-of-bounds by design when fuzzed
  as_strided = "unchecked strides read out of bounds (libtorch)",
  as_strided_ = "unchecked strides (libtorch)", as_strided_scatter = "unchecked strides (libtorch)",
  set_ = "rebinds storage with unchecked sizes (libtorch)", set_data = "rebinds storage (libtorch)",
  -- known libtorch 1.13 aborts / hangs with tiny inputs and huge integer arguments
  combinations = "r = 2^31 builds r tensors in a std::vector: hangs (libtorch)",
  native_channel_shuffle = "groups = 0 divides by zero: SIGFPE inside libtorch 1.13 (channel_shuffle checks)",
  choose_qparams_optimized = "quantization helper: negative sizes segfault inside libtorch 1.13",
  binomial = "count = 2^31 samples by rejection, per element: hangs (libtorch)",
  embedding_bag = "heap-buffer-overflow inside libtorch 1.13 on mismatched index/offset dtypes (ASan: memset)",
  gradient = "spacing = a Tensor[] with fuzzed shapes segfaults inside libtorch 1.13 (gradient({edge_order=1, spacing={..}}))",
  histogramdd = "int[] bins shorter than the input's last dim are read out of bounds (no length check in 1.13): "
    .. "histogramdd(randn(3, 4), {}) segfaults, bins = {2, 2} asks for 5e14 bytes. PyTorch 1.13.1 too: "
    .. "python3 -c 'import torch; torch.histogramdd(torch.randn(3, 4), [])' -> SIGSEGV (fuzz seed 20261202)",
  native_batch_norm = "training on an input with no elements per channel divides by zero: SIGFPE inside libtorch 1.13. "
    .. "PyTorch 1.13.1 too: python3 -c 'import torch; torch.native_batch_norm(torch.zeros(3, 0), None, None, None, "
    .. "None, True, 0.1, 1e-5)' -> SIGFPE (torch.batch_norm checks for empty input first and is fuzzed)",
  batch_norm_update_stats = "as native_batch_norm: batch_norm_update_stats(zeros(3, 0), nil, nil, 0.5) -> SIGFPE; "
    .. "python3 -c 'import torch; torch.batch_norm_update_stats(torch.zeros(3, 0), None, None, 0.5)' too (fuzz seed 1)",
  gru_cell = "weights whose rows are not 3 x hidden (no shape check in 1.13) segfault inside libtorch. PyTorch 1.13.1 too: "
    .. "python3 -c 'import torch; r = torch.randn; torch.gru_cell(r(3, 4), r(3, 4), r(3, 4), r(4, 4))' -> SIGSEGV (fuzz seed 7; "
    .. "lstm_cell/rnn_*_cell raise for the same shapes)",
  align_tensors = "an empty list segfaults inside libtorch 1.13 (dereferences max_element of nothing)",
  -- work in proportion to an argument, as PyTorch's (a Lua loop: Ctrl-C ends it); checked by their specs
  svd_lowrank = "niter = 2^53 runs 2^53 power iterations, as PyTorch's does (spec/torch/linalg_python_spec.lua)",
  pca_lowrank = "niter = 2^53 runs 2^53 power iterations, as PyTorch's does (spec/torch/linalg_python_spec.lua)",
}
-- libtorch crashes ltorch guards itself, with a Lua error before the call: these names are fuzzed
-- as usual, and spec/hardening/api_fuzz_regressions_spec.lua pins each guard.
--   range: an integer dtype (or out=) with a step in (-1, 1): range_out divides by the step cast
--     to int64, SIGFPE inside libtorch 2.11 (found: seed 20261202, range(0.5, 0.5, 0.5,
--     {out=T3:int64})). PyTorch 2.11 too: python3 -c 'import torch; torch.range(0, 3, 0.5,
--     dtype=torch.int32)' -> SIGFPE (and arange with int64; ltorch's arange truncates the step to
--     0 first, an error). Guard: torch._creation's range.
--   linalg_svdvals: out= sharing the input's memory is resized before libtorch reads the input's
--     sizes (found: seed 20261202, linalg_svdvals(T3x4, {out=T3x4})). PyTorch 2.11 too:
--     python3 -c 'import torch; a = torch.randn(3, 4); torch.linalg.svdvals(a, out=a)' -> a
--     garbage SymInt error or a segfault. Guard: torch._crash_guards.
--   linalg_eigvalsh: the same with a batched input: out= sharing it is resized to (..., n), then
--     copied from as (..., n, n) matrices, past the end of a heap block (found: seed 20261202,
--     linalg_eigvalsh(T2x3x5x5, "L", {out=T2x3x5x5}) with --canaries; the process died ~300 calls
--     later). PyTorch 2.11 too: python3 -c 'import torch; a = torch.randn(2, 3, 5, 5);
--     torch.linalg.eigvalsh(a, out=a)' -> a segfault or glibc's "double free or corruption".
--     Guard: torch._crash_guards.
--   lu_unpack: empty pivots beside a non-empty LU (a segfault), and pivots of another shape than
--     LU.shape[:-2] + (min(m, n),), read as that shape (found: the 1,000,000-call run with
--     --canaries, lu_unpack(T2x3:int32, T2x3:int32, false, {unpack_pivots=true}) wrote past a
--     block). PyTorch 2.11 too: python3 -c 'import torch; LU, p = torch.linalg.lu_factor(
--     torch.randn(2, 3, 3)); torch.lu_unpack(LU[0], p)' -> glibc's "free(): invalid pointer".
--     Guard: torch._crash_guards.
-- Whole families, by pattern: libtorch kernels that trust their callers (autograd's backward
-- kernels, quantized/fbgemm/mkldnn/cudnn internals) and segfault on fuzzed arguments in 1.13.
-- PyTorch's Python API does not expose them as torch.X either (torch.ops.aten only).
local EXCLUDE_PATTERNS = {
  { "_backward$", "autograd backward kernels: unchecked preconditions (libtorch segfaults)" },
  { "_backward_", "autograd backward kernels: unchecked preconditions (libtorch segfaults)" },
  { "^quantized_", "quantized kernels: unchecked (libtorch segfaults)" },
  { "^fbgemm_", "fbgemm kernels: unchecked (libtorch segfaults)" },
  { "_polynomial_", "special_*_polynomial_*(x, n): an O(n) recurrence per element; n = 2^53 runs for hours (slow by design)" },
  { "^mkldnn_", "mkldnn kernels: unchecked" }, { "^cudnn_", "cuDNN-only" }, { "^miopen_", "MIOpen-only" },
}
-- Names called with finite tensors only: before the call, every floating/complex tensor argument
-- holding NaN/Inf is replaced by its nan_to_num(0, 1, -1) (same shape and dtype), or by 0 if that fails.
-- LAPACK's SVD driver (sgesdd/dgesdd -> xbdsqr) loops forever on non-finite input in OpenBLAS
-- 0.3.21's bundled LAPACK (Debian libopenblas0-openmp, which becomes /lib/.../liblapack.so.3 when
-- installed); reference LAPACK 3.11 returns an error instead. PyTorch 1.13.1 hangs the same way:
--   python3 -c 'import torch; x=torch.arange(25.).reshape(5,5); x[1]=float("inf"); torch.linalg.svd(x)'
-- (hangs with OpenBLAS's liblapack; "failed to converge" with /usr/lib/x86_64-linux-gnu/lapack).
-- Found by this fuzzer: seed 20261202, call 64545, linalg_svd(T2x3x5x5) stuck in sbdsqr_.
-- svdvals/matrix_rank/matrix_norm(2|nuc)/cond (jobz='N') return NaN or raise: fuzzed as usual.
-- linalg_eigvals: the glibc heap corruption ("free(): invalid next size", "corrupted double-linked
-- list" tens of thousands of calls later, seed 20261202). Unlike linalg_eig it does not check for
-- Inf/NaN, and LAPACK's xgeev (xgebal/xgehrd/xhseqr, "parameter N had an illegal value") then
-- writes out of bounds: PyTorch 1.13.1 aborts with "double free or corruption (out)" with either
-- LAPACK: python3 -c 'import torch; torch.linalg.eigvals(torch.full((2, 2), float("inf")))'
-- (float32, float64 and complex64 alike). With OpenBLAS's LAPACK, sgebal can also loop forever on
-- NaN input (seed 1: linalg_eigvals(T4x4, {out=T2x2:complex64}) stuck in sgebal_).
local FINITE_ONLY_PATTERNS = { "svd", "pinv", "lstsq", "^linalg_eigvals$" }
local function finite_only(name)
  for _, p in ipairs(FINITE_ONLY_PATTERNS) do if name:find(p) then return true end end
  return false
end
local skipped = {}
if opt.skip_file then
  for line in io.lines(opt.skip_file) do skipped[line] = true end
end
local function excluded(name)
  if EXCLUDE[name] then return EXCLUDE[name] end
  if skipped[name] then return "--skip-file" end
  for _, p in ipairs(EXCLUDE_PATTERNS) do if name:find(p[1]) then return p[2] end end
end
-- Names whose integer arguments must stay small (each is slow or loops in the argument): their
-- numbers above 64 are replaced by small ones on every path (schema-guided or random).
-- The split family returns one tensor per section and nothing bounds the count: libtorch builds
-- a std::vector of N (empty) tensors, hundreds of bytes each, so vsplit(zeros(0, 3), 2^31) or
-- tensor_split(x, 2^31) or chunk(zeros(0), 2^53) allocate until the OOM killer ends the process
-- (found: seed 20261202, vsplit(T0x3, 2147483648) at call 75913, 24 GB RSS). PyTorch 1.13.1 is the
-- same, memory linear in N: python3 -c 'import torch; print(len(torch.vsplit(torch.zeros(0, 3), 10**6)))'
-- prints 1000000 and grows the RSS by 0.6 GB; 2**31 exhausts any machine.
local SMALL_INTS = { polygamma = true, mvlgamma = true, matrix_power = true,
  tensor_split = true, vsplit = true, hsplit = true, dsplit = true, chunk = true, unsafe_chunk = true,
  split = true, unsafe_split = true, split_copy = true, unsafe_chunk_copy = true,
  -- upscale_factor^2 overflows int64 to 0 for factors >= 2^32, then divides by it: SIGFPE inside
  -- libtorch 1.13 (found: seed 1, pixel_shuffle(T2x3x5x5, 2^53)). PyTorch 1.13.1 too:
  -- python3 -c 'import torch; torch.pixel_shuffle(torch.randn(2, 3, 5, 5), 2**32)' -> SIGFPE.
  pixel_shuffle = true,
  -- a kernel_size >= 2^32 (the output-size arithmetic overflows) runs for hours inside libtorch
  -- 1.13's max_pool1d (found: seed 7, max_pool1d(T6x4, {2^53}, 2) at call ~732k). PyTorch 1.13.1
  -- too: python3 -c 'import torch; torch.max_pool1d(torch.randn(6, 4), [2**40], 2)' never returns
  -- (2**31 raises "Invalid computed output size"; max_pool1d_with_indices raises for 2**40).
  max_pool1d = true }
local SMALL_INT_PATTERNS = { "_polynomial_" }  -- special_*_polynomial_*(x, n): O(n) per element

---------------------------------------------------------------- rng
math.randomseed(opt.seed)
torch.manual_seed(opt.seed)  -- the pool's values too: with --calls, a seed replays the same run
local random = math.random
local function pick(list) return list[random(#list)] end
local function chance(p) return random() < p end

---------------------------------------------------------------- value pools
local NUMBERS = { 0, 1, -1, 2, 3, -3, 0.5, -2.5, 1e-8, 0 / 0, math.huge, -math.huge, 2 ^ 31, 2 ^ 53,
  -2 ^ 40, 2 ^ 63, 1e308, 7 }
local SMALL = { 0, 1, -1, 2, 3, -2, 1, 0 }
local STRINGS = { "cpu", "cuda", "cuda:1", "mps", "float32", "int64", "mean", "sum", "none", "", "xyzzy",
  "reflect", "linear", "fro", "nuc", "floor", "trunc", "tanh", "ij", "L", "U", "reduced", "ortho",
  "backward", ("x"):rep(300) }
local DTYPES = { torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8, torch.bool,
  torch.float16, torch.bfloat16, torch.complex64, torch.int8 }

local pool = {}
local function rebuild_pool()
  for _, t in ipairs(pool) do pcall(t.free, t) end
  local p = {}
  local function add(f) local ok, t = pcall(f); if ok and t ~= nil then p[#p + 1] = t end end
  add(function() return torch.randn(3, 4) end)
  add(function() return torch.randn(4) end)
  add(function() return torch.randn(2, 3, 4) end)
  add(function() return torch.randn(4, 4) end)
  add(function() return torch.randn(3, 4):t() end)                            -- non-contiguous
  add(function() return torch.randn(1, 4):expand({ 3, 4 }) end)               -- stride 0
  add(function() return torch.randn(6, 8):narrow(1, 2, 4) end)               -- offset view
  add(function() return torch.tensor(2.5) end)                               -- 0-dim
  add(function() return torch.zeros(0, 3) end)                               -- empty
  add(function() return torch.zeros(0) end)
  add(function() return torch.tensor({ 0 / 0, math.huge, -math.huge, 1 }) end)
  add(function() return torch.arange(12):reshape({ 3, 4 }) end)              -- int64
  add(function() return torch.tensor({ 1, 0, 2 }, { dtype = torch.int64 }) end)
  add(function() return torch.tensor({ true, false, true }) end)             -- bool
  add(function() return torch.randn(3, 4, { dtype = torch.float64 }) end)
  add(function() return torch.randn(3, 4, { requires_grad = true }) end)
  add(function() return torch.randn(2, 2, { dtype = torch.complex64 }) end)
  add(function() return torch.ones(3, 4, { dtype = torch.uint8 }) end)
  add(function() return torch.randn(2, 3, 5, 5) end)                          -- image-like
  add(function() local t = torch.randn(3); t:free(); return t end)           -- freed
  pool = p
end
rebuild_pool()

local function any_tensor() return pick(pool) end

local random_value
local function random_list(depth)
  local n = random(0, 4)
  local l = {}
  local kind = random(4)
  for i = 1, n do
    if kind == 1 then l[i] = pick(SMALL)
    elseif kind == 2 then l[i] = pick(NUMBERS)
    elseif kind == 3 then l[i] = any_tensor()
    else l[i] = random_value(depth + 1) end
  end
  return l
end

local KW_KEYS = { "dim", "keepdim", "dtype", "out", "alpha", "device", "requires_grad", "value", "p",
  "reduction", "k", "largest", "start_dim", "end_dim", "size", "correction", "unbiased", "non_blocking" }
local function random_kwargs(depth)
  local kw = {}
  for _ = 1, random(1, 3) do kw[pick(KW_KEYS)] = random_value(depth + 1) end
  return kw
end

function random_value(depth)
  depth = depth or 0
  local r = random(100)
  if r <= 30 then return any_tensor()
  elseif r <= 50 then return pick(NUMBERS)
  elseif r <= 55 then return pick(SMALL)
  elseif r <= 60 then return chance(0.5)
  elseif r <= 64 then return nil
  elseif r <= 70 then return pick(STRINGS)
  elseif r <= 76 then return pick(DTYPES)
  elseif r <= 86 then if depth > 2 then return {} end return random_list(depth)
  elseif r <= 92 then if depth > 2 then return {} end return random_kwargs(depth)
  elseif r <= 94 then return function() return any_tensor() end
  elseif r <= 96 then return torch.Size({ 2, 3 })
  elseif r <= 98 then return ffi.new("int[4]")
  else return setmetatable({}, { __index = function() error("poisoned table read") end }) end
end

---------------------------------------------------------------- schema-guided values
local function small_ints(name)
  if SMALL_INTS[name] then return true end
  for _, p in ipairs(SMALL_INT_PATTERNS) do if name:find(p) then return true end end
  return false
end
local function int_value(name)
  if small_ints(name) then return pick(SMALL) end
  if chance(0.8) then return pick(SMALL) end
  return pick(NUMBERS)
end

local function typed_value(p, name)
  if chance(0.1) then return random_value(1) end          -- mutate: anything at all
  if p.optional and chance(0.2) then return nil end
  local t = p.type
  local function one()
    if t == "Tensor" then return any_tensor()
    elseif t == "int" or t == "SymInt" then return int_value(name)
    elseif (t == "float" or t == "Scalar") and small_ints(name) then return pick(SMALL) + 0.5
    elseif t == "float" or t == "Scalar" then return chance(0.7) and pick(SMALL) + 0.5 or pick(NUMBERS)
    elseif t == "bool" then return chance(0.5)
    elseif t == "str" then return pick(STRINGS)
    elseif t == "ScalarType" then return pick(DTYPES)
    elseif t == "Device" then return pick({ "cpu", "cuda", "meta", "mps" })
    elseif t == "Layout" then return pick({ "strided", "sparse_coo", "bogus" })
    elseif t == "MemoryFormat" then return pick({ "contiguous_format", "channels_last", "bogus" })
    elseif t == "Dimname" then return "N"
    else return random_value(2) end
  end
  if p.list then
    local n = p.list ~= 0 and p.list or random(0, 4)
    if chance(0.1) then n = random(0, 6) end
    local l = {}
    for i = 1, n do l[i] = one() end
    return l
  end
  return one()
end

local parsed_cache = {}
local function overload_list(name)
  local l = parsed_cache[name]
  if l == nil then
    l = {}
    for _, e in ipairs(dispatch.entries(name)) do
      local ok, s = pcall(schema.parse, e[1])
      if ok and s then l[#l + 1] = s end
    end
    parsed_cache[name] = l
  end
  return l
end

-- Positional args (and sometimes a keyword table) for one random overload of a schema name.
local function schema_args(name, as_method)
  local list = overload_list(name)
  if #list == 0 then return nil end
  local s = pick(list)
  local pos, kw = {}, nil
  local first = true
  for _, p in ipairs(s.args or {}) do
    if as_method and first and p.type == "Tensor" and not p.list then
      first = false  -- the receiver
    else
      first = false
      local v = typed_value(p, name)
      if p.kwarg_only or (p.has_default and chance(0.3)) then
        -- a defaulted keyword is sometimes left to its default
        if not (p.kwarg_only and p.has_default and chance(0.5)) then
          kw = kw or {}
          kw[p.name] = v
        end
      else
        pos[#pos + 1] = v
        if p.has_default and chance(0.2) then break end
      end
    end
  end
  if kw then pos[#pos + 1] = kw end
  return pos
end

---------------------------------------------------------------- the target list
local targets = {}
local function add_target(kind, name, fn)
  if excluded(name) and not opt.only then return end
  if opt.only and name ~= opt.only then return end
  targets[#targets + 1] = { kind = kind, name = name, fn = fn }
end

-- torch._nn's schema names (python_module: nn) are the raw kernels under torch.nn.functional,
-- which checks arguments before calling them; like PyTorch's torch._C._nn they trust their
-- caller (seen: slow_conv3d, max_unpool2d segfault on fuzzed shapes). --nn includes them.
local nn_names = dispatch.module_names("nn")
local names = {}
for name in pairs(dispatch.names()) do
  if (opt.private or name:sub(1, 1) ~= "_") and (opt.nn or not nn_names[name]) then names[#names + 1] = name end
end
table.sort(names)
local seen_fn, seen_m = {}, {}
for _, name in ipairs(names) do
  local okf, f = pcall(function() return torch[name] end)
  if okf and type(f) == "function" then add_target("function", name, f); seen_fn[name] = true end
  local okm, m = pcall(function() return T.Tensor[name] end)
  if okm and type(m) == "function" then add_target("method", name, m); seen_m[name] = true end
end
-- hand-written functions and methods the schema does not name
local hand = {}
for k, v in pairs(torch) do
  if type(k) == "string" and type(v) == "function" and not seen_fn[k] then hand[#hand + 1] = { "function", k, v } end
end
for k, v in pairs(T.Tensor) do
  if type(k) == "string" and type(v) == "function" and not seen_m[k] then hand[#hand + 1] = { "method", k, v } end
end
table.sort(hand, function(a, b) return a[1] .. a[2] < b[1] .. b[2] end)
for _, h in ipairs(hand) do add_target(h[1], h[2], h[3]) end
-- indexing through the metatype
if not opt.only or opt.only == "__index" then
  add_target("index", "__index", function(x, k) return x[k] end)
  add_target("index", "__newindex", function(x, k, v) x[k] = v end)
end
for _, op in ipairs({ "__add", "__sub", "__mul", "__div", "__mod", "__pow", "__unm", "__concat", "__len",
  "__tostring" }) do
  if not opt.only or opt.only == op then
    local f = ({
      __add = function(a, b) return a + b end, __sub = function(a, b) return a - b end,
      __mul = function(a, b) return a * b end, __div = function(a, b) return a / b end,
      __mod = function(a, b) return a % b end, __pow = function(a, b) return a ^ b end,
      __unm = function(a) return -a end, __concat = function(a, b) return a .. b end,
      __len = function(a) return #a end, __tostring = function(a) return tostring(a) end,
    })[op]
    add_target("operator", op, f)
  end
end
if #targets == 0 then io.stderr:write("api_fuzz: nothing to call\n"); os.exit(2) end

---------------------------------------------------------------- classification
local INTERNAL_PATTERNS = {
  "attempt to index", "attempt to call", "attempt to perform arithmetic", "attempt to compare",
  "attempt to concatenate", "attempt to get length", "bad argument #%d+ to '[%w_]+' %(", "stack overflow",
  "unknown C++ exception", "table index is nil", "table index is NaN", "invalid key to 'next'",
  "bad argument #%d+ to 'unpack'", "cannot convert", "invalid C type", "'for' limit must be a number",
  "'for' initial value must be a number", "number has no integer representation",
}
-- Lua builtins whose "bad argument" message leaking out means a library bug.
local BUILTINS = { ipairs = 1, pairs = 1, next = 1, unpack = 1, select = 1, tostring = 1, tonumber = 1,
  setmetatable = 1, rawget = 1, rawset = 1, ["?"] = 1, insert = 1, concat = 1, sort = 1, format = 1,
  rep = 1, sub = 1, floor = 1, max = 1, min = 1, abs = 1, new = 1, cast = 1, typeof = 1, istype = 1,
  ["string.format"] = 1 }  -- names torch also defines count only when torch does not (library_name)

local function library_name(fname)
  local ok, v = pcall(function() return rawget(torch, fname) or rawget(T.Tensor, fname) end)
  return ok and v ~= nil
end

local function is_internal(msg)
  if type(msg) ~= "string" then return "non-string error value (" .. type(msg) .. ")" end
  if msg:find("poisoned table read", 1, true) then return nil end  -- our own trap table: fine
  -- Lua's own operator errors on a non-tensor operand (x + {} where x is a function) are the
  -- language's, raised at the harness's line: not a library leak.
  if msg:find("^tools/api_fuzz%.lua:%d+:") then return nil end
  for _, pat in ipairs(INTERNAL_PATTERNS) do
    if msg:find(pat) then
      local fname = msg:match("bad argument #%d+ to '([%w_%.?]+)'")
      -- a library function naming itself (torch.max's 'max' is not math.max)
      if fname and (not BUILTINS[fname] or library_name(fname)) then return nil end
      return pat
    end
  end
  return nil
end

-- Normalises a message for "distinct" counting: drops positions, numbers and addresses.
local function normalise(msg)
  msg = tostring(msg):gsub("\n.*", ""):gsub("no overload accepts .*", "no overload accepts (...)")
  msg = msg:gsub("%b[]", "[..]"):gsub("%b''", "'..'"):gsub("got %w+", "got T")
  msg = msg:gsub("^[^:]*%.lua:%d+: ", ""):gsub("0x%x+", "ADDR"):gsub("%-?%d+%.?%d*e?[%+%-]?%d*", "N")
  return msg:sub(1, 160)
end

---------------------------------------------------------------- the loop
local trace = opt.trace and assert(io.open(opt.trace, "w"))
local function note(s)
  if trace then trace:write(s, "\n"); trace:flush() end
  if opt.progress then
    local f = io.open(opt.progress, "w")
    if f then f:write(s, "\n"); f:close() end
  end
end

local counts = { calls = 0, ok = 0, errors = 0 }
local distinct, ndistinct = {}, 0
local internal, ninternal, internal_calls = {}, 0, 0
local called = {}
local receiver_misuse = 0
local inconsistent = {}  -- op name -> example: a failed call left a tensor sized past its storage
local slow = {}  -- the slowest calls, for the report

local function describe_args(a, n, depth)
  local parts = {}
  for i = 1, n do
    local v = a[i]
    local s
    if type(v) == "table" and getmetatable(v) == nil and not depth then
      local inner, keys = {}, {}
      for k in pairs(v) do keys[#keys + 1] = k end
      for j, k in ipairs(keys) do
        if j > 6 then break end
        inner[#inner + 1] = (type(k) == "number" and "" or tostring(k) .. "=") .. describe_args({ v[k] }, 1, true)
      end
      s = "{" .. table.concat(inner, ", ") .. "}"
    elseif torch.is_tensor(v) then
      local ok, d = pcall(function()
        if v:is_freed() then return "freed" end
        return ("T%s%s"):format(table.concat(v:size(), "x"), tostring(v.dtype):gsub("torch%.", ":"))
      end)
      s = ok and d or "tensor"
    elseif type(v) == "table" then s = "{..}"
    else s = tostring(v) end
    parts[#parts + 1] = s
  end
  return table.concat(parts, ", ")
end

local function keep_result(v)
  if torch.is_tensor(v) and #pool < 60 then
    local ok, n = pcall(function() return v:numel() end)
    if ok and n <= 100000 and chance(0.2) then pool[#pool + 1] = v end
  end
end

-- --canaries: a write past either end of a CPU tensor's memory, caught after the call that made it
local canary_info = ffi.new("int64_t[2]")
local function check_canaries(tgt, a, n)
  if ffi.C.lt_debug_check_canaries(canary_info) == 0 then return end
  io.stdout:write(("api_fuzz: memory written out of bounds (a block of %d bytes, at offset %d) by call %d: %s %s(%s)\n")
    :format(tonumber(canary_info[0]), tonumber(canary_info[1]), counts.calls, tgt.kind, tgt.name, describe_args(a, n)))
  io.stdout:flush()
  os.exit(3)
end

local default_dtype = torch.get_default_dtype()
ffi.cdef[[
  struct lt_fuzz_timespec { long tv_sec; long tv_nsec; };
  int clock_gettime(int clk, struct lt_fuzz_timespec *ts);
  unsigned int alarm(unsigned int seconds);
]]
local alarm = ffi.C.alarm
local call_limit = math.max(1, math.floor(opt.call_limit or 60))
local ts = ffi.new("struct lt_fuzz_timespec")
local function now() ffi.C.clock_gettime(1, ts); return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9 end
local t0 = now()
local deadline = opt.seconds
local ti = 0
while true do
  if now() - t0 >= deadline or (opt.calls and counts.calls >= opt.calls) then break end
  for _ = 1, 50 do
    ti = ti % #targets + 1
    local tgt = chance(0.7) and targets[ti] or pick(targets)
    local a, n = {}, 0
    local as_method = tgt.kind == "method"
    if as_method or tgt.kind == "index" or tgt.kind == "operator" then
      a[1] = chance(0.95) and any_tensor() or random_value(1)
      -- a raw FFI array (int[4]) indexed out of bounds reads any memory: LuaJIT's arrays are
      -- unchecked by design, and that is not ltorch's API
      if tgt.kind == "index" and type(a[1]) == "cdata" and not torch.is_tensor(a[1]) then a[1] = any_tensor() end
      n = 1
    end
    local extra
    if (tgt.kind == "function" or tgt.kind == "method") and chance(0.6) then extra = schema_args(tgt.name, as_method) end
    if not extra then
      extra = {}
      for i = 1, random(0, 4) do extra[i] = random_value(0) end
      if tgt.kind == "operator" then extra = { chance(0.8) and any_tensor() or random_value(0) } end
    end
    local m = table.maxn(extra)
    for i = 1, m do a[n + i] = extra[i] end
    n = n + m
    if small_ints(tgt.name) then
      local function small(v)
        if type(v) == "number" and v == v and math.abs(v) > 64 and v ~= math.huge and v ~= -math.huge then
          return pick(SMALL)
        end
        return v
      end
      for i = 1, n do
        if type(a[i]) == "table" and getmetatable(a[i]) == nil then
          for k, v in pairs(a[i]) do a[i][k] = small(v) end
        else
          a[i] = small(a[i])
        end
      end
    end
    if finite_only(tgt.name) then
      local function finite(v)
        if not torch.is_tensor(v) then return v end
        local ok, bad = pcall(function()
          return (v:is_floating_point() or v:is_complex()) and not torch.isfinite(v):all():item()
        end)
        if not ok or not bad then return v end
        local ok2, r = pcall(v.nan_to_num, v, 0, 1, -1)
        return ok2 and r or 0
      end
      for i = 1, n do
        if type(a[i]) == "table" and getmetatable(a[i]) == nil then
          for k, v in pairs(a[i]) do a[i][k] = finite(v) end
        else
          a[i] = finite(a[i])
        end
      end
    end
    note(("%s %s(%s)"):format(tgt.kind, tgt.name, describe_args(a, n)))
    counts.calls = counts.calls + 1
    called[tgt.name] = true
    local c0 = now()
    alarm(call_limit)   -- the watchdog: SIGALRM ends the process, the progress file names the call
    local ok, r1, r2 = pcall(tgt.fn, unpack(a, 1, n))
    alarm(0)
    if opt.canaries then check_canaries(tgt, a, n) end
    local dt = now() - c0
    if dt > 0.25 then slow[#slow + 1] = { dt, ("%s %s(%s)"):format(tgt.kind, tgt.name, describe_args(a, n)) } end
    if ok then
      counts.ok = counts.ok + 1
      keep_result(r1); keep_result(r2)
    else
      counts.errors = counts.errors + 1
      local key = normalise(r1)
      if not distinct[key] then distinct[key] = true; ndistinct = ndistinct + 1 end
      local why = is_internal(r1)
      if why and as_method and not torch.is_tensor(a[1]) then
        -- Tensor.X(non-tensor): only reachable by calling the method table explicitly, never
        -- through x:X(); counted apart (receiver), not as a library leak.
        receiver_misuse = receiver_misuse + 1
        why = nil
      end
      if why then
        internal_calls = internal_calls + 1
        local ikey = tgt.name .. ": " .. key
        if not internal[ikey] then
          ninternal = ninternal + 1
          internal[ikey] = { count = 0, example = ("%s %s(%s)"):format(tgt.kind, tgt.name, describe_args(a, n)),
            message = tostring(r1):sub(1, 400) }
        end
        internal[ikey].count = internal[ikey].count + 1
      elseif opt.verbose then
        print(("[error] %s %s: %s"):format(tgt.kind, tgt.name, key))
      end
    end
    -- libtorch 1.13 resizes an out=/in-place tensor before allocating its new storage; when
    -- that allocation fails (our 64 MiB cap) the tensor keeps the huge sizes over its old
    -- storage, and any later read runs off the end (seen: std_mean on a "2^53-element" tensor
    -- segfaulted). PyTorch 1.13.1 leaves that state too; ltorch's lt_op_call puts the old sizes
    -- back (bindings/lt_dispatch.cpp, restore_written). This check stays as the detector: any
    -- tensor still sized past 2^24 elements after a failed call is reported and dropped.
    if not ok then
      local seen = {}
      for i = 1, n do  -- the arguments, and the tensors inside table arguments (out = t)
        if type(a[i]) == "table" and getmetatable(a[i]) == nil then
          for _, x in pairs(a[i]) do seen[#seen + 1] = x end
        else
          seen[#seen + 1] = a[i]
        end
      end
      for _, v in ipairs(seen) do
        if torch.is_tensor(v) then
          local okn, numel = pcall(function() return v:numel() end)
          if okn and numel > 2 ^ 24 then
            local key = tgt.name
            if not inconsistent[key] then inconsistent[key] = ("%s %s"):format(tgt.kind, describe_args(a, n)) end
            for j = #pool, 1, -1 do if pool[j] == v then table.remove(pool, j) end end
            pcall(v.free, v)
          end
        end
      end
    end
    -- global state a call may have changed
    if not torch.is_grad_enabled() then torch.set_grad_enabled(true) end
    if torch.get_default_dtype() ~= default_dtype then torch.set_default_dtype(default_dtype) end
    if torch.is_anomaly_enabled() then torch.set_detect_anomaly(false) end
  end
  if counts.calls % 400 == 0 then rebuild_pool() end
  collectgarbage("step", 200)
end
local elapsed = now() - t0
note("done")

do
  local keys = {}
  for k in pairs(inconsistent) do keys[#keys + 1] = k end
  table.sort(keys)
  if #keys > 0 then
    print(("api_fuzz: %d op(s) left an argument sized past its storage after failing (libtorch resize-before-allocate):")
      :format(#keys))
    for _, k in ipairs(keys) do print(("  %s: %s"):format(k, inconsistent[k]:sub(1, 160))) end
  end
end
table.sort(slow, function(x, y) return x[1] > y[1] end)
for i = 1, math.min(#slow, opt.verbose and 30 or 5) do
  print(("api_fuzz: slow call %.2f s: %s"):format(slow[i][1], slow[i][2]:sub(1, 200)))
end
local ncalled = 0
for _ in pairs(called) do ncalled = ncalled + 1 end
if ninternal > 0 then
  print(("api_fuzz: internal errors (library bugs: Lua errors leaked from inside ltorch):"))
  local keys = {}
  for k in pairs(internal) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local e = internal[k]
    print(("  [x%d] %s\n        e.g. %s\n        %s"):format(e.count, k, e.example, e.message:gsub("\n", "\n        ")))
  end
end
print(("api_fuzz: %d targets (%d excluded by name), %d called"):format(#targets, (function()
  local n = 0 for _ in pairs(EXCLUDE) do n = n + 1 end return n end)(), ncalled))
print(("api_fuzz: %d calls of Tensor.X with a non-tensor receiver raised Lua errors (not counted)"):format(receiver_misuse))
print(("api_fuzz: %d calls (%d names) in %.0f s, seed %d: %d distinct errors, %d internal (%d calls), %d ok"):format(
  counts.calls, ncalled, elapsed, opt.seed, ndistinct, ninternal, internal_calls, counts.ok))
os.exit((opt.strict and ninternal > 0) and 1 or 0)
