--[[
  spec/torch/cuda_api_spec.lua — torch.backends' flags and torch.cuda's device, stream and graph
  API (lua/torch/_backend_flags.lua, _cuda_streams.lua, _cuda_info.lua, _cuda_graphs.lua; bindings
  lt_cuda.cpp, lt_cuda_graph.cpp) against PyTorch on the same libtorch (the .venv's, no GPU here).

  Covers: every flag's default equals PyTorch's; each flag set reads back, and setting one changes
  libtorch's context as PyTorch's does (matmul.allow_tf32 = true makes the float32 matmul
  precision "high"); the reduced-precision reductions' {allow, split_k} form; an unknown flag
  name assigned or read, and a value of the wrong type, are errors; cudnn.flags(opts, fn) sets
  and restores even when fn raises; the preferred linalg / BLAS libraries and SDPA switches set
  and read back. Without a GPU each torch.cuda call does what PyTorch's does: the same value
  (is_bf16_supported, is_tf32_supported, is_initialized false; Event() made lazily) or the same
  error (get_device_name / properties / capability, mem_get_info, init, current_stream,
  Stream(), CUDAGraph(), make_graphed_callables; memory_summary raises), and bad arguments are
  clear errors at the caller's line. With a GPU the stream, event and property checks run.

  Run: build/ltorch /usr/bin/busted spec/torch/cuda_api_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"

local has_gpu = torch.cuda.is_available()

local CUDNN = { "enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit", "fp32_precision" }
local MATMUL = { "allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_fp16_reduced_precision_reduction_split_k",
  "allow_bf16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction_split_k", "allow_fp16_accumulation",
  "fp32_precision" }
local MKLDNN = { "enabled", "deterministic", "fp32_precision" }

local function snapshot()
  local s = { cudnn = {}, matmul = {}, mkldnn = {} }
  for _, k in ipairs(CUDNN) do s.cudnn[k] = torch.backends.cudnn[k] end
  for _, k in ipairs(MATMUL) do s.matmul[k] = torch.backends.cuda.matmul[k] end
  for _, k in ipairs(MKLDNN) do s.mkldnn[k] = torch.backends.mkldnn[k] end
  s.fp32_precision = torch.backends.fp32_precision
  s.matmul_precision = torch.get_float32_matmul_precision()
  return s
end

describe("torch.backends flags", function()
  local ref, initial
  setup(function()
    initial = snapshot()
    ref = pytorch.run [[
b = torch.backends
def snap():
    return {
      "cudnn": {k: getattr(b.cudnn, k) for k in ["enabled", "benchmark", "deterministic", "allow_tf32",
                                                  "benchmark_limit", "fp32_precision"]},
      "matmul": {k: getattr(b.cuda.matmul, k) for k in ["allow_tf32", "allow_fp16_reduced_precision_reduction",
        "allow_fp16_reduced_precision_reduction_split_k", "allow_bf16_reduced_precision_reduction",
        "allow_bf16_reduced_precision_reduction_split_k", "allow_fp16_accumulation", "fp32_precision"]},
      "mkldnn": {k: getattr(b.mkldnn, k) for k in ["enabled", "deterministic", "fp32_precision"]},
      "fp32_precision": b.fp32_precision,
      "matmul_precision": torch.get_float32_matmul_precision(),
    }
out = {"initial": snap()}
b.cuda.matmul.allow_tf32 = True
out["tf32_precision"] = torch.get_float32_matmul_precision()
b.cuda.matmul.allow_tf32 = False
b.cuda.matmul.allow_fp16_reduced_precision_reduction = (False, False)
out["fp16_pair"] = [b.cuda.matmul.allow_fp16_reduced_precision_reduction,
                    b.cuda.matmul.allow_fp16_reduced_precision_reduction_split_k]
b.cuda.matmul.allow_fp16_reduced_precision_reduction = (False, True)
out["fp16_pair_splitk"] = [b.cuda.matmul.allow_fp16_reduced_precision_reduction,
                           b.cuda.matmul.allow_fp16_reduced_precision_reduction_split_k]
b.cuda.matmul.allow_fp16_reduced_precision_reduction = True
b.cudnn.allow_tf32 = False
out["conv_precision_no_tf32"] = b.cudnn.conv.fp32_precision
b.cudnn.allow_tf32 = True
out["linalg"] = str(b.cuda.preferred_linalg_library()).split(".")[-1].lower()
out["blas"] = str(b.cuda.preferred_blas_library()).split(".")[-1].lower()
out["sdp"] = [b.cuda.flash_sdp_enabled(), b.cuda.mem_efficient_sdp_enabled(), b.cuda.math_sdp_enabled(),
              b.cuda.cudnn_sdp_enabled(), b.cuda.fp16_bf16_reduction_math_sdp_allowed()]
out["mkldnn_available"] = b.mkldnn.is_available()
out["openmp"] = b.openmp.is_available()
out["mkl"] = b.mkl.is_available()
print(json.dumps(out))
]]
  end)

  teardown(function()
    for k, v in pairs(initial.cudnn) do torch.backends.cudnn[k] = v end
    for _, k in ipairs { "allow_tf32", "allow_fp16_accumulation", "fp32_precision" } do
      torch.backends.cuda.matmul[k] = initial.matmul[k]
    end
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = {
      initial.matmul.allow_fp16_reduced_precision_reduction, initial.matmul.allow_fp16_reduced_precision_reduction_split_k }
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = {
      initial.matmul.allow_bf16_reduced_precision_reduction, initial.matmul.allow_bf16_reduced_precision_reduction_split_k }
    for k, v in pairs(initial.mkldnn) do torch.backends.mkldnn[k] = v end
    torch.set_float32_matmul_precision(initial.matmul_precision)
  end)

  it("start with PyTorch's values", function()
    assert.are.same(ref.initial, initial)
  end)

  it("read back what was set, in libtorch's context", function()
    for _, k in ipairs { "enabled", "benchmark", "deterministic", "allow_tf32" } do
      local before = torch.backends.cudnn[k]
      torch.backends.cudnn[k] = not before
      assert.are.equal(not before, torch.backends.cudnn[k], "cudnn." .. k)
      torch.backends.cudnn[k] = before
      assert.are.equal(before, torch.backends.cudnn[k], "cudnn." .. k)
    end
    torch.backends.cudnn.benchmark_limit = 3
    assert.are.equal(3, torch.backends.cudnn.benchmark_limit)
    torch.backends.cudnn.benchmark_limit = initial.cudnn.benchmark_limit
    torch.backends.mkldnn.deterministic = true
    assert.is_true(torch.backends.mkldnn.deterministic)
    torch.backends.mkldnn.deterministic = false
    torch.backends.cuda.matmul.allow_fp16_accumulation = true
    assert.is_true(torch.backends.cuda.matmul.allow_fp16_accumulation)
    torch.backends.cuda.matmul.allow_fp16_accumulation = false
  end)

  it("change the float32 matmul precision as PyTorch's do", function()
    torch.backends.cuda.matmul.allow_tf32 = true
    assert.are.equal(ref.tf32_precision, torch.get_float32_matmul_precision())
    assert.is_true(torch.backends.cuda.matmul.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = false
    assert.are.equal(ref.initial.matmul_precision, torch.get_float32_matmul_precision())
    torch.backends.cudnn.allow_tf32 = false
    assert.are.equal(ref.conv_precision_no_tf32, torch.backends.cudnn.conv.fp32_precision)
    torch.backends.cudnn.allow_tf32 = true
  end)

  it("take the reduced-precision reduction as a boolean or an {allow, split_k} pair", function()
    local m = torch.backends.cuda.matmul
    m.allow_fp16_reduced_precision_reduction = { false, false }
    assert.are.same(ref.fp16_pair, { m.allow_fp16_reduced_precision_reduction, m.allow_fp16_reduced_precision_reduction_split_k })
    m.allow_fp16_reduced_precision_reduction = { false, true }
    assert.are.same(ref.fp16_pair_splitk,
      { m.allow_fp16_reduced_precision_reduction, m.allow_fp16_reduced_precision_reduction_split_k })
    m.allow_fp16_reduced_precision_reduction = true
    assert.is_true(m.allow_fp16_reduced_precision_reduction and m.allow_fp16_reduced_precision_reduction_split_k)
    assert.error_matches(function() m.allow_fp16_reduced_precision_reduction = { 1 } end, "expects a boolean", 1, true)
    assert.error_matches(function() m.allow_fp16_reduced_precision_reduction_split_k = false end, "read-only", 1, true)
  end)

  it("refuse an unknown name and a value of the wrong type, at the caller's line", function()
    local ok, err = pcall(function() torch.backends.cudnn.benchmarkk = true end)
    assert.is_false(ok)
    assert.matches("cuda_api_spec.lua:%d+: torch.backends.cudnn has no flag 'benchmarkk'", err)
    assert.error_matches(function() torch.backends.cuda.matmul.allow_tf23 = true end,
      "torch.backends.cuda.matmul has no flag 'allow_tf23'", 1, true)
    assert.error_matches(function() return torch.backends.cudnn.benchmark_x end,
      "torch.backends.cudnn has no attribute 'benchmark_x'", 1, true)
    ok, err = pcall(function() torch.backends.cudnn.benchmark = 1 end)
    assert.is_false(ok)
    assert.matches("cuda_api_spec.lua:%d+: torch.backends.cudnn.benchmark expects a boolean, got number", err)
    assert.error_matches(function() torch.backends.cudnn.fp32_precision = "fast" end,
      "expected 'ieee', 'tf32', 'bf16' or 'none', got 'fast'", 1, true)
    assert.error_matches(function() torch.backends.cudnn.benchmark_limit = -1 end, "non-negative integer", 1, true)
    assert.is_false(torch.backends.cudnn.benchmark)
  end)

  it("set flags for a region with flags(opts, fn), restored when fn raises", function()
    local seen = torch.backends.cudnn.flags({ enabled = true, benchmark = true }, function()
      return torch.backends.cudnn.benchmark
    end)
    assert.is_true(seen)
    assert.is_false(torch.backends.cudnn.benchmark)
    assert.has_error(function()
      torch.backends.cudnn.flags({ enabled = true, deterministic = true }, function() error("inside") end)
    end)
    assert.is_false(torch.backends.cudnn.deterministic)
    assert.is_true(torch.backends.cudnn.enabled)
    assert.error_matches(function() torch.backends.cudnn.flags({ benchmarkk = true }, function() end) end,
      "unknown flag 'benchmarkk'", 1, true)
    local old = torch.backends.cudnn.set_flags({ _benchmark = true })
    assert.is_false(old.benchmark)
    assert.is_true(torch.backends.cudnn.benchmark)
    torch.backends.cudnn.benchmark = false
  end)

  it("switch the preferred libraries and the SDPA kernels as PyTorch's", function()
    local cuda = torch.backends.cuda
    assert.are.equal(ref.linalg, cuda.preferred_linalg_library())
    assert.are.equal(ref.blas, cuda.preferred_blas_library())
    assert.are.equal("magma", cuda.preferred_linalg_library("magma"))
    assert.are.equal("magma", cuda.preferred_linalg_library())
    cuda.preferred_linalg_library(ref.linalg)
    assert.error_matches(function() cuda.preferred_linalg_library("lapack") end, "unknown backend 'lapack'", 1, true)
    assert.are.same(ref.sdp, { cuda.flash_sdp_enabled(), cuda.mem_efficient_sdp_enabled(), cuda.math_sdp_enabled(),
      cuda.cudnn_sdp_enabled(), cuda.fp16_bf16_reduction_math_sdp_allowed() })
    cuda.enable_flash_sdp(false)
    assert.is_false(cuda.flash_sdp_enabled())
    cuda.enable_flash_sdp(ref.sdp[1])
    assert.error_matches(function() cuda.enable_math_sdp("yes") end, "boolean expected", 1, true)
    assert.are.equal(ref.mkldnn_available, torch.backends.mkldnn.is_available())
    assert.are.equal(ref.openmp, torch.backends.openmp.is_available())
    assert.are.equal(ref.mkl, torch.backends.mkl.is_available())
  end)
end)

describe("torch.cuda without a GPU", function()
  if has_gpu then
    it("(a GPU is visible)", function() pending("the no-GPU answers are checked on a machine without one") end)
    return
  end
  local ref
  setup(function()
    ref = pytorch.run [[
def attempt(f):
    try:
        return {"value": f()}
    except Exception as e:
        return {"error": str(e).split("\n")[0]}
c = torch.cuda
print(json.dumps({
  "name": attempt(lambda: c.get_device_name()),
  "props": attempt(lambda: c.get_device_properties(0).name),
  "capability": attempt(lambda: list(c.get_device_capability())),
  "mem": attempt(lambda: list(c.mem_get_info())),
  "init": attempt(lambda: c.init()),
  "current_stream": attempt(lambda: str(c.current_stream())),
  "peer": attempt(lambda: c.can_device_access_peer(0, 1)),
  "fraction_get": attempt(lambda: c.get_per_process_memory_fraction()),
  "fraction_set": attempt(lambda: c.set_per_process_memory_fraction(0.5)),
  "sync_get": attempt(lambda: c.get_sync_debug_mode()),
  "sync_set": attempt(lambda: c.set_sync_debug_mode("warn")),
  "reset_accumulated": attempt(lambda: c.reset_accumulated_memory_stats()),
  "nested": c.memory_stats_as_nested_dict(),
  "bf16": c.is_bf16_supported(), "bf16_strict": c.is_bf16_supported(False), "tf32": c.is_tf32_supported(),
  "initialized": c.is_initialized(),
  "graph": attempt(lambda: str(c.CUDAGraph())),
  "summary": attempt(lambda: c.memory_summary()),
  "event": attempt(lambda: str(c.Event(enable_timing=True))),
}))
]]
  end)

  local function msg(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return err
  end

  -- Built without the CUDA runtime's headers (no toolkit: a bare Debian), the calls that need
  -- them (bindings/lt_cuda_graph.cpp) raise ltorch's own error naming what the build lacks.
  local has_graphs do
    local ffi = require "ffi"
    local out = ffi.new("int[1]")
    assert(require("torch._C").C.lt_cuda_has_graphs(out) == 0)
    has_graphs = out[0] == 1
  end
  local NO_HEADERS = "ltorch was built without the CUDA runtime's headers"
  local function pytorch_error(err, want, what)
    if not has_graphs and err:find(NO_HEADERS, 1, true) then
      assert.is_truthy(err:find("then rebuild", 1, true), what .. ": " .. err)
      return
    end
    assert.is_truthy(err:find(want, 1, true), what .. ": " .. err)
  end

  it("raises PyTorch's error for the device's properties and memory", function()
    for key, f in pairs {
      name = function() torch.cuda.get_device_name() end,
      props = function() torch.cuda.get_device_properties(0) end,
      capability = function() torch.cuda.get_device_capability() end,
      mem = function() torch.cuda.mem_get_info() end,
      init = function() torch.cuda.init() end,
      current_stream = function() torch.cuda.current_stream() end,
      peer = function() torch.cuda.can_device_access_peer(0, 1) end,
      fraction_get = function() torch.cuda.get_per_process_memory_fraction() end,
      fraction_set = function() torch.cuda.set_per_process_memory_fraction(0.5) end,
      sync_get = function() torch.cuda.get_sync_debug_mode() end,
      sync_set = function() torch.cuda.set_sync_debug_mode("warn") end,
      reset_accumulated = function() torch.cuda.reset_accumulated_memory_stats() end,
    } do
      assert.is_not_nil(ref[key].error, key .. ": PyTorch raised")
      local err = msg(f)
      pytorch_error(err, ref[key].error, key)
      assert.matches("cuda_api_spec.lua:%d+:", err)
    end
  end)

  it("answers PyTorch's values for the capability queries", function()
    assert.are.equal(ref.bf16, torch.cuda.is_bf16_supported())
    assert.are.equal(ref.bf16_strict, torch.cuda.is_bf16_supported(false))
    assert.are.equal(ref.tf32, torch.cuda.is_tf32_supported())
    assert.are.equal(ref.initialized, torch.cuda.is_initialized())
    assert.error_matches(function() torch.cuda.is_bf16_supported(1) end, "must be bool", 1, true)
  end)

  it("makes an Event lazily and refuses to record it, as PyTorch", function()
    assert.is_not_nil(ref.event.value)
    local e = torch.cuda.Event({ enable_timing = true })
    assert.are.equal(ref.event.value, tostring(e))
    assert.is_true(e:query())
    assert.has_error(function() e:record() end)
    assert.error_matches(function() torch.cuda.Event({ blocking = true }) end, "not supported", 1, true)
    assert.error_matches(function() torch.cuda.Event({ enable_timng = true }) end, "enable_timng", 1, true)
  end)

  it("raises PyTorch's error for a CUDA graph", function()
    assert.is_not_nil(ref.graph.error)
    local err = msg(function() torch.cuda.CUDAGraph() end)
    pytorch_error(err, ref.graph.error, "CUDAGraph")
    err = msg(function() torch.cuda.make_graphed_callables(function(x) return x * 2 end, { torch.ones(2) }) end)
    pytorch_error(err, ref.graph.error, "make_graphed_callables")
    assert.matches("^[^\n]*cuda_api_spec.lua:%d+:", err)
    -- PyTorch's tuple form: a table of callables and a table of their sample lists
    err = msg(function()
      torch.cuda.make_graphed_callables({ function(x) return x * 2 end, torch.nn.Linear(2, 2) },
        { { torch.ones(2) }, { torch.ones(1, 2) } })
    end)
    pytorch_error(err, ref.graph.error, "make_graphed_callables")
    if has_graphs then
      local h = torch.cuda.graph_pool_handle()
      assert.are.equal("number", type(h[1]))
      assert.are.equal("number", type(h[2]))
    end
  end)

  it("raises for memory_summary, as PyTorch's does before CUDA has allocated", function()
    assert.is_not_nil(ref.summary.error)
    assert.error_matches(function() torch.cuda.memory_summary() end, "allocated_bytes.all.current", 1, true)
    assert.are.same({}, ref.nested)
    assert.are.same({}, torch.cuda.memory_stats_as_nested_dict())
  end)

  it("checks the arguments of the stream, device and graph functions", function()
    assert.error_matches(function() torch.cuda.stream(nil, 5) end,
      "bad argument #2 to 'cuda.stream' (function expected, got number)", 1, true)
    assert.are.equal(7, torch.cuda.stream(nil, function(a) return a + 1 end, 6))   -- stream(None): as is
    assert.error_matches(function() torch.cuda.stream(5, function() end) end, "torch.cuda.Stream expected", 1, true)
    assert.error_matches(function() torch.cuda.get_device_properties("cpu") end,
      "cuda.get_device_properties: expected a CUDA device, got 'cpu'", 1, true)
    assert.error_matches(function() torch.cuda.graph(torch.ones(1), function() end) end,
      "bad argument #1 to 'cuda.graph' (torch.cuda.CUDAGraph expected, got Tensor)", 1, true)
    assert.are.equal(3, torch.cuda.device(nil, function() return 3 end))
    assert.are.equal(4, torch.cuda.device_of(torch.ones(1), function() return 4 end))   -- a CPU tensor: as is
    assert.error_matches(function() torch.cuda.make_graphed_callables({ function() end }, {}) end,
      "with a table of 1 callables, sample_args must be a table of 1 tables of Tensors", 1, true)
    assert.error_matches(function() torch.cuda.make_graphed_callables({ function() end, 3 }, { {}, {} }) end,
      "callables[2] must be a function or an nn.Module, got number", 1, true)
    local hooked = torch.nn.Linear(2, 2)
    hooked:register_forward_hook(function() end)
    assert.error_matches(function() torch.cuda.make_graphed_callables(hooked, { torch.ones(1, 2) }) end,
      "Modules must not have hooks registered at the time they are passed", 1, true)
  end)
end)

describe("torch.cuda on a GPU", function()
  it("reports the device, orders work with streams and times it with events", function()
    if not has_gpu then pending("no CUDA device: spec/gpu/cuda_graphs_spec.lua runs these on the GPU machine") return end
    local p = torch.cuda.get_device_properties(0)
    assert.are.equal(p.name, torch.cuda.get_device_name(0))
    local major, minor = torch.cuda.get_device_capability(0)
    assert.are.same({ p.major, p.minor }, { major, minor })
    local free, total = torch.cuda.mem_get_info()
    assert.is_true(free > 0 and free <= total and total == p.total_memory)
    local s = torch.cuda.Stream()
    local start, stop = torch.cuda.Event({ enable_timing = true }), torch.cuda.Event({ enable_timing = true })
    local y = torch.cuda.stream(s, function()
      assert.are.equal(s, torch.cuda.current_stream())
      start:record()
      local r = torch.ones(256, 256, { device = "cuda" }):matmul(torch.ones(256, 256, { device = "cuda" }))
      stop:record()
      return r
    end)
    assert.are.equal(torch.cuda.default_stream(), torch.cuda.current_stream())
    torch.cuda.current_stream():wait_stream(s)
    stop:synchronize()
    assert.is_true(stop:query() and s:query())
    assert.is_true(start:elapsed_time(stop) >= 0)
    assert.are.equal(256, y[1][1]:item())
  end)
end)
